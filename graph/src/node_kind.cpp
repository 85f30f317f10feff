// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/graph/node_kind.hpp>

#include <array>
#include <utility>

namespace weft {

namespace {

constexpr std::array<std::pair<NodeKind, const char*>, 7> kNodeKinds{{
    {NodeKind::Compute, "compute"},
    {NodeKind::Copy, "copy"},
    {NodeKind::Reduce, "reduce"},
    {NodeKind::Sync, "sync"},
    {NodeKind::Conditional, "conditional"},
    {NodeKind::Subgraph, "subgraph"},
    {NodeKind::Condition, "condition"},
}};

}  // namespace

const char* to_string(ExecutionKind kind) noexcept { return kind == ExecutionKind::Gpu ? "gpu" : "cpu"; }

const char* to_string(NodeKind kind) noexcept {
  for (const auto& [k, name] : kNodeKinds)
    if (k == kind) return name;
  return "unknown";
}

std::optional<ExecutionKind> execution_kind_from_string(std::string_view name) noexcept {
  if (name == "cpu") return ExecutionKind::Cpu;
  if (name == "gpu") return ExecutionKind::Gpu;
  return std::nullopt;
}

std::optional<NodeKind> node_kind_from_string(std::string_view name) noexcept {
  for (const auto& [k, text] : kNodeKinds)
    if (name == text) return k;
  return std::nullopt;
}

}  // namespace weft

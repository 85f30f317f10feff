// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The vocabulary of graph nodes: where a node runs and what it is.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <weft/runtime/job.hpp>

namespace weft {

// Where a node's work runs (Ripple's execution kinds): Cpu nodes on any
// worker, Gpu nodes on GPU-priority workers.
enum class ExecutionKind : std::uint8_t { Cpu, Gpu };

enum class NodeKind : std::uint8_t {
  Compute,      // a callable (emplace, then)
  Copy,         // a padding or data copy (tensor operations)
  Reduce,       // a partition's part of a reduction, or its finishing node
  Sync,         // a synchronising node (sync): after everything before it
  Conditional,  // evaluates the graph's predicate after each run (conditional)
  Subgraph,     // runs a subgraph as one node (a conditional one, or one a branch chooses)
  Condition,    // returns which one of its successors runs next (branch); its edges are weak
};

constexpr Domain domain_of(ExecutionKind kind) noexcept {
  return kind == ExecutionKind::Gpu ? Domain::Gpu : Domain::Cpu;
}

const char* to_string(ExecutionKind kind) noexcept;
const char* to_string(NodeKind kind) noexcept;
std::optional<ExecutionKind> execution_kind_from_string(std::string_view name) noexcept;
std::optional<NodeKind> node_kind_from_string(std::string_view name) noexcept;

}  // namespace weft

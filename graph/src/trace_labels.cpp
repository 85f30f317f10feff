// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "trace_labels.hpp"

#include <algorithm>

#include <weft/graph/node_kind.hpp>

namespace weft::detail {

TraceLabels::TraceLabels(const std::vector<NodeRecord>& nodes, const NodeNames& names,
                         std::vector<int> levels)
    : levels_(std::move(levels)) {
  kinds_.resize(nodes.size());
  bool placed = false;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const NodeRecord& node = nodes[i];
    const bool block_kernel = node.kind == NodeKind::Compute && node.split >= 0;
    kinds_[i] = block_kernel ? kSplit : static_cast<std::uint8_t>(node.kind);
    placed = placed || node.partition >= 0 || node.device >= 0;
  }
  if (placed) {
    placements_.reserve(nodes.size());
    for (const NodeRecord& node : nodes) placements_.emplace_back(node.partition, node.device);
  }
  std::size_t bytes = 0;
  for (const auto& entry : names.by_id()) bytes += entry.second.size() + 1;
  names_.reserve(bytes);
  named_.reserve(names.size());
  for (const auto& [id, name] : names.by_id()) {
    named_.emplace_back(id, names_.size());
    names_.insert(names_.end(), name.begin(), name.end());
    names_.push_back('\0');
  }
}

void TraceLabels::attach(const WorkGraphPolicy<int>& policy, const void* graph) {
  policy_ = &policy;
  policy.set_node_labeler(graph, &TraceLabels::make, this);
}

std::vector<NodeLabel> TraceLabels::make(const void* self) {
  const auto& me = *static_cast<const TraceLabels*>(self);
  const std::vector<int> levels = me.levels_.empty() ? me.longest_paths() : me.levels_;
  std::vector<NodeLabel> labels(me.kinds_.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::uint8_t kind = me.kinds_[i];
    labels[i].kind = kind == kSplit ? "split" : to_string(static_cast<NodeKind>(kind));
    labels[i].level = levels[i];
    if (!me.placements_.empty()) std::tie(labels[i].partition, labels[i].device) = me.placements_[i];
  }
  for (const auto& [node, offset] : me.named_)
    labels[static_cast<std::size_t>(node)].name = &me.names_[offset];
  return labels;
}

// Each node's longest path from a root, over the successor rows (a graph
// without condition nodes: every edge counts, and lowering refused cycles).
std::vector<int> TraceLabels::longest_paths() const {
  const Crs<int>& rows = policy_->graph();
  const auto n = static_cast<std::size_t>(rows.num_rows());
  std::vector<int> waiting(n, 0);
  for (const int s : rows.entries) ++waiting[static_cast<std::size_t>(s)];
  std::vector<int> level(n, 0);
  std::vector<int> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.push_back(static_cast<int>(i));
  while (!ready.empty()) {
    const int v = ready.back();
    ready.pop_back();
    for (int k = rows.row_begin(v); k < rows.row_end(v); ++k) {
      const auto s = static_cast<std::size_t>(rows.entries[static_cast<std::size_t>(k)]);
      level[s] = std::max(level[s], level[static_cast<std::size_t>(v)] + 1);
      if (--waiting[s] == 0) ready.push_back(static_cast<int>(s));
    }
  }
  return level;
}

}  // namespace weft::detail

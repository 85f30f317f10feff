// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Subgraphs (Ripple section 5.3.5): inlined into the graph, or, for a
// conditional one or one a branch chooses, one node that runs it.
#include <weft/graph/graph.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace weft {

Graph& Graph::add_subgraph(const Graph& subgraph, bool after_last) {
  runs_.refuse_changes_while_running("change");
  if (&subgraph == this) throw std::invalid_argument("Graph: a graph cannot contain itself as a subgraph");
  subgraph.validate();
  const std::vector<NodeId> predecessors = after_last ? cursor_.last_level : cursor_.previous_level;
  // A loop cannot be inlined; nor can a subgraph a condition node chooses,
  // which chooses one successor, not the subgraph's roots.
  const bool chosen = std::any_of(predecessors.begin(), predecessors.end(),
                                  [&](NodeId p) { return record(p).kind == NodeKind::Condition; });
  if (subgraph.is_conditional() || chosen) return add_subgraph_node(subgraph, predecessors, after_last);
  inline_subgraph(subgraph, predecessors, after_last);
  changed();
  return *this;
}

Graph& Graph::add_subgraph_node(const Graph& subgraph, const std::vector<NodeId>& predecessors,
                                bool after_last) {
  detail::NodeRecord node;
  node.kind = NodeKind::Subgraph;
  node.execution = ExecutionKind::Cpu;
  node.aux = static_cast<std::int32_t>(subgraphs_.size());
  subgraphs_.push_back(std::make_shared<const Graph>(subgraph));
  const NodeId id = append(node, predecessors);
  cursor_.close(id, 1, after_last);
  changed();
  return *this;
}

void Graph::inline_subgraph(const Graph& subgraph, const std::vector<NodeId>& predecessors, bool after_last) {
  for (const auto& [id, name] : subgraph.names_.by_id()) {
    if (names_.find(name)) {
      throw std::invalid_argument("Graph: the subgraph's node name '" + name + "' is already used here");
    }
  }
  const auto offset = static_cast<NodeId>(nodes_.size());
  std::vector<bool> has_predecessor(subgraph.nodes_.size(), false);
  for (const Edge& e : subgraph.edges_) has_predecessor[static_cast<std::size_t>(e.second)] = true;
  for (std::size_t i = 0; i < subgraph.nodes_.size(); ++i) {
    detail::NodeRecord node = subgraph.nodes_[i];
    if (node.split >= 0) node.split = split_index(subgraph.splits_[static_cast<std::size_t>(node.split)]);
    if (node.kind == NodeKind::Subgraph) {
      node.aux = static_cast<std::int32_t>(subgraphs_.size());
      subgraphs_.push_back(subgraph.subgraphs_[static_cast<std::size_t>(subgraph.nodes_[i].aux)]);
    } else if (node.aux >= 0) {
      node.aux = static_cast<std::int32_t>(stream_works_.size());
      stream_works_.push_back(subgraph.stream_works_[static_cast<std::size_t>(subgraph.nodes_[i].aux)]);
    }
    // Roots of the subgraph hang off our level (a root on a tensor
    // partition only off the nodes on its blocks and the untied ones,
    // section 5.3.5); the rest keep their edges. A node that may write a
    // block also waits for our padding copies still reading that block
    // (section 5.4; tensors are not recorded per node, so any tensor's).
    const auto fill = subgraph.fill_reads_.find(static_cast<NodeId>(i));
    const std::vector<std::int32_t>* fill_reads =
        fill == subgraph.fill_reads_.end() ? nullptr : &fill->second;
    std::vector<NodeId> before;
    if (!has_predecessor[i]) {
      for (NodeId p : predecessors)
        if (must_precede(p, node, fill_reads)) before.push_back(p);
    }
    if (node.partition >= 0 && node.kind != NodeKind::Copy) {
      for (const auto& [key, readers] : padding_.readers) {
        if (key.second == static_cast<std::size_t>(node.partition))
          before.insert(before.end(), readers.begin(), readers.end());
      }
    }
    std::sort(before.begin(), before.end());
    before.erase(std::unique(before.begin(), before.end()), before.end());
    const NodeId id = append(node, before);
    if (fill_reads) fill_reads_[id] = *fill_reads;
  }
  for (const Edge& e : subgraph.edges_) edges_.emplace_back(e.first + offset, e.second + offset);
  if (subgraph.ranks_.distributed()) {
    ranks_.adopt(subgraph.ranks_.group, "Graph: the subgraph");
    for (const std::string& t : subgraph.ranks_.tensors) ranks_.note_tensor(t);
    for (std::size_t i = 0; i < subgraph.ranks_.owner.size(); ++i)
      if (subgraph.ranks_.owner[i] >= 0)
        ranks_.set_owner(static_cast<NodeId>(i) + offset, subgraph.ranks_.owner[i]);
    for (detail::RankMessage message : subgraph.ranks_.messages) {
      message.node += offset;
      ranks_.messages.push_back(std::move(message));
    }
  }
  for (const auto& [id, name] : subgraph.names_.by_id()) names_.set(id + offset, name);
  callables_.share(subgraph.callables_);
  // Its padding copies that no node on their block waits for yet still
  // bind the nodes added after it (section 5.4).
  for (const auto& [key, readers] : subgraph.padding_.readers) {
    std::vector<NodeId>& pending = padding_.readers[key];
    for (NodeId r : readers) pending.push_back(r + offset);
  }
  std::vector<NodeId> level;
  for (NodeId id : subgraph.cursor_.last_level) level.push_back(id + offset);
  cursor_.close(level, offset, static_cast<NodeId>(subgraph.nodes_.size()), after_last);
}

}  // namespace weft

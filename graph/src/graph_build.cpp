// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Building a Graph: nodes, edges, levels of the builder, names.
#include <weft/graph/graph.hpp>
#include <weft/runtime/utf8.hpp>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace weft {

const detail::NodeRecord& Graph::record(NodeId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= nodes_.size()) {
    throw std::out_of_range("Graph: node " + std::to_string(id) + " outside [0, " +
                            std::to_string(nodes_.size()) + ")");
  }
  return nodes_[static_cast<std::size_t>(id)];
}

GraphNode Graph::node(NodeId id) const {
  const detail::NodeRecord& r = record(id);
  return GraphNode{std::string(names_.name(id)), r.kind, r.execution, r.device, r.partition,
                   ranks_.owner_of(id)};
}

Graph& Graph::on_rank(int rank) {
  runs_.refuse_changes_while_running("change");
  if (cursor_.added_count == 0) throw std::logic_error("Graph::on_rank: no node has been added yet");
  if (rank < 0)
    throw std::invalid_argument("Graph::on_rank: rank " + std::to_string(rank) + " (expected >= 0)");
  if (ranks_.group != nullptr && rank >= ranks_.group->size()) {
    throw std::invalid_argument("Graph::on_rank: rank " + std::to_string(rank) + " is not in " +
                                ranks_.group->describe());
  }
  for (NodeId id = cursor_.added_first; id < cursor_.added_first + cursor_.added_count; ++id) {
    const detail::NodeRecord& r = record(id);
    if (r.partition >= 0 || r.aux >= 0 || r.kind == NodeKind::Condition || r.kind == NodeKind::Conditional) {
      throw std::invalid_argument("Graph::on_rank: node " + std::to_string(id) +
                                  (r.partition >= 0
                                       ? " works on a tensor block, which runs on its owner"
                                       : " is a GPU, subgraph or condition node, which run on every rank"));
    }
  }
  for (NodeId id = cursor_.added_first; id < cursor_.added_first + cursor_.added_count; ++id)
    ranks_.set_owner(id, rank);
  changed();
  return *this;
}

Graph& Graph::rank_group(std::shared_ptr<RankGroup> group) {
  runs_.refuse_changes_while_running("change");
  if (group == nullptr) throw std::invalid_argument("Graph::rank_group: the group is null");
  ranks_.adopt(group, "Graph::rank_group");
  changed();
  return *this;
}

Graph::NodeId Graph::last() const {
  if (cursor_.added_count == 0) throw std::logic_error("Graph::last: no node has been added yet");
  return cursor_.added_first + cursor_.added_count - 1;
}

Graph::NodeId Graph::append(const detail::NodeRecord& node, const std::vector<NodeId>& predecessors) {
  const auto id = static_cast<NodeId>(nodes_.size());
  if (nodes_.size() >= static_cast<std::size_t>(std::numeric_limits<NodeId>::max())) {
    throw std::length_error("Graph: more than " + std::to_string(std::numeric_limits<NodeId>::max()) +
                            " nodes");
  }
  nodes_.push_back(node);
  for (NodeId p : predecessors) edges_.emplace_back(p, id);
  return id;
}

Graph& Graph::add_node(ExecutionKind kind, bool after_last, const WorkGraphNodeCall& call) {
  detail::NodeRecord node;
  node.call = call;
  node.execution = kind;
  const NodeId id = append(node, after_last ? cursor_.last_level : cursor_.previous_level);
  cursor_.close(id, 1, after_last);
  changed();
  return *this;
}

Graph& Graph::add_specs(std::vector<NodeSpec> specs, ExecutionKind kind, bool after_last) {
  detail::CallableStore& store = callables();
  const std::vector<NodeId> predecessors = after_last ? cursor_.last_level : cursor_.previous_level;
  const auto first = static_cast<NodeId>(nodes_.size());
  for (NodeSpec& spec : specs) {
    detail::NodeRecord node;
    node.execution = kind;
    if (spec.work.is_condition()) node.kind = NodeKind::Condition;
    node.call = store.adopt(std::move(spec.work));
    if (spec.stream_work) {  // on_gpu: always a GPU node, on its device
      node.execution = ExecutionKind::Gpu;
      node.device = spec.device;
      node.copy_stream = static_cast<std::int8_t>(spec.copy_stream);
      node.aux = static_cast<std::int32_t>(stream_works_.size());
      stream_works_.push_back(std::move(spec.stream_work));
    }
    append(node, predecessors);
  }
  cursor_.close(first, static_cast<NodeId>(specs.size()), after_last);
  changed();
  return *this;
}

std::vector<Graph::NodeId> Graph::sinks(bool skip_conditions) const {
  std::vector<bool> has_successor(nodes_.size(), false);
  for (const Edge& e : edges_) has_successor[static_cast<std::size_t>(e.first)] = true;
  std::vector<NodeId> out;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    // A condition node without successors chooses nothing: its path ends there.
    if (skip_conditions && nodes_[i].kind == NodeKind::Condition) continue;
    if (!has_successor[i]) out.push_back(static_cast<NodeId>(i));
  }
  return out;
}

Graph& Graph::add_sync(const WorkGraphNodeCall& call) {
  detail::NodeRecord node;
  node.kind = NodeKind::Sync;
  node.execution = ExecutionKind::Cpu;  // it waits on both domains, then runs on the host
  node.call = call;
  cursor_.previous_level = sinks(true);
  const NodeId id = append(node, cursor_.previous_level);
  cursor_.last_level.clear();
  cursor_.close(id, 1, false);
  changed();
  return *this;
}

Graph& Graph::add_conditional(std::function<bool()> pred) {
  runs_.refuse_changes_while_running("change");
  if (conditional_) throw std::logic_error("Graph::conditional: this graph already has a predicate");
  detail::NodeRecord node;
  node.kind = NodeKind::Conditional;
  node.execution = ExecutionKind::Cpu;
  cursor_.previous_level = sinks(true);
  const NodeId id = append(node, cursor_.previous_level);
  cursor_.last_level.clear();
  cursor_.close(id, 1, false);
  predicate_ = std::move(pred);
  conditional_ = true;
  changed();
  return *this;
}

Graph& Graph::add_branch(ExecutionKind kind, const WorkGraphNodeCall& call) {
  detail::NodeRecord node;
  node.kind = NodeKind::Condition;
  node.execution = kind;
  node.call = call;
  const NodeId id = append(node, cursor_.last_level);
  cursor_.close(id, 1, true);
  changed();
  return *this;
}

Graph& Graph::named(std::string name) {
  runs_.refuse_changes_while_running("change");
  if (cursor_.added_count == 0) throw std::logic_error("Graph::named: no node has been added yet");
  if (name.empty()) throw std::invalid_argument("Graph::named: a name cannot be empty");
  // Names go into JSON, traces and terminals: text only.
  if (const std::size_t bad = first_invalid_utf8(name); bad != name.size()) {
    throw std::invalid_argument("Graph::named: the name is not valid UTF-8 (byte " + std::to_string(bad) +
                                " of " + std::to_string(name.size()) + ")");
  }
  // The operation's nodes: name, or name.k for several; the nodes a tensor
  // operation adds around them get name.<role> (name.pad1to0, name.finish).
  std::vector<std::pair<NodeId, std::string>> labels;
  for (NodeId k = 0; k < cursor_.added_count; ++k) {
    labels.emplace_back(cursor_.added_first + k,
                        cursor_.added_count == 1 ? name : name + "." + std::to_string(k));
  }
  for (const auto& [id, role] : cursor_.helpers) labels.emplace_back(id, name + "." + role);
  for (const auto& [id, label] : labels) {
    const std::optional<NodeId> existing = names_.find(label);
    if (existing && *existing != id) {
      throw std::invalid_argument("Graph::named: the name '" + label + "' is already used by node " +
                                  std::to_string(*existing));
    }
  }
  for (auto& [id, label] : labels) names_.set(id, std::move(label));
  return *this;
}

Graph& Graph::add_edge(std::string_view from, std::string_view to) {
  const std::optional<NodeId> a = find(from), b = find(to);
  if (!a) throw std::invalid_argument("Graph::add_edge: no node named '" + std::string(from) + "'");
  if (!b) throw std::invalid_argument("Graph::add_edge: no node named '" + std::string(to) + "'");
  return add_edge(*a, *b);
}

Graph& Graph::add_edge(NodeId from, NodeId to) {
  runs_.refuse_changes_while_running("change");
  const auto n = static_cast<NodeId>(nodes_.size());
  if (from < 0 || from >= n || to < 0 || to >= n) {
    throw std::out_of_range("Graph::add_edge: node " + std::to_string(from < 0 || from >= n ? from : to) +
                            " outside [0, " + std::to_string(n) + ")");
  }
  edges_.emplace_back(from, to);
  changed();
  return *this;
}

std::int32_t Graph::split_index(std::uint64_t signature) {
  for (std::size_t i = 0; i < splits_.size(); ++i)
    if (splits_[i] == signature) return static_cast<std::int32_t>(i);
  splits_.push_back(signature);
  return static_cast<std::int32_t>(splits_.size() - 1);
}

bool Graph::must_precede(NodeId before, std::uint64_t split, int block) const {
  const detail::NodeRecord& b = nodes_[static_cast<std::size_t>(before)];
  return block < 0 || b.partition < 0 || split_of(b) != split || b.partition == block;
}

bool Graph::must_precede(NodeId before, const detail::NodeRecord& later,
                         const std::vector<std::int32_t>* fill_reads) const {
  const std::uint64_t split = split_of(later);
  if (must_precede(before, split, later.partition)) return true;
  if (later.padding_to < 0) return false;
  if (later.partition != later.padding_to) return must_precede(before, split, later.padding_to);
  if (!fill_reads) return must_precede(before, split, -1);
  for (std::int32_t block : *fill_reads)
    if (must_precede(before, split, block)) return true;
  return false;
}

}  // namespace weft

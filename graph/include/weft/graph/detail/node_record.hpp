// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How a Graph stores a node while it is built: one small record per node,
// kept in one vector, with the rarely needed parts (GPU work, subgraphs,
// names) in side tables. Internal to the graph layer.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <weft/graph/node_kind.hpp>
#include <weft/runtime/work_graph_policy.hpp>

namespace weft::detail {

struct NodeRecord {
  // What a run calls: the callable in the graph's CallableStore (a
  // condition node's returns the successor to run); empty for nodes loaded
  // from JSON and for the nodes the lowering gives a call of their own
  // (GPU, subgraph and conditional nodes).
  WorkGraphNodeCall call;
  std::int32_t device = -1;      // the device its partition lives on (-1: none)
  std::int32_t partition = -1;   // the tensor partition it works on (-1: none)
  std::int32_t padding_to = -1;  // a padding copy: the block whose padding it fills
  std::int32_t split = -1;       // how its operation's tensor is split (Graph::splits_; -1: no tensor)
  std::int32_t aux = -1;         // GPU node: its StreamWork; Subgraph node: its graph (side tables)
  NodeKind kind = NodeKind::Compute;
  ExecutionKind execution = ExecutionKind::Cpu;
  std::int8_t copy_stream = -1;  // GPU nodes: the copy stream they use (-1: compute)
};

// Where the builder stands: the levels that the next operation hangs off
// and what the last operation added (for named()).
struct BuildCursor {
  using NodeId = std::int32_t;
  std::vector<NodeId> previous_level;  // what the last level's emplaces depend on
  std::vector<NodeId> last_level;
  NodeId added_first = 0;  // the last operation's nodes: [added_first, added_first + added_count)
  NodeId added_count = 0;
  std::vector<std::pair<NodeId, std::string>> helpers;  // and the copies / finish node around them, by role

  // Ends an operation that added the nodes [first, first + count) as a new
  // level after the last one, or beside it.
  void close(NodeId first, NodeId count, bool after_last) {
    start_level(after_last);
    for (NodeId id = first; id < first + count; ++id) last_level.push_back(id);
    named(first, count);
  }
  // The same for an operation whose last level is `level` (the nodes it
  // added that later ones hang off), not all it added.
  void close(const std::vector<NodeId>& level, NodeId first, NodeId count, bool after_last) {
    start_level(after_last);
    last_level.insert(last_level.end(), level.begin(), level.end());
    named(first, count);
  }

 private:
  void start_level(bool after_last) {
    if (after_last) {
      previous_level.swap(last_level);
      last_level.clear();
    }
  }
  void named(NodeId first, NodeId count) {
    added_first = first;
    added_count = count;
    helpers.clear();
  }
};

}  // namespace weft::detail

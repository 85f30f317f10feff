// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What observers and traces hear of a lowered graph's nodes (NodeLabel in
// observer.hpp): its name, else its kind and id ("compute 3"; a tensor
// operation's kernel on one block: "split 7"), its level, and where its
// partition lives. Lowering keeps what the labels need in a compact form
// (names are copied: a run may outlive its graph); the first run anyone
// observes makes the labels, so unobserved graphs pay for no name. It all
// goes with the program. Internal to graph/.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <weft/graph/detail/node_names.hpp>
#include <weft/graph/detail/node_record.hpp>
#include <weft/runtime/work_graph_policy.hpp>

namespace weft::detail {

class TraceLabels {
 public:
  // levels: the graph's (Graph::levels) when it has condition nodes, whose
  // weak edges count in a way the successor rows do not show; else empty,
  // and the labels take the longest paths over the policy's rows.
  TraceLabels(const std::vector<NodeRecord>& nodes, const NodeNames& names, std::vector<int> levels);
  TraceLabels(const TraceLabels&) = delete;
  TraceLabels& operator=(const TraceLabels&) = delete;

  // Has `policy` (whose rows are the graph's) ask for the labels when first
  // observed; `graph` is the identity its events carry.
  void attach(const WorkGraphPolicy<int>& policy, const void* graph);

 private:
  static constexpr std::uint8_t kSplit = 0xff;  // in kinds_: a block kernel

  static std::vector<NodeLabel> make(const void* self);
  std::vector<int> longest_paths() const;

  std::vector<std::uint8_t> kinds_;                                // NodeKind, or kSplit
  std::vector<std::pair<std::int32_t, std::int32_t>> placements_;  // partition, device; empty: none
  std::vector<int> levels_;                                        // empty: from the rows
  std::vector<char> names_;                                        // each named node's name, ended by '\0'
  std::vector<std::pair<std::int32_t, std::size_t>> named_;        // node, offset into names_
  const WorkGraphPolicy<int>* policy_ = nullptr;
};

}  // namespace weft::detail

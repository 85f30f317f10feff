// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which rank runs each node of a graph over distributed tensors, and the
// messages between ranks its tensor operations need (docs/distributed.md).
// Empty for a graph without distributed tensors. Internal to the graph layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <weft/graph/detail/partitioned_op.hpp>
#include <weft/runtime/rank_group.hpp>

namespace weft::detail {

// A node that moves bytes between ranks: a padding copy whose blocks live on
// two ranks (sender packs, receiver unpacks), or a reduction partial that
// its block's owner sends to every other rank (receiver -1).
struct RankMessage {
  std::int32_t node = -1;
  std::int32_t sender = -1;
  std::int32_t receiver = -1;       // -1: every rank but the sender
  std::int32_t from = -1, to = -1;  // padding copies: the blocks
  std::size_t bytes = 0;
  bool gpu_memory = false;              // the tensor's blocks are in GPU memory: stage in pinned memory
  std::function<void(void* out)> pack;  // padding copies
  std::function<void(const void* in)> unpack;
  PartialSlot partial;  // partials: the value, sent from and received into
};

struct NodeRanks {
  std::shared_ptr<RankGroup> group;  // null: nothing distributed
  std::vector<std::int32_t> owner;   // per node, -1 (or beyond the end): every rank runs it
  std::vector<RankMessage> messages;
  std::vector<std::string> tensors;  // the distributed tensors' shapes, in order of first use
  int loaded_ranks = 0;              // a graph loaded from JSON: its "ranks" (no group is kept)
  std::uint64_t graph_number = 0;    // RankGroup::number_graph() when the group was adopted

  void note_tensor(const std::string& description) {
    for (const std::string& t : tensors)
      if (t == description) return;
    tensors.push_back(description);
  }

  bool distributed() const noexcept { return group != nullptr; }
  // The number of ranks the graph runs on: its group's size, or a loaded
  // graph's; 0 when neither is known.
  int rank_count() const noexcept { return group != nullptr ? group->size() : loaded_ranks; }
  std::int32_t owner_of(std::int32_t node) const noexcept {
    return static_cast<std::size_t>(node) < owner.size() ? owner[static_cast<std::size_t>(node)] : -1;
  }
  void set_owner(std::int32_t node, std::int32_t rank) {
    if (static_cast<std::size_t>(node) >= owner.size()) owner.resize(static_cast<std::size_t>(node) + 1, -1);
    owner[static_cast<std::size_t>(node)] = rank;
  }
  // The graph's group: the first one given; another one is an error.
  void adopt(const std::shared_ptr<RankGroup>& g, const std::string& where) {
    if (g == nullptr) return;
    if (group == nullptr) {
      group = g;
      graph_number = g->number_graph();
    } else if (group != g) {
      throw std::invalid_argument(where + ": its tensor is distributed over " + g->describe() +
                                  ", but the graph already uses another rank group, " + group->describe() +
                                  "; one graph runs on one group");
    }
  }
};

}  // namespace weft::detail

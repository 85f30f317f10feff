// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributed graphs in their lowered form (docs/distributed.md): each rank
// keeps every node, so node numbers and message tags agree everywhere, but
// runs only its own: nodes of other ranks do nothing, cross-rank padding
// copies and reduction partials become deferred nodes that send or receive
// through the graph's RankChannel, and every other node tells the other
// ranks at once when it throws.
#include "program.hpp"

#include <cstdint>
#include <cstring>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <string>

#include <weft/backends/memory_space.hpp>
#include <weft/runtime/trace.hpp>

namespace weft::detail {

namespace {

void do_nothing(void*) {}

// What every rank must agree on: the graph's shape, its messages and its
// tensors' splits, as text (the first line compared, the rest reported).
std::string describe_for_ranks(const Graph& graph, const NodeRanks& ranks,
                               const std::vector<NodeRecord>& nodes, const std::vector<Graph::Edge>& edges) {
  std::uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](std::uint64_t v) {
    for (int k = 0; k < 8; ++k, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ull;
  };
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    mix(static_cast<std::uint64_t>(nodes[i].kind));
    mix(static_cast<std::uint64_t>(nodes[i].partition + 1));
    mix(static_cast<std::uint64_t>(ranks.owner_of(static_cast<std::int32_t>(i)) + 1));
    for (char c : graph.node(static_cast<Graph::NodeId>(i)).name) mix(static_cast<unsigned char>(c));
  }
  for (const Graph::Edge& e : edges) mix((static_cast<std::uint64_t>(e.first) << 32) ^ e.second);
  std::uint64_t bytes = 0;
  for (const RankMessage& m : ranks.messages) {
    mix(static_cast<std::uint64_t>(m.node));
    mix(m.bytes);
    bytes += m.bytes;
  }
  std::ostringstream text;
  text << nodes.size() << " nodes, " << edges.size() << " edges, " << ranks.messages.size() << " messages of "
       << bytes << " bytes in all over";
  for (std::size_t t = 0; t < ranks.tensors.size(); ++t) text << (t == 0 ? " " : ", ") << ranks.tensors[t];
  text << " (digest " << std::hex << h << std::dec << ")";
  return text.str();
}

}  // namespace

void RankNodes::prepare(const Graph& graph, const NodeRanks& ranks, const std::vector<NodeRecord>& nodes,
                        const std::vector<Graph::Edge>& edges, std::vector<WorkGraphNodeCall>& calls,
                        std::vector<int>& early) {
  if (!ranks.distributed()) {
    for (std::size_t i = 0; i < ranks.owner.size(); ++i) {
      if (ranks.owner[i] >= 0) {
        throw std::logic_error("Graph: node " + std::to_string(i) +
                               " runs on_rank(), but the graph has no distributed tensor and no "
                               "rank_group(): it cannot know its rank");
      }
    }
    return;
  }
  const int messages = static_cast<int>(ranks.messages.size());
  if (ranks.messages.size() > static_cast<std::size_t>(INT32_MAX / 2)) {
    throw std::length_error("Graph: more messages between ranks than tags can number");
  }
  RankGroup& group = *ranks.group;
  rank_ = group.rank();
  size_ = group.size();
  channel_ = group.open_channel(messages);
  // Every rank must be at the same graph, built the same way: compare
  // before anything runs. Channels pair up in the order of first runs, so
  // two graphs of one shape run first in different orders would otherwise
  // swap their messages.
  const std::vector<std::string> all = channel_->all_gather(std::to_string(ranks.graph_number) + "\n" +
                                                            describe_for_ranks(graph, ranks, nodes, edges));
  const auto number_of = [](const std::string& gathered) { return gathered.substr(0, gathered.find('\n')); };
  const auto shape_of = [](const std::string& gathered) { return gathered.substr(gathered.find('\n') + 1); };
  for (std::size_t r = 1; r < all.size(); ++r) {
    if (number_of(all[r]) != number_of(all[0])) {
      throw std::logic_error("Graph: the ranks of " + group.describe() +
                             " began the first runs of different graphs: rank 0 runs graph " +
                             number_of(all[0]) + " and rank " + std::to_string(r) + " graph " +
                             number_of(all[r]) +
                             " (graphs over a group are numbered in the order they first use it); every "
                             "rank must run its graphs for the first time in the same order");
    }
  }
  for (std::size_t r = 1; r < all.size(); ++r) {
    if (all[r] != all[0]) {
      throw std::invalid_argument("Graph: the ranks of " + group.describe() +
                                  " built different graphs: rank 0 has " + shape_of(all[0]) + ", rank " +
                                  std::to_string(r) + " has " + shape_of(all[r]) +
                                  "; every rank must build the same graph over tensors split the same way");
    }
  }
  const std::size_t n = nodes.size();
  if (early.empty()) early.assign(n, -1);
  // Message nodes first: their roles on this rank.
  std::vector<bool> handled(n, false);
  for (std::size_t k = 0; k < ranks.messages.size(); ++k) {
    const RankMessage& m = ranks.messages[k];
    const auto i = static_cast<std::size_t>(m.node);
    handled[i] = true;
    const bool partial = m.receiver < 0;
    const bool sends = m.sender == rank_ && (!partial || size_ > 1);
    const bool receives = partial ? m.sender != rank_ : m.receiver == rank_;
    if (!sends && !receives) {
      calls[i] = WorkGraphNodeCall::of(&do_nothing, nullptr);
      continue;
    }
    MessageNode& node = messages_.emplace_back();
    node.owner = this;
    node.node = m.node;
    node.tag = static_cast<int>(k);
    node.message = &m;
    if (m.gpu_memory) {
      node.staging = std::unique_ptr<std::byte, PinnedFree>(
          static_cast<std::byte*>(HostPinnedSpace{}.allocate(m.bytes)), PinnedFree{m.bytes});
    } else if (receives && !partial) {
      node.inbox.resize(m.bytes);
    }
    early[i] = 0;  // every successor waits for the message
    calls[i] = WorkGraphNodeCall::of(sends ? &MessageNode::send : &MessageNode::receive, &node);
  }
  // The rest: other ranks' nodes do nothing; ours tell the others if they fail.
  for (std::size_t i = 0; i < n; ++i) {
    if (handled[i] || !calls[i]) continue;
    const std::int32_t owner = ranks.owner_of(static_cast<std::int32_t>(i));
    if (owner >= 0 && owner != rank_) {
      calls[i] = WorkGraphNodeCall::of(&do_nothing, nullptr);
      early[i] = -1;  // a GPU node of another rank: done once it returns
      continue;
    }
    if (early[i] >= 0) continue;  // GPU nodes report failures through the pass
    wrapped_.push_back(Wrapped{calls[i], channel_.get()});
    calls[i] = nodes[i].kind == NodeKind::Condition
                   ? WorkGraphNodeCall::condition(&Wrapped::choose, &wrapped_.back())
                   : WorkGraphNodeCall::of(&Wrapped::run, &wrapped_.back());
  }
}

void RankNodes::attach(const WorkGraphPolicy<int>& policy) noexcept { policy_ = &policy; }

void PinnedFree::operator()(std::byte* p) const noexcept { HostPinnedSpace{}.deallocate(p, bytes); }

// Runs f; if it throws, tells the other ranks at once, then rethrows.
template <class F>
auto telling_failures(RankChannel& channel, const F& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    channel.fail_pass(e.what());
    throw;
  } catch (...) {
    channel.fail_pass("a node threw an exception that is not a std::exception");
    throw;
  }
}

void RankNodes::Wrapped::run(void* state) {
  auto* w = static_cast<Wrapped*>(state);
  telling_failures(*w->channel, [w] { w->inner.run(); });
}

int RankNodes::Wrapped::choose(void* state) {
  auto* w = static_cast<Wrapped*>(state);
  return telling_failures(*w->channel, [w] { return w->inner.choose(); });
}

void RankNodes::MessageNode::send(void* state) {
  auto* self = static_cast<MessageNode*>(state);
  const RankMessage& m = *self->message;
  RankChannel& channel = *self->owner->channel_;
  if (m.receiver >= 0) {
    std::vector<std::byte> data = channel.lend(m.bytes);
    if (self->staging) {
      m.pack(self->staging.get());  // from the device, waited for
      std::memcpy(data.data(), self->staging.get(), m.bytes);
    } else {
      m.pack(data.data());
    }
    self->pending.store(1, std::memory_order_relaxed);
    channel.send(m.receiver, self->tag, std::move(data), &MessageNode::done, self);
    return;
  }
  // A partial: to every other rank.
  const int others = self->owner->size_ - 1;
  self->pending.store(others, std::memory_order_relaxed);
  for (int r = 0; r < self->owner->size_; ++r) {
    if (r == self->owner->rank_) continue;
    std::vector<std::byte> data = channel.lend(m.bytes);
    std::memcpy(data.data(), m.partial.data, m.bytes);
    channel.send(r, self->tag, std::move(data), &MessageNode::done, self);
  }
}

void RankNodes::MessageNode::receive(void* state) {
  auto* self = static_cast<MessageNode*>(state);
  const RankMessage& m = *self->message;
  self->pending.store(1, std::memory_order_relaxed);
  void* into = m.receiver < 0  ? m.partial.data
               : self->staging ? static_cast<void*>(self->staging.get())
                               : static_cast<void*>(self->inbox.data());
  self->owner->channel_->receive(m.sender, self->tag, into, m.bytes, &MessageNode::done, self);
}

void RankNodes::MessageNode::done(void* state, std::exception_ptr error) {
  auto* self = static_cast<MessageNode*>(state);
  if (error) {
    std::lock_guard<std::mutex> lock(self->error_mutex);
    if (!self->error) self->error = error;
  } else if (self->message->receiver == self->owner->rank_) {
    try {
      // To the device (waited for) when staged: on the progress thread, a
      // short stall, but the node completes only once the padding is there.
      self->message->unpack(self->staging ? self->staging.get() : self->inbox.data());
    } catch (...) {
      std::lock_guard<std::mutex> lock(self->error_mutex);
      if (!self->error) self->error = std::current_exception();
    }
  }
  if (self->pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  std::exception_ptr first;
  {
    std::lock_guard<std::mutex> lock(self->error_mutex);
    first = std::exchange(self->error, nullptr);
  }
  self->owner->policy_->complete_deferred(self->node, std::move(first));
}

}  // namespace weft::detail

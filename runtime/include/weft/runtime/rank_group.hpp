// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RankGroup and RankChannel: the processes (ranks) that run one graph
// together, as the layers below the one that implements them (weft::mpi)
// see them. A distributed Tensor records its RankGroup; a graph over such
// tensors opens a RankChannel on its first run and sends its cross-rank
// padding copies and reduction partials through it.
//
// Nothing here blocks a worker: send() and receive() return at once and
// report completion through a callback from the group's progress thread,
// which is how a graph's deferred nodes complete (as GPU nodes do). The
// channel also keeps passes in step: a pass ends on every rank together,
// with the first failure of any rank (docs/distributed.md).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace weft {

// Called once when a message operation or a pass completes, from the
// progress thread; error is null on success.
using MessageDone = void (*)(void* context, std::exception_ptr error);

// A graph's own message space among the ranks of a group.
class RankChannel {
 public:
  virtual ~RankChannel() = default;

  // A send buffer of `bytes` (its contents undefined), owned by the channel
  // until send() hands it back; recycled, so a pass allocates nothing once
  // warm. Any thread.
  virtual std::vector<std::byte> lend(std::size_t bytes) = 0;
  // Sends `data` to rank `to` as message `tag` (0 <= tag < the tags asked
  // for when the channel was opened). Any thread; returns at once.
  virtual void send(int to, int tag, std::vector<std::byte> data, MessageDone done, void* context) = 0;
  // Receives message `tag` from rank `from` into `data` (exactly `bytes`
  // bytes, else done gets an error naming both sizes). `data` must stay
  // valid until done is called. Any thread; returns at once.
  virtual void receive(int from, int tag, void* data, std::size_t bytes, MessageDone done, void* context) = 0;

  // Passes. begin_pass before the pass's first message, with where the
  // pass stands (`place`); cancel (may be null) is watched: once true, the
  // other ranks are told and this rank's pending receives give up.
  // fail_pass: a node of this rank failed (from the worker that ran it): the
  // other ranks are told at once, so none waits for a message this rank will
  // not send. end_pass once the pass ended here (local_error: its first
  // error, or null), saying whether this rank would run another pass of the
  // run after it (`another`: its count or predicates decided so): done is
  // called once every rank's pass ended, with this rank's error, else the
  // first (lowest rank) failure of another rank as
  // std::runtime_error("rank r: what"), weft::Cancelled when that rank was
  // cancelled, or, when the ranks' places or decisions differ,
  // std::logic_error naming each rank's (the same on every rank).
  struct PassPlace {
    std::uint64_t run = 0;   // the graph's runs, numbered from 1 in submission order
    std::uint64_t pass = 0;  // the run's passes, from 1
  };
  virtual void begin_pass(const std::atomic<bool>* cancel, PassPlace place) = 0;
  virtual void fail_pass(const std::string& what) noexcept = 0;
  virtual void end_pass(std::exception_ptr local_error, bool another, MessageDone done, void* context) = 0;

  // Set-up (a graph's first run): every rank's `mine`, in rank order.
  // Blocking; call it from a thread that is not a worker.
  virtual std::vector<std::string> all_gather(const std::string& mine) = 0;
};

class RankGroup {
 public:
  virtual ~RankGroup() = default;
  virtual int rank() const noexcept = 0;
  virtual int size() const noexcept = 0;
  // This rank's index among the ranks on its machine (a distributed tensor
  // in GPU memory uses GPU local_rank() % devices); rank() unless known.
  virtual int local_rank() const noexcept { return rank(); }
  // What the group is, for messages: "MPI_COMM_WORLD (4 ranks)".
  virtual std::string describe() const = 0;
  // Numbers the graphs over this group in the order they take it (1, 2,
  // ...): a graph's identity among the ranks, which build their graphs in
  // the same order even where they run them in different ones.
  std::uint64_t number_graph() noexcept { return graphs_.fetch_add(1, std::memory_order_relaxed) + 1; }
  // A new channel with message tags [0, tags). Collective: every rank
  // opens its channels in the same order. Blocking; not from a worker.
  virtual std::unique_ptr<RankChannel> open_channel(int tags) = 0;

 private:
  std::atomic<std::uint64_t> graphs_{0};
};

}  // namespace weft

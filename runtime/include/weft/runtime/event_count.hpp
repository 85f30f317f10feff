// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// An event count: lets idle workers sleep without missing work that arrives
// while they decide to sleep, and costs a producer one fence and one load
// when nobody sleeps.
//
//   consumer:                                 producer:
//     auto key = ec.prepare_wait();             queue.push(x);
//     if (auto x = queue.try_pop()) {           ec.notify_one();
//       ec.cancel_wait(); use(*x);
//     } else {
//       ec.commit_wait(key);   // sleeps unless notified since prepare_wait
//     }
//
// Why no wake-up is lost: the consumer announces itself (waiters_ RMW) before
// re-checking the queue; the producer publishes its item before reading
// waiters_. Both sides separate the store from the later load with a
// store-load fence, so at least one of them sees the other: either the
// consumer finds the item, or the producer sees a waiter and bumps epoch_,
// which makes commit_wait() return (epoch_ no longer equals the key).
//
// The fences are asymmetric where the kernel allows (fence.hpp): producers
// notify on every push, consumers prepare to sleep rarely, so the consumer
// pays a membarrier system call and a producer only a compiler barrier and
// a load. Elsewhere (and under ThreadSanitizer) both sides pay a seq_cst
// fence (or a seq_cst read-modify-write).
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>

#include <weft/runtime/detail/futex.hpp>
#include <weft/runtime/fence.hpp>

namespace weft {

class EventCount {
 public:
  using Key = std::uint32_t;

  EventCount() noexcept : asymmetric_(enable_heavy_fence()) {}
  EventCount(const EventCount&) = delete;
  EventCount& operator=(const EventCount&) = delete;

  Key prepare_wait() noexcept {
    waiters_.fetch_add(1, std::memory_order_seq_cst);
    // Pairs with the fence in notify(); orders our announcement before the
    // caller's re-check of its queues. (Under TSan the seq_cst
    // read-modify-write above, a full barrier in hardware, stands alone.)
    if (asymmetric_) {
      heavy_fence();
    } else {
      store_load_fence();
    }
    return epoch_.load(std::memory_order_acquire);
  }

  void cancel_wait() noexcept { waiters_.fetch_sub(1, std::memory_order_relaxed); }

  void commit_wait(Key key) noexcept {
    // Returns at once if a notify happened after prepare_wait (epoch moved);
    // otherwise sleeps until the epoch changes.
    while (epoch_.load(std::memory_order_acquire) == key) detail::futex_wait(detail::futex_word(epoch_), key);
    waiters_.fetch_sub(1, std::memory_order_relaxed);
  }

  // Wake one sleeping consumer, if any. Call after publishing the work.
  void notify_one() noexcept {
    publish_fence();
    notify(false);
  }
  void notify_all() noexcept {
    publish_fence();
    notify(true);
  }

  // For a producer choosing among several event counts by their waiters():
  // publish_fence() once, after publishing the work and before reading any
  // waiters(), then notify_one_fenced() on the one it picked.
  void publish_fence() const noexcept {
    // Pairs with the fence in prepare_wait(); orders the caller's
    // publication of work before our read of waiters_.
    if (asymmetric_) {
      light_fence();
    } else {
      store_load_fence();
    }
  }
  void notify_one_fenced() noexcept { notify(false); }

  // Consumers that have announced themselves and not yet left (a snapshot).
  std::uint32_t waiters() const noexcept { return waiters_.load(std::memory_order_relaxed); }

 private:
  void notify(bool all) noexcept {
    // Under TSan, without the fence, a seq_cst read-modify-write reads the
    // count instead: like the fence it keeps the caller's earlier store from
    // being reordered after this read.
    const std::uint32_t waiting = kThreadSanitizer ? waiters_.fetch_add(0, std::memory_order_seq_cst)
                                                   : waiters_.load(std::memory_order_relaxed);
    if (waiting == 0) return;
    // release: pairs with the acquire in commit_wait()/prepare_wait().
    epoch_.fetch_add(1, std::memory_order_release);
    detail::futex_wake(detail::futex_word(epoch_), detail::kAllWakeKinds, all ? INT_MAX : 1);
  }

  const bool asymmetric_;  // heavy_fence() in prepare_wait(), light_fence() in notify()
  alignas(64) std::atomic<std::uint32_t> waiters_{0};
  alignas(64) std::atomic<Key> epoch_{0};
};

}  // namespace weft

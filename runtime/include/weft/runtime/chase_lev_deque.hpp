// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A Chase-Lev work-stealing deque: the owner pushes and pops at the bottom,
// any thread steals from the top. The buffer is circular and grows.
//
//   weft::ChaseLevDeque<Job*> deque;
//   deque.push(job);                               // owner thread only
//   std::optional<Job*> mine = deque.pop();        // owner thread only (LIFO)
//   std::optional<Job*> theirs = deque.steal();    // any thread (FIFO)
//
// Memory orderings follow Le, Pop, Cohen and Zappa Nardelli, "Correct and
// Efficient Work-Stealing for Weak Memory Models" (PPoPP 2013), Figure 1, with
// one deliberate strengthening noted in push(); ThreadSanitizer builds trade
// the two seq_cst fences for seq_cst operations (see fence.hpp).
//
// Reclamation: a thief may still be reading the old buffer after the owner
// grew it, so retired buffers are kept until the deque is destroyed. Buffers
// double, so everything retired is smaller than the live buffer: the memory
// held is bounded by twice the largest capacity ever needed, never unbounded.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>
#include <vector>

#include <weft/runtime/fence.hpp>

namespace weft {

template <class T>
class ChaseLevDeque {
  static_assert(std::is_trivially_copyable_v<T>, "deque items are copied with relaxed atomics");
  static_assert(std::atomic<T>::is_always_lock_free, "deque items must fit a lock-free atomic");

 public:
  explicit ChaseLevDeque(std::size_t initial_capacity = 1024) {
    std::size_t capacity = 2;
    while (capacity < initial_capacity) capacity *= 2;
    auto first = std::make_unique<Buffer>(capacity);
    buffer_.store(first.get(), std::memory_order_relaxed);
    buffers_.push_back(std::move(first));
  }

  ChaseLevDeque(const ChaseLevDeque&) = delete;
  ChaseLevDeque& operator=(const ChaseLevDeque&) = delete;

  // Owner only.
  void push(T item) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    // acquire: pairs with the seq_cst CAS on top_ in steal()/pop(), so we see
    // how far thieves got before deciding whether the buffer is full.
    const std::int64_t t = top_.load(std::memory_order_acquire);
    Buffer* buffer = buffer_.load(std::memory_order_relaxed);  // only the owner writes it
    if (b - t > static_cast<std::int64_t>(buffer->capacity) - 1) buffer = grow(buffer, t, b);
    buffer->put(b, item);
    // The paper writes a release fence then a relaxed store of bottom_. A
    // release store gives the same guarantee to the thieves' acquire load of
    // bottom_ (the item and the job it points to are published), costs the
    // same on x86 and Arm, and is visible to ThreadSanitizer, which ignores
    // fences.
    bottom_.store(b + 1, std::memory_order_release);
  }

  // Owner only. Newest first.
  std::optional<T> pop() {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    Buffer* buffer = buffer_.load(std::memory_order_relaxed);  // only the owner writes it
    bottom_.store(b, around_fence(std::memory_order_relaxed));
    // seq_cst fence: orders the store of bottom_ above before the load of top_
    // below (store-load); pairs with the seq_cst fence in steal(), so a thief
    // and the owner cannot both miss each other's claim on the last item.
    store_load_fence();
    std::int64_t t = top_.load(around_fence(std::memory_order_relaxed));
    if (t > b) {  // empty: restore bottom
      bottom_.store(b + 1, std::memory_order_relaxed);
      return std::nullopt;
    }
    T item = buffer->get(b);
    if (t == b) {
      // Last item: race the thieves for it through top_. seq_cst: totally
      // ordered with the thieves' CAS on the same top_ value.
      const bool won =
          top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
      bottom_.store(b + 1, std::memory_order_relaxed);
      if (!won) return std::nullopt;
    }
    return item;
  }

  // Any thread. Oldest first. Returns nothing when the deque looked empty or
  // another thread won the race for the item (callers simply try elsewhere).
  std::optional<T> steal() {
    // acquire: pairs with the seq_cst CAS of other thieves and the owner, so
    // the item read below is not older than the top_ we claim.
    std::int64_t t = top_.load(around_fence(std::memory_order_acquire));
    // seq_cst fence: pairs with the fence in pop(); see there.
    store_load_fence();
    // acquire: pairs with the release store of bottom_ in push(), making the
    // pushed item (and everything written before pushing it) visible.
    const std::int64_t b = bottom_.load(around_fence(std::memory_order_acquire));
    if (t >= b) return std::nullopt;
    // acquire (the paper's consume): pairs with the release store in grow(),
    // so a new buffer's copied contents are visible.
    Buffer* buffer = buffer_.load(std::memory_order_acquire);
    T item = buffer->get(t);
    // seq_cst: one winner per top_ value among thieves and the owner's pop().
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) {
      return std::nullopt;
    }
    return item;
  }

  // A snapshot; exact only when no other thread is using the deque. For the
  // owner, "empty" is reliable (top_ only grows, so a stale top_ overstates
  // the size); for a thief it is a hint, checked again by steal() itself.
  std::size_t size_hint() const noexcept {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    const std::int64_t t = top_.load(std::memory_order_relaxed);
    return b > t ? static_cast<std::size_t>(b - t) : 0;
  }
  bool empty_hint() const noexcept { return size_hint() == 0; }

  std::size_t capacity() const noexcept { return buffer_.load(std::memory_order_relaxed)->capacity; }

 private:
  struct Buffer {
    explicit Buffer(std::size_t cap) : capacity(cap), mask(cap - 1), slots(new std::atomic<T>[cap]) {}
    // Slots are atomics accessed relaxed: a thief may read a slot the owner is
    // overwriting after wrap-around; the CAS on top_ then fails and the torn
    // read is discarded, so no ordering is needed on the slot itself.
    T get(std::int64_t i) const noexcept {
      return slots[static_cast<std::size_t>(i) & mask].load(std::memory_order_relaxed);
    }
    void put(std::int64_t i, T v) noexcept {
      slots[static_cast<std::size_t>(i) & mask].store(v, std::memory_order_relaxed);
    }
    const std::size_t capacity;
    const std::size_t mask;
    std::unique_ptr<std::atomic<T>[]> slots;
  };

  Buffer* grow(Buffer* old, std::int64_t t, std::int64_t b) {
    auto bigger = std::make_unique<Buffer>(old->capacity * 2);
    for (std::int64_t i = t; i < b; ++i) bigger->put(i, old->get(i));
    Buffer* raw = bigger.get();
    buffers_.push_back(std::move(bigger));  // the old one stays alive for thieves
    // release: pairs with the acquire load in steal(); the copies above are
    // visible to any thief that sees the new buffer.
    buffer_.store(raw, std::memory_order_release);
    return raw;
  }

  // top_ and bottom_ on separate cache lines: thieves hammer top_, the owner bottom_.
  alignas(64) std::atomic<std::int64_t> top_{0};
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  alignas(64) std::atomic<Buffer*> buffer_{nullptr};
  std::vector<std::unique_ptr<Buffer>> buffers_;  // owner only: live buffer last
};

}  // namespace weft

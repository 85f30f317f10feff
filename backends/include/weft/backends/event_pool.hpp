// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// EventPool<Backend>: reusable events, created in chunks and handed out again
// and again, so that a running graph never creates or destroys an event.
//
//   weft::EventPool<weft::CudaEventBackend> pool(weft::CudaEventBackend(0));
//   cudaEvent_t done = pool.acquire();      // creates 8 events the first time
//   cudaEventRecord(done, stream);
//   ...
//   pool.release(done);                     // back to the pool, not destroyed
//
//   {
//     auto lease = pool.lease();            // released when `lease` goes away
//     cudaStreamWaitEvent(other, lease.get());
//   }
//
// The Backend makes and frees one event handle; the pool does the
// bookkeeping, so tests use a fake backend that counts calls:
//
//   struct Backend {
//     using Event = ...;                    // a copyable, default-constructible, ==-comparable handle
//     Event create_event();                 // may throw; nothing is leaked then
//     void destroy_event(Event) noexcept;
//   };
//
// acquire() and release() may be called from any thread (one mutex, held for
// a few instructions). The pool grows by a chunk only when no event is free,
// and destroys events only in its destructor: after warm-up, a steady
// acquire/release loop makes no backend call at all, and release() never
// allocates (the free list has room for every event created).
//
// Events still handed out when the pool is destroyed are destroyed with it,
// so leases must not outlive their pool. (CUDA allows destroying an event
// whose recorded work is still pending: it is freed once that work is done.)
#pragma once

#include <weft/backends/detail/checked_size.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace weft {

template <class B>
concept EventBackend = std::semiregular<typename B::Event> && std::equality_comparable<typename B::Event> &&
    requires(B& backend, typename B::Event event) {
  { backend.create_event() } -> std::same_as<typename B::Event>;
  { backend.destroy_event(event) }
  noexcept;
};

struct EventPoolStatistics {
  std::size_t created = 0;    // events made by the backend, all alive until the pool goes
  std::size_t in_use = 0;     // handed out and not yet released
  std::size_t available = 0;  // created - in_use
  std::size_t growths = 0;    // times the pool had to create a chunk
};

template <EventBackend Backend>
class EventPool {
 public:
  using Event = typename Backend::Event;
  static constexpr std::size_t kDefaultEventsPerChunk = 8;

  explicit EventPool(Backend backend = Backend{}, std::size_t events_per_chunk = kDefaultEventsPerChunk)
      : backend_(std::move(backend)), events_per_chunk_(events_per_chunk) {
    if (events_per_chunk_ == 0) {
      throw std::invalid_argument("EventPool: 0 events per chunk (expected at least 1)");
    }
  }

  ~EventPool() {
    for (const Event& event : created_) backend_.destroy_event(event);
  }

  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  // A free event, creating a chunk first when none is free.
  Event acquire() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) grow(events_per_chunk_);
    Event event = free_.back();
    free_.pop_back();
    return event;
  }

  // Gives back an event from acquire(). The caller must be done with it (for
  // CUDA: nothing will record it or wait on it any more).
  void release(const Event& event) {
    std::lock_guard lock(mutex_);
    if (free_.size() == created_.size()) {
      throw std::invalid_argument(
          "EventPool: release of an event while none is in use (expected an event from acquire(), "
          "released once)");
    }
#ifndef NDEBUG
    // Linear searches, so only in debug builds: a foreign or doubly released
    // event would otherwise be handed out twice later.
    if (std::find(created_.begin(), created_.end(), event) == created_.end()) {
      throw std::invalid_argument("EventPool: release of an event this pool did not create");
    }
    if (std::find(free_.begin(), free_.end(), event) != free_.end()) {
      throw std::invalid_argument("EventPool: event released twice (it is already free)");
    }
#endif
    free_.push_back(event);  // cannot allocate: capacity >= created_.size() (see grow)
  }

  // Creates events until at least `count` are free, so that the first
  // acquires of a run do not create any.
  void reserve(std::size_t count) {
    std::lock_guard lock(mutex_);
    if (free_.size() < count) grow(count - free_.size());
  }

  EventPoolStatistics statistics() const {
    std::lock_guard lock(mutex_);
    return {created_.size(), created_.size() - free_.size(), free_.size(), growths_};
  }

  std::size_t events_per_chunk() const noexcept { return events_per_chunk_; }
  const Backend& backend() const noexcept { return backend_; }

  // An acquired event that releases itself.
  class Lease {
   public:
    Lease() = default;
    ~Lease() { reset(); }
    Lease(Lease&& other) noexcept : pool_(std::exchange(other.pool_, nullptr)), event_(other.event_) {}
    Lease& operator=(Lease&& other) noexcept {
      if (this != &other) {
        reset();
        pool_ = std::exchange(other.pool_, nullptr);
        event_ = other.event_;
      }
      return *this;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

    const Event& get() const noexcept { return event_; }
    explicit operator bool() const noexcept { return pool_ != nullptr; }

    void reset() noexcept {
      // release() throws only for events that did not come from acquire(),
      // which a Lease cannot hold.
      if (pool_ != nullptr) std::exchange(pool_, nullptr)->release_leased(event_);
    }

   private:
    friend class EventPool;
    Lease(EventPool& pool, Event event) : pool_(&pool), event_(std::move(event)) {}

    EventPool* pool_ = nullptr;
    Event event_{};
  };

  Lease lease() { return Lease(*this, acquire()); }

 private:
  void release_leased(const Event& event) noexcept {
    std::lock_guard lock(mutex_);
    free_.push_back(event);
  }

  // Called with mutex_ held. Room is made first, so a backend that throws
  // part-way leaves every event it did create in the pool, free.
  void grow(std::size_t count) {
    std::size_t total = 0;
    if (!detail::checked_add(created_.size(), count, total)) {
      detail::throw_size_overflow("EventPool: " + std::to_string(created_.size()) + " events and " +
                                  std::to_string(count) + " more overflow std::size_t");
    }
    created_.reserve(total);
    free_.reserve(total);
    for (std::size_t i = 0; i < count; ++i) {
      Event event = backend_.create_event();
      created_.push_back(event);
      free_.push_back(std::move(event));
    }
    ++growths_;
  }

  Backend backend_;
  const std::size_t events_per_chunk_;
  mutable std::mutex mutex_;
  std::vector<Event> created_;
  std::vector<Event> free_;
  std::size_t growths_ = 0;
};

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// EventPool bookkeeping, with a fake backend that counts its calls: events
// are reused, created in chunks only when none is free, destroyed only with
// the pool, handed to one holder at a time (also under threads, for TSan),
// and a steady acquire/release loop creates nothing after warm-up.
#include <weft/backends/event_pool.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "../test_support.hpp"

namespace {

// What the fake backend was asked to do; outlives the pool so tests can
// look at the destruction.
struct BackendCalls {
  std::atomic<int> created{0};
  std::atomic<int> destroyed{0};
  std::vector<int> destroyed_ids;  // written by the pool's destructor only
  int fail_at_creation = -1;       // the creation (0-based) that throws, -1 for none
};

// Events are ids 0, 1, 2, ... in order of creation.
struct CountingBackend {
  using Event = int;
  BackendCalls* calls;

  int create_event() {
    const int id = calls->created.load(std::memory_order_relaxed);
    if (id == calls->fail_at_creation) throw std::runtime_error("fake backend: creation refused");
    calls->created.store(id + 1, std::memory_order_relaxed);  // the pool serialises creation
    return id;
  }
  void destroy_event(int id) noexcept {
    calls->destroyed.fetch_add(1, std::memory_order_relaxed);
    calls->destroyed_ids.push_back(id);
  }
};

using Pool = weft::EventPool<CountingBackend>;

}  // namespace

TEST_CASE("EventPool.reuses_released_events") {
  BackendCalls calls;
  Pool pool(CountingBackend{&calls}, /*events_per_chunk=*/4);
  CHECK(calls.created == 0);  // nothing is made before it is needed

  const int first = pool.acquire();
  CHECK(calls.created == 4);
  CHECK(pool.statistics().in_use == 1);
  pool.release(first);

  std::set<int> seen;
  for (int round = 0; round < 100; ++round) {
    const int event = pool.acquire();
    seen.insert(event);
    pool.release(event);
  }
  CHECK(calls.created == 4);
  CHECK(seen.size() <= 4);
  CHECK(*seen.rbegin() < 4);
  const weft::EventPoolStatistics stats = pool.statistics();
  CHECK(stats.created == 4);
  CHECK(stats.in_use == 0);
  CHECK(stats.available == 4);
  CHECK(stats.growths == 1);
}

TEST_CASE("EventPool.grows_by_a_chunk_only_when_empty") {
  BackendCalls calls;
  Pool pool(CountingBackend{&calls}, /*events_per_chunk=*/3);
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) held.push_back(pool.acquire());
  CHECK(calls.created == 3);
  CHECK(pool.statistics().available == 0);

  held.push_back(pool.acquire());  // none free: one more chunk
  CHECK(calls.created == 6);
  CHECK(pool.statistics().growths == 2);
  CHECK(pool.statistics().in_use == 4);
  CHECK(pool.statistics().available == 2);

  std::sort(held.begin(), held.end());
  CHECK(std::adjacent_find(held.begin(), held.end()) == held.end());  // never the same event twice
  for (int event : held) pool.release(event);
  CHECK(pool.statistics().available == 6);
  CHECK(calls.destroyed == 0);  // releasing never destroys
}

TEST_CASE("EventPool.reserve_creates_ahead_of_use") {
  BackendCalls calls;
  Pool pool(CountingBackend{&calls}, /*events_per_chunk=*/4);
  pool.reserve(10);
  CHECK(calls.created == 10);
  std::vector<int> held;
  for (int i = 0; i < 10; ++i) held.push_back(pool.acquire());
  CHECK(calls.created == 10);
  pool.reserve(2);  // none free: creates exactly two
  CHECK(calls.created == 12);
  pool.reserve(1);  // enough free already
  CHECK(calls.created == 12);
  for (int event : held) pool.release(event);
}

TEST_CASE("EventPool.steady_loop_creates_nothing_after_warm_up") {
  BackendCalls calls;
  Pool pool(CountingBackend{&calls});
  // A node chain's pattern: a few events in flight, released as work completes.
  auto one_step = [&pool] {
    const int a = pool.acquire();
    const int b = pool.acquire();
    pool.release(a);
    const int c = pool.acquire();
    pool.release(b);
    pool.release(c);
  };
  one_step();
  const int after_warm_up = calls.created;
  CHECK(after_warm_up == static_cast<int>(Pool::kDefaultEventsPerChunk));
  for (int step = 0; step < 10000; ++step) one_step();
  CHECK(calls.created == after_warm_up);
  CHECK(calls.destroyed == 0);
  CHECK(pool.statistics().growths == 1);
}

TEST_CASE("EventPool.destroys_every_event_once_with_the_pool") {
  BackendCalls calls;
  {
    Pool pool(CountingBackend{&calls}, /*events_per_chunk=*/2);
    std::vector<int> held;
    for (int i = 0; i < 5; ++i) held.push_back(pool.acquire());
    pool.release(held[1]);
    CHECK(calls.destroyed == 0);
    // held[0], [2], [3], [4] are still out: the pool destroys them too.
  }
  CHECK(calls.created == 6);
  CHECK(calls.destroyed == 6);
  std::vector<int> ids = calls.destroyed_ids;
  std::sort(ids.begin(), ids.end());
  std::vector<int> expected(6);
  std::iota(expected.begin(), expected.end(), 0);
  CHECK(ids == expected);
}

TEST_CASE("EventPool.lease_gives_its_event_back") {
  BackendCalls calls;
  Pool pool(CountingBackend{&calls});
  {
    Pool::Lease lease = pool.lease();
    CHECK(static_cast<bool>(lease));
    CHECK(pool.statistics().in_use == 1);
    Pool::Lease moved = std::move(lease);
    CHECK_FALSE(static_cast<bool>(lease));
    CHECK(pool.statistics().in_use == 1);
    const int event = moved.get();
    CHECK(event >= 0);
    moved.reset();
    CHECK(pool.statistics().in_use == 0);
    Pool::Lease again = pool.lease();
    CHECK(pool.statistics().in_use == 1);
  }
  CHECK(pool.statistics().in_use == 0);
  CHECK(calls.created == static_cast<int>(Pool::kDefaultEventsPerChunk));
}

TEST_CASE("EventPool.rejects_bad_use_without_changing_state") {
  BackendCalls calls;
  CHECK(weft::test::invalid_argument_message([&] { Pool(CountingBackend{&calls}, 0); }) ==
        "EventPool: 0 events per chunk (expected at least 1)");

  Pool pool(CountingBackend{&calls}, /*events_per_chunk=*/2);
  CHECK(weft::test::invalid_argument_message([&] { pool.release(0); }) ==
        "EventPool: release of an event while none is in use (expected an event from acquire(), released "
        "once)");
  const int held = pool.acquire();
#ifndef NDEBUG
  // Debug builds also catch a foreign event and a second release.
  const int other = held == 0 ? 1 : 0;  // created, but free
  CHECK(weft::test::invalid_argument_message([&] { pool.release(99); }) ==
        "EventPool: release of an event this pool did not create");
  CHECK(weft::test::invalid_argument_message([&] { pool.release(other); }) ==
        "EventPool: event released twice (it is already free)");
#endif
  const weft::EventPoolStatistics stats = pool.statistics();
  CHECK(stats.in_use == 1);
  CHECK(stats.available == 1);
  pool.release(held);
  CHECK(pool.statistics().available == 2);
}

TEST_CASE("EventPool.failed_growth_keeps_what_it_created") {
  BackendCalls calls;
  calls.fail_at_creation = 5;  // the second chunk of 4 fails at its second event
  {
    Pool pool(CountingBackend{&calls}, /*events_per_chunk=*/4);
    std::vector<int> held;
    for (int i = 0; i < 4; ++i) held.push_back(pool.acquire());
    CHECK_THROWS_AS(pool.acquire(), std::runtime_error);
    const weft::EventPoolStatistics stats = pool.statistics();
    CHECK(stats.created == 5);  // the one made before the failure stays in the pool
    CHECK(stats.in_use == 4);
    CHECK(stats.available == 1);
    calls.fail_at_creation = -1;
    held.push_back(pool.acquire());  // the survivor, no creation needed
    CHECK(calls.created == 5);
    for (int event : held) pool.release(event);
  }
  CHECK(calls.destroyed == 5);  // nothing leaked
}

TEST_CASE("EventPool.stress.4threads") {
  constexpr int kThreads = 4;
  constexpr int kRounds = 20000;
  constexpr int kMostHeldPerThread = 3;
  constexpr std::size_t kChunk = 4;
  BackendCalls calls;
  Pool pool(CountingBackend{&calls}, kChunk);

  // A pool grows only when every event is out, so it never holds more than
  // (events held at once by the others) + one chunk.
  constexpr int kMostCreated = kThreads * kMostHeldPerThread - 1 + static_cast<int>(kChunk);
  std::vector<std::atomic<int>> holders(kMostCreated);
  std::atomic<int> shared_events{0};   // an event handed to two holders at once
  std::atomic<int> foreign_events{0};  // an id beyond what may exist

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      int held[kMostHeldPerThread];
      for (int round = 0; round < kRounds; ++round) {
        const int count = 1 + (round + t) % kMostHeldPerThread;
        for (int k = 0; k < count; ++k) {
          held[k] = pool.acquire();
          if (held[k] < 0 || held[k] >= kMostCreated) {
            foreign_events.fetch_add(1, std::memory_order_relaxed);
            held[k] = -1;
            continue;
          }
          if (holders[static_cast<std::size_t>(held[k])].fetch_add(1, std::memory_order_relaxed) != 0)
            shared_events.fetch_add(1, std::memory_order_relaxed);
        }
        for (int k = 0; k < count; ++k) {
          if (held[k] < 0) continue;
          holders[static_cast<std::size_t>(held[k])].fetch_sub(1, std::memory_order_relaxed);
          pool.release(held[k]);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  CHECK(shared_events == 0);
  CHECK(foreign_events == 0);
  const weft::EventPoolStatistics stats = pool.statistics();
  CHECK(stats.in_use == 0);
  CHECK(stats.created <= static_cast<std::size_t>(kMostCreated));
  CHECK(stats.created == stats.growths * kChunk);
  CHECK(calls.destroyed == 0);
}

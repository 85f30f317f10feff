// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MemoryPool under concurrency: threads allocate random sizes between 8 bytes
// and the largest block, fill every block over its whole length with a
// pattern unique to the thread and the allocation, and check the pattern just
// before freeing, so two live blocks that overlap are caught. Pools are small
// enough that allocations fail and superblocks change size all the time.
// Meant to run under ThreadSanitizer as well (label "concurrency").
#include <weft/memory/memory_pool.hpp>

#include <doctest/doctest.h>

#include "../test_support.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using Pool = weft::MemoryPool<weft::HostSpace>;

// ThreadSanitizer makes every memory access many times slower: run fewer
// operations there (still hundreds of thousands per test).
#if defined(WEFT_TEST_UNDER_TSAN)
constexpr std::size_t kScale = 8;
#else
constexpr std::size_t kScale = 1;
#endif

constexpr std::size_t kMaxLivePerThread = 64;

struct Block {
  std::byte* ptr;
  std::size_t size;
  std::uint64_t tag;  // unique per thread and allocation
};

std::uint64_t pattern_word(std::uint64_t tag, std::size_t k) { return tag ^ (k * 0x9E3779B97F4A7C15ull); }

void fill(const Block& b) {
  const std::size_t words = b.size / 8;
  for (std::size_t k = 0; k < words; ++k) {
    const std::uint64_t w = pattern_word(b.tag, k);
    std::memcpy(b.ptr + 8 * k, &w, 8);
  }
  const std::uint64_t tail = pattern_word(b.tag, words);
  std::memcpy(b.ptr + 8 * words, &tail, b.size % 8);
}

bool intact(const Block& b) {
  const std::size_t words = b.size / 8;
  for (std::size_t k = 0; k < words; ++k) {
    std::uint64_t w;
    std::memcpy(&w, b.ptr + 8 * k, 8);
    if (w != pattern_word(b.tag, k)) return false;
  }
  const std::uint64_t tail = pattern_word(b.tag, words);
  return std::memcmp(b.ptr + 8 * words, &tail, b.size % 8) == 0;
}

struct Totals {
  std::atomic<std::size_t> allocations{0};
  std::atomic<std::size_t> frees{0};
  std::atomic<std::size_t> failures{0};   // allocate returned nullptr
  std::atomic<std::size_t> corrupted{0};  // a pattern changed while its block was live
  std::atomic<std::size_t> foreign{0};    // a block outside the pool
  std::atomic<std::size_t> rejected{0};   // deallocate threw: the pool disowned a block it handed out
};

// Runs a worker body, counting an exception (a deallocation the pool
// rejected) instead of letting it terminate the test program.
template <class Body>
void guarded(Totals& totals, Body&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    ++totals.rejected;
    MESSAGE("worker stopped: " << std::string(e.what()));
  }
}

// One thread's part: `iterations` steps, each an allocation or a free.
// Returns the blocks still live at the end.
std::vector<Block> churn(const Pool& pool, unsigned thread, std::size_t iterations, Totals& totals) {
  std::mt19937_64 rng(0x5eed0000u + thread);
  std::uniform_int_distribution<std::size_t> size_of(8, pool.max_block_size());
  std::vector<Block> live;
  live.reserve(kMaxLivePerThread);
  std::uint64_t serial = 0;
  std::size_t allocations = 0, frees = 0, failures = 0, corrupted = 0, foreign = 0;
  for (std::size_t i = 0; i < iterations; ++i) {
    const bool want_allocate = live.empty() || (live.size() < kMaxLivePerThread && (rng() & 1) != 0);
    if (want_allocate) {
      const std::size_t size = size_of(rng);
      auto* p = static_cast<std::byte*>(pool.allocate(size));
      if (p != nullptr) {
        ++allocations;
        if (!pool.owns(p)) ++foreign;
        const Block b{p, size, (std::uint64_t{thread} + 1) << 48 | ++serial};
        fill(b);
        live.push_back(b);
        continue;
      }
      ++failures;
      if (live.empty()) continue;
    }
    const std::size_t victim = rng() % live.size();
    if (!intact(live[victim])) ++corrupted;
    pool.deallocate(live[victim].ptr, live[victim].size);
    ++frees;
    live[victim] = live.back();
    live.pop_back();
  }
  totals.allocations += allocations;
  totals.frees += frees;
  totals.failures += failures;
  totals.corrupted += corrupted;
  totals.foreign += foreign;
  return live;
}

// Runs `threads` churners, then checks the statistics against what they hold
// (exact now that they are joined), frees everything and checks the pool is
// empty again.
// Returns how many allocations were refused.
std::size_t stress(const Pool& pool, unsigned threads, std::size_t iterations_per_thread) {
  Totals totals;
  std::vector<std::vector<Block>> left(threads);
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back(
        [&, t] { guarded(totals, [&] { left[t] = churn(pool, t, iterations_per_thread, totals); }); });
  }
  for (std::thread& w : workers) w.join();

  std::size_t live_blocks = 0, live_bytes_at_least = 0;
  for (const auto& blocks : left) {
    for (const Block& b : blocks) {
      ++live_blocks;
      live_bytes_at_least += pool.allocate_block_size(b.size);  // the fallback may have given more
    }
  }
  weft::MemoryPoolStatistics s = pool.get_usage_statistics();
  CHECK(s.consumed_blocks == live_blocks);
  CHECK(s.consumed_bytes >= live_bytes_at_least);
  CHECK(s.empty_superblocks + s.partly_full_superblocks + s.full_superblocks == s.superblocks);
  CHECK(s.reserved_bytes == (s.partly_full_superblocks + s.full_superblocks) * s.superblock_bytes);

  for (const auto& blocks : left) {
    for (const Block& b : blocks) {
      CHECK(intact(b));
      pool.deallocate(b.ptr, b.size);
    }
  }
  s = pool.get_usage_statistics();
  CHECK(s.consumed_blocks == 0);
  CHECK(s.consumed_bytes == 0);
  CHECK(s.reserved_bytes == 0);
  CHECK(s.empty_superblocks == s.superblocks);

  CHECK(totals.corrupted == 0);
  CHECK(totals.foreign == 0);
  CHECK(totals.rejected == 0);
  MESSAGE(threads << " threads: " << totals.allocations.load() << " allocations, " << totals.frees.load()
                  << " frees, " << totals.failures.load() << " allocations refused (pool full)");
  return totals.failures;
}

// A pool of `superblocks` superblocks of 4096 bytes (64- to 4096-byte blocks).
Pool tight_pool(std::size_t superblocks) { return Pool(weft::HostSpace{}, superblocks * 4096); }

}  // namespace

TEST_CASE("MemoryPool.stress.1thread") {
  const Pool pool = tight_pool(32);
  const std::size_t refused = stress(pool, 1, 1'000'000 / kScale);
  CHECK(refused > 0);  // the pool is small on purpose: exhaustion is exercised
}

TEST_CASE("MemoryPool.stress.2threads") {
  const Pool pool = tight_pool(56);
  const std::size_t refused = stress(pool, 2, 1'000'000 / kScale);
  CHECK(refused > 0);
}

TEST_CASE("MemoryPool.stress.4threads") {
  const Pool pool = tight_pool(96);
  const std::size_t refused = stress(pool, 4, 500'000 / kScale);
  CHECK(refused > 0);
}

TEST_CASE("MemoryPool.stress.roomy.2threads") {
  // Twice as many superblocks as blocks can ever be live, plus slack: every
  // request must be served on the first attempt, contention or not.
  const Pool pool = tight_pool(2 * 2 * kMaxLivePerThread + 16);
  const std::size_t refused = stress(pool, 2, 500'000 / kScale);
  CHECK(refused == 0);
}

TEST_CASE("MemoryPool.stress.cross_thread_free.2threads") {
  // Each thread frees the blocks the other allocated, so every block changes
  // hands: the pool's release/acquire pairs must order the old owner's reads
  // before the new owner's writes (ThreadSanitizer checks this).
  const Pool pool = tight_pool(48);
  const std::size_t per_thread = 300'000 / kScale;
  struct Mailbox {
    std::mutex mutex;
    std::deque<Block> blocks;
  };
  Mailbox mailboxes[2];
  std::atomic<unsigned> producers_done{0};
  Totals totals;
  auto worker = [&](unsigned me) {
    Mailbox& outbox = mailboxes[1 - me];
    Mailbox& inbox = mailboxes[me];
    std::mt19937_64 rng(0xc0ffeeu + me);
    std::uniform_int_distribution<std::size_t> size_of(8, pool.max_block_size());
    std::size_t produced = 0;
    auto free_one_from_inbox = [&] {
      Block b{};
      {
        const std::lock_guard<std::mutex> lock(inbox.mutex);
        if (inbox.blocks.empty()) return false;
        b = inbox.blocks.front();
        inbox.blocks.pop_front();
      }
      if (!intact(b)) ++totals.corrupted;
      pool.deallocate(b.ptr, b.size);
      ++totals.frees;
      return true;
    };
    // Done when both threads have produced everything (acquire: pairs with
    // the release increment, so every block pushed before it is in the
    // inbox) and the inbox is drained.
    while (produced < per_thread || producers_done.load(std::memory_order_acquire) < 2 ||
           free_one_from_inbox()) {
      bool room = false;
      if (produced < per_thread) {
        const std::lock_guard<std::mutex> lock(outbox.mutex);
        room = outbox.blocks.size() < kMaxLivePerThread;
      }
      if (room) {
        const std::size_t size = size_of(rng);
        if (auto* p = static_cast<std::byte*>(pool.allocate(size))) {
          ++totals.allocations;
          const Block b{p, size, (std::uint64_t{me} + 1) << 48 | ++produced};
          fill(b);
          {
            const std::lock_guard<std::mutex> lock(outbox.mutex);
            outbox.blocks.push_back(b);
          }
          // release: pairs with the acquire load in the loop condition.
          if (produced == per_thread) producers_done.fetch_add(1, std::memory_order_release);
        } else {
          ++totals.failures;
        }
      }
      if (!free_one_from_inbox() && !room) std::this_thread::yield();
    }
  };
  std::thread a([&] { guarded(totals, [&] { worker(0u); }); });
  std::thread b([&] { guarded(totals, [&] { worker(1u); }); });
  a.join();
  b.join();
  CHECK(totals.corrupted == 0);
  CHECK(totals.rejected == 0);
  CHECK(totals.allocations == 2 * per_thread);
  CHECK(totals.frees == 2 * per_thread);
  const weft::MemoryPoolStatistics s = pool.get_usage_statistics();
  CHECK(s.consumed_blocks == 0);
  CHECK(s.empty_superblocks == s.superblocks);
  MESSAGE(totals.allocations.load() << " blocks changed hands, " << totals.failures.load()
                                    << " allocations refused (pool full)");
}

namespace {

// The superblocks of the first 64-byte block of one thread and then of another.
std::pair<std::uintptr_t, std::uintptr_t> first_blocks_of_two_threads(const Pool& pool) {
  void* first = nullptr;
  void* second = nullptr;
  std::thread([&] { first = pool.allocate(64); }).join();
  std::thread([&] { second = pool.allocate(64); }).join();
  REQUIRE(first != nullptr);
  REQUIRE(second != nullptr);
  const auto superblock_of = [&](void* p) {
    return reinterpret_cast<std::uintptr_t>(p) / pool.superblock_size();
  };
  const std::pair<std::uintptr_t, std::uintptr_t> result{superblock_of(first), superblock_of(second)};
  pool.deallocate(first, 64);
  pool.deallocate(second, 64);
  CHECK(pool.get_usage_statistics().consumed_blocks == 0);
  return result;
}

}  // namespace

TEST_CASE("MemoryPool.threads_start_in_separate_superblocks_while_empty_ones_are_plenty.2threads") {
  // Each thread's hints start in its own stretch of superblocks (at least 64
  // apart here): with plenty of empty superblocks ahead, a thread takes one of
  // them rather than join another thread's, so the two do not contend on one
  // bitset word.
  const Pool pool(weft::HostSpace{}, 4096 * 4096);
  const auto [first, second] = first_blocks_of_two_threads(pool);
  CHECK(first != second);
}

TEST_CASE("MemoryPool.a_thread_joins_a_superblock_with_room_when_empty_ones_are_few.2threads") {
  // 16 superblocks of 64 blocks: fewer empty ones than a superblock's blocks,
  // so a size takes a fresh one only when none of its own has room.
  const Pool pool(weft::HostSpace{}, 16 * 4096);
  const auto [first, second] = first_blocks_of_two_threads(pool);
  CHECK(first == second);
}

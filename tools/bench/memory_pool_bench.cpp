// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MemoryPool against glibc malloc/free (default settings), same process, same
// threads: allocate+deallocate pairs, and batches (allocate 1000, then free
// the 1000), for 64, 256, 1024 and 4096 bytes, on 1 and --threads threads.
// Every thread does the same number of pairs on one shared pool; the figure is
// nanoseconds per pair per thread (wall time / pairs per thread), so equal
// figures on 1 and 2 threads mean throughput doubled.
#include "bench.hpp"

#include <weft/memory/memory_pool.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace {

using Pool = weft::MemoryPool<weft::HostSpace>;

constexpr std::size_t kBatch = 1000;

// Runs body(thread) on `threads` threads released together; returns the
// longest time any of them took, in seconds.
template <class Body>
double run_together(int threads, Body body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<double> took(static_cast<std::size_t>(threads), 0.0);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      ready.fetch_add(1, std::memory_order_relaxed);
      // acquire: pairs with the release store of `go` below.
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      took[static_cast<std::size_t>(t)] = weft::bench::seconds([&] { body(t); });
    });
  }
  while (ready.load(std::memory_order_relaxed) < threads) std::this_thread::yield();
  go.store(true, std::memory_order_release);
  for (std::thread& w : workers) w.join();
  return *std::max_element(took.begin(), took.end());
}

// The fastest of `repetitions` runs of run_together(threads, body).
template <class Body>
double best_run(int repetitions, int threads, Body body) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < std::max(1, repetitions); ++r) best = std::min(best, run_together(threads, body));
  return best;
}

struct PoolAllocator {
  const Pool& pool;
  void* allocate(std::size_t size) const { return pool.allocate(size); }
  void deallocate(void* p, std::size_t size) const { pool.deallocate(p, size); }
};

struct GlibcAllocator {
  void* allocate(std::size_t size) const { return std::malloc(size); }
  void deallocate(void* p, std::size_t) const { std::free(p); }
};

// ns per pair per thread, best of the repetitions.
template <class Allocator>
double pairs(const Allocator& a, std::size_t size, int threads, std::size_t n, int repetitions) {
  std::atomic<std::size_t> refused{0};
  const double best = best_run(repetitions, threads, [&](int) {
    for (std::size_t i = 0; i < n; ++i) {
      void* p = a.allocate(size);
      weft::bench::do_not_optimize(p);
      if (p == nullptr) refused.fetch_add(1, std::memory_order_relaxed);
      a.deallocate(p, size);
    }
  });
  if (refused.load() != 0)
    std::fprintf(stderr, "memory_pool bench: %zu allocations refused\n", refused.load());
  return best * 1e9 / static_cast<double>(n);
}

template <class Allocator>
double batches(const Allocator& a, std::size_t size, int threads, std::size_t rounds, int repetitions) {
  std::atomic<std::size_t> refused{0};
  const double best = best_run(repetitions, threads, [&](int) {
    std::vector<void*> held(kBatch);
    for (std::size_t r = 0; r < rounds; ++r) {
      for (void*& p : held) {
        p = a.allocate(size);
        weft::bench::do_not_optimize(p);
      }
      for (void* p : held) {
        if (p == nullptr) refused.fetch_add(1, std::memory_order_relaxed);
        a.deallocate(p, size);
      }
    }
  });
  if (refused.load() != 0)
    std::fprintf(stderr, "memory_pool bench: %zu allocations refused\n", refused.load());
  return best * 1e9 / static_cast<double>(rounds * kBatch);
}

}  // namespace

WEFT_BENCHMARK(memory_pool) {
  const std::size_t n = opt.quick ? 20'000 : 2'000'000;
  const std::size_t rounds = n / kBatch;
  std::vector<int> thread_counts{1};
  if (opt.threads != 1) thread_counts.push_back(opt.threads);
  // 64 MiB: room for every thread's batch of the largest blocks. Pools with
  // the report's defaults (64- to 4096-byte blocks, 4 KiB superblocks), and,
  // for batches, with 256 KiB superblocks: a batch of 4096-byte blocks then
  // fills 64 blocks per superblock instead of one.
  constexpr std::size_t kTotal = std::size_t{64} << 20;
  constexpr std::size_t kLargeSuperblock = std::size_t{256} << 10;
  for (const std::size_t size : {std::size_t{64}, std::size_t{256}, std::size_t{1024}, std::size_t{4096}}) {
    const Pool pool(weft::HostSpace{}, kTotal);
    const Pool large_superblocks(weft::HostSpace{}, kTotal, 0, 0, kLargeSuperblock);
    const GlibcAllocator glibc;
    for (const int threads : thread_counts) {
      const std::string params = "size=" + std::to_string(size) + " threads=" + std::to_string(threads);
      const double glibc_pairs = pairs(glibc, size, threads, n, opt.repetitions);
      const double glibc_batches = batches(glibc, size, threads, rounds, opt.repetitions);
      out.compare("memory_pool.pair", params, "ns/pair",
                  {"weft", pairs(PoolAllocator{pool}, size, threads, n, opt.repetitions)},
                  {"glibc", glibc_pairs});
      out.compare("memory_pool.batch1000", params, "ns/pair",
                  {"weft", batches(PoolAllocator{pool}, size, threads, rounds, opt.repetitions)},
                  {"glibc", glibc_batches});
      out.compare("memory_pool.batch1000", params + " sb=256KiB", "ns/pair",
                  {"weft", batches(PoolAllocator{large_superblocks}, size, threads, rounds, opt.repetitions)},
                  {"glibc", glibc_batches});
    }
  }
}

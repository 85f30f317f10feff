// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What each worker did, for tuning and for tests.
//
//   for (const weft::WorkerStats& s : executor.stats())
//     std::printf("worker %d (%s): %llu jobs, %llu steals\n", s.worker,
//                 weft::to_string(s.domain), s.jobs_run, s.steals);
#pragma once

#include <atomic>
#include <cstdint>

#include <weft/runtime/job.hpp>

namespace weft {

struct WorkerStats {
  int worker = 0;
  Domain domain = Domain::Cpu;           // the worker's priority
  unsigned long long jobs_run = 0;       // jobs it executed (from any queue)
  unsigned long long steals = 0;         // jobs it took from another worker's deque
  unsigned long long failed_steals = 0;  // steal attempts that found nothing
  unsigned long long sleeps = 0;         // times it went to sleep for lack of work
  int core = -1;                         // the core it is pinned to through hwloc (-1: unpinned)
  // A guest: a thread outside the pool that ran jobs of its TaskGroups while
  // it waited (Executor::borrow_guest()). stats() lists the workers, then
  // the guests that ran a job since the last reset_stats().
  bool guest = false;
};

// A counter one thread writes and any thread may read: relaxed load+store
// instead of a read-modify-write, since there is a single writer.
class OwnerCounter {
 public:
  void add(unsigned long long n = 1) noexcept {
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  unsigned long long get() const noexcept { return value_.load(std::memory_order_relaxed); }
  void reset() noexcept { value_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<unsigned long long> value_{0};
};

}  // namespace weft

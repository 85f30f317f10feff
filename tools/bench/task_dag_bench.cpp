// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The dynamic task-DAG: naive Fibonacci with one task per call and no
// cutoff, so nearly all the time is the runtimes' own per-task cost.
//
//   weft    TaskScheduler, the Kokkos report's Figure 3.4 algorithm (the
//           example in task_scheduler.hpp): F(n) spawns F(n-2) at High and
//           F(n-1) at Regular priority, respawns itself at High on their
//           when_all, and adds their results when it runs again.
//   oneTBB  a task_group per call: run(fib(n-1)), run(fib(n-2)), wait().
//   OpenMP  task shared(x) for each child, then taskwait.
//
// "run" (ns per task) is a whole fib(n) divided by the calls it makes,
// 2 fib(n+1) - 1 in every variant. "high_water" (blocks) is the most pool
// blocks weft's scheduler held at once during fib(n), measured in an untimed
// run: with F(n-2) spawned at High priority against every spawn at Regular.
// Every run's result is checked against a serial fib.
#include "bench.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

#include <omp.h>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <weft/backends/memory_space.hpp>
#include <weft/memory/memory_pool.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/executor_config.hpp>
#include <weft/runtime/future.hpp>
#include <weft/runtime/task_scheduler.hpp>

namespace {

using weft::bench::Options;
using weft::bench::Reporter;

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "task_dag: %s\n", message.c_str());
  std::exit(1);
}

long serial_fib(long n) {
  long a = 0, b = 1;
  for (long i = 0; i < n; ++i) {
    const long next = a + b;
    a = b;
    b = next;
  }
  return a;
}

// Calls of the naive recursion for fib(n): T(n) = 1 + T(n-1) + T(n-2) with
// T(0) = T(1) = 1, which is 2 fib(n+1) - 1.
long call_count(long n) { return 2 * serial_fib(n + 1) - 1; }

void check_result(const char* variant, long n, long got) {
  const long expected = serial_fib(n);
  if (got != expected) {
    fail(std::string(variant) + " computed fib(" + std::to_string(n) + ") = " + std::to_string(got) +
         ", expected " + std::to_string(expected));
  }
}

// ---- weft ------------------------------------------------------------------

// The report's algorithm; `Smaller` is the priority of the F(n-2) spawn and
// of the respawn (High in the report, Regular to measure what it buys).
template <weft::TaskPriority Smaller>
struct Fib {
  using value_type = long;
  weft::TaskScheduler sched;
  weft::Future<long> fib[2];
  long n;

  void operator()(weft::TaskMember&, long& result) {
    if (n < 2) {
      result = n;
      return;
    }
    if (!fib[0].is_null()) {
      result = fib[0].get() + fib[1].get();
      return;
    }
    fib[0] = weft::task_spawn(weft::TaskSingle(sched, Smaller), Fib{sched, {}, n - 2});
    fib[1] = weft::task_spawn(weft::TaskSingle(sched), Fib{sched, {}, n - 1});
    weft::Future<> both = sched.when_all(fib, 2);
    // The pool ran out: fails this task, and wait(sched) rethrows it.
    if (fib[0].is_null() || fib[1].is_null() || both.is_null()) {
      throw std::runtime_error("the memory pool is exhausted (a spawn returned a null future)");
    }
    weft::TaskScheduler::respawn(this, std::move(both), Smaller);
  }
};

template <weft::TaskPriority Smaller>
long weft_fib(const weft::TaskScheduler& sched, long n) {
  weft::Future<long> f = weft::host_spawn(weft::TaskSingle(sched), Fib<Smaller>{sched, {}, n});
  if (f.is_null()) fail("weft: the memory pool is exhausted (the root spawn returned a null future)");
  try {
    weft::wait(sched);
    return f.get();
  } catch (const std::exception& e) {
    fail(std::string("weft: fib(") + std::to_string(n) + ") failed: " + e.what());
  }
}

// Blocks the scheduler held at once during fib(n), the root's included.
// Called with nothing live, so that live_blocks() is exact: every block
// counted while tracking was on is freed before it is turned off.
template <weft::TaskPriority Smaller>
std::int64_t weft_high_water(const weft::TaskScheduler& sched, long n) {
  sched.track_memory(true);
  sched.reset_high_water();
  check_result("weft", n, weft_fib<Smaller>(sched, n));
  sched.track_memory(false);
  if (sched.live_blocks() != 0) {
    fail("weft: " + std::to_string(sched.live_blocks()) + " blocks still live after fib(" +
         std::to_string(n) + ") and its future are gone, expected 0");
  }
  return sched.high_water_blocks();
}

struct WeftResult {
  double run_s;
  std::int64_t high_water_high, high_water_regular;
  std::size_t block_bytes;  // the pool block one task takes
};

WeftResult time_weft(long n, const Options& opt) {
  weft::ExecutorConfig cfg;
  cfg.cpu_workers = opt.threads;
  weft::Executor executor(cfg);
  // fib(30) peaks near 160 blocks of 256 bytes on 2 workers (see
  // high_water); the room beyond that is for schedules far less depth-first.
  const weft::MemoryPool<weft::HostSpace> pool(weft::HostSpace{}, std::size_t{256} << 20, 64, 4096);
  WeftResult r{};
  {
    const weft::TaskScheduler sched(executor, pool);
    // Untimed: also the warm-up (first touch of the pool's pages).
    r.high_water_regular = weft_high_water<weft::TaskPriority::Regular>(sched, n);
    r.high_water_high = weft_high_water<weft::TaskPriority::High>(sched, n);
    r.run_s = weft::bench::best_seconds(
        opt.repetitions, [&] { check_result("weft", n, weft_fib<weft::TaskPriority::High>(sched, n)); });
    if (sched.failed_allocations() != 0) {
      fail("weft: " + std::to_string(sched.failed_allocations()) + " pool allocations failed, expected none");
    }
  }
  const weft::MemoryPoolStatistics stats = pool.get_usage_statistics();
  if (stats.consumed_blocks != 0) {
    fail("weft: the pool still holds " + std::to_string(stats.consumed_blocks) +
         " blocks after every task and future is gone, expected 0");
  }
  r.block_bytes =
      pool.allocate_block_size(sizeof(weft::detail::TaskBlock<Fib<weft::TaskPriority::High>, long>));
  return r;
}

// ---- oneTBB task_group -----------------------------------------------------

long tbb_fib(long n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  tbb::task_group g;
  g.run([&] { a = tbb_fib(n - 1); });
  g.run([&] { b = tbb_fib(n - 2); });
  g.wait();
  return a + b;
}

double time_tbb(long n, const Options& opt) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                            static_cast<std::size_t>(opt.threads));
  tbb::task_arena arena(opt.threads);
  return arena.execute([&] {
    check_result("oneTBB", n, tbb_fib(n));  // warm-up
    return weft::bench::best_seconds(opt.repetitions, [&] { check_result("oneTBB", n, tbb_fib(n)); });
  });
}

// ---- OpenMP tasks ------------------------------------------------------------

long omp_fib(long n) {
  if (n < 2) return n;
  long a = 0, b = 0;
#pragma omp task shared(a) firstprivate(n)
  a = omp_fib(n - 1);
#pragma omp task shared(b) firstprivate(n)
  b = omp_fib(n - 2);
#pragma omp taskwait
  return a + b;
}

long omp_fib_root(long n) {
  long result = 0;
#pragma omp parallel shared(result) firstprivate(n)
#pragma omp single
  result = omp_fib(n);
  return result;
}

double time_omp(long n, const Options& opt) {
  omp_set_num_threads(opt.threads);
  check_result("OpenMP", n, omp_fib_root(n));  // warm-up
  return weft::bench::best_seconds(opt.repetitions, [&] { check_result("OpenMP", n, omp_fib_root(n)); });
}

// ---- the benchmark -----------------------------------------------------------

void run_fib(long n, const Options& opt, Reporter& out) {
  // One runtime at a time: each one's threads are gone or idle while the next runs.
  const WeftResult weft = time_weft(n, opt);
  const double tbb = time_tbb(n, opt);
  const double omp = time_omp(n, opt);

  const std::string params = "n=" + std::to_string(n) + " threads=" + std::to_string(opt.threads);
  const double ns_per_task = 1e9 / static_cast<double>(call_count(n));
  out.compare("task_dag.fib.run", params, "ns/task", {"weft", weft.run_s * ns_per_task},
              {"oneTBB", tbb * ns_per_task});
  out.compare("task_dag.fib.run", params, "ns/task", {"weft", weft.run_s * ns_per_task},
              {"OpenMP", omp * ns_per_task});
  out.compare("task_dag.fib.high_water", params + " block=" + std::to_string(weft.block_bytes), "blocks",
              {"weft-high", static_cast<double>(weft.high_water_high)},
              {"weft-regular", static_cast<double>(weft.high_water_regular)});
}

}  // namespace

WEFT_BENCHMARK(task_dag_fib) {
  if (opt.quick) {
    run_fib(20, opt, out);
  } else {
    run_fib(25, opt, out);
    run_fib(30, opt, out);
  }
}

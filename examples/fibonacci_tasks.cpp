// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Naive Fibonacci on the dynamic task-DAG (Kokkos report, Figure 3.4): one
// task per call of fib(k). A task for k >= 2 spawns fib(k-2) at High priority
// and fib(k-1), then respawns itself to run again once both are done (a
// when_all), instead of blocking. Every task is one memory-pool block.
//
//   fibonacci_tasks [n] [--workers N]      (default n = 25)
#include <weft/weft.hpp>

#include <chrono>
#include <cstdio>
#include <string>

#include "cli_support.hpp"

namespace {

struct Fib {
  using value_type = long;
  weft::TaskScheduler sched;
  long n;
  weft::Future<long> fib[2] = {};

  void operator()(weft::TaskMember&, long& result) {
    if (n < 2) {
      result = n;
    } else if (!fib[0].is_null()) {  // second call: both inputs are complete
      result = fib[0].get() + fib[1].get();
    } else {  // first call: spawn the inputs, come back when they are done
      fib[0] = weft::task_spawn(weft::TaskSingle(sched, weft::TaskPriority::High), Fib{sched, n - 2});
      fib[1] = weft::task_spawn(weft::TaskSingle(sched), Fib{sched, n - 1});
      weft::Future<> both = sched.when_all(fib, 2);
      if (both.is_null()) throw std::runtime_error("fibonacci_tasks: the memory pool is too small");
      weft::TaskScheduler::respawn(this, both, weft::TaskPriority::High);
    }
  }
};

long serial_fib(long n) { return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2); }

int example_main(int argc, char** argv) {
  long n = 25;
  weft::ExecutorConfig config;
  CLI::App app("fibonacci_tasks: naive Fibonacci on weft's dynamic task-DAG, one task per call",
               "fibonacci_tasks");
  app.add_option("n", n, "which Fibonacci number")
      ->transform(weft::examples::whole_number<long>(0, 35))
      ->capture_default_str();
  app.add_option("--workers", config.cpu_workers, "CPU worker threads (default: the machine's cores)")
      ->transform(weft::examples::whole_number<int>(1, weft::examples::kMaxThreads));
  if (const auto code = weft::examples::parse(app, argc, argv)) return *code;

  weft::Executor executor(config);
  weft::MemoryPool<weft::HostSpace> pool(weft::HostSpace{}, 64u << 20);  // 64 MiB of task blocks
  weft::TaskScheduler sched(executor, pool);
  sched.track_memory(true);

  const auto start = std::chrono::steady_clock::now();
  weft::Future<long> result = weft::host_spawn(weft::TaskSingle(sched), Fib{sched, n});
  if (result.is_null()) {
    std::fprintf(stderr, "fibonacci_tasks: the memory pool could not hold the first task\n");
    return 1;
  }
  weft::wait(sched);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  const long expected = serial_fib(n);
  const long tasks = 2 * serial_fib(n + 1) - 1;  // one per call of fib
  std::printf("fib(%ld) = %ld (serial check: %s)\n", n, result.get(),
              result.get() == expected ? "ok" : "MISMATCH");
  std::printf("%ld tasks in %.2f ms (%.1f ns per task) on %d workers\n", tasks, ms, ms * 1e6 / double(tasks),
              executor.worker_count());
  result = weft::Future<long>();  // the last block goes back to the pool
  const weft::MemoryPoolStatistics stats = pool.get_usage_statistics();
  std::printf("pool: %zu bytes capacity, high-water %lld blocks live at once, %zu blocks in use now\n",
              stats.capacity_bytes, static_cast<long long>(sched.high_water_blocks()), stats.consumed_blocks);
  return result.is_null() && expected == serial_fib(n) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return weft::examples::run_main("fibonacci_tasks", [&] { return example_main(argc, argv); });
}

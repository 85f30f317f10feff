#include <weft/weft.hpp>

#include <atomic>
#include <cstdio>

int main() {
  weft::ExecutorConfig cfg;
  cfg.cpu_workers = 4;                                    // default: cores not used by GPU workers
  cfg.virtual_devices = 2;                                // GPU-domain work without a GPU
  cfg.steal_strategy = weft::StealStrategy::topological;  // or round_robin, random
  cfg.pin_threads = true;                                 // hwloc; warns and runs unpinned if it cannot
  weft::Executor executor(cfg);

  std::atomic<int> cpu_jobs{0}, gpu_jobs{0};
  weft::TaskGroup group(executor);
  for (int i = 0; i < 100; ++i) group.run([&] { ++cpu_jobs; });  // CPU work
  group.run([&] { ++gpu_jobs; }, weft::Domain::Gpu);             // runs on a GPU-priority worker
  group.wait();                                                  // rethrows the first exception
  std::printf("%d CPU jobs and %d GPU job ran on %d CPU and %d GPU-priority workers\n", cpu_jobs.load(),
              gpu_jobs.load(), executor.cpu_worker_count(), executor.gpu_worker_count());
  // prints, without a GPU: 100 CPU jobs and 1 GPU job ran on 4 CPU and 3 GPU-priority workers
}

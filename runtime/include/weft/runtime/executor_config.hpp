// How an Executor is set up.
//
//   weft::ExecutorConfig cfg;
//   cfg.cpu_workers = 4;
//   cfg.virtual_devices = 2;   // host virtual devices: GPU-domain jobs run on
//                              // GPU-priority workers even without a GPU
//   cfg.steal_strategy = weft::StealStrategy::topological;
//   weft::Executor executor(cfg);
#pragma once

#include <string>

namespace weft {

enum class StealStrategy {
  round_robin,  // victims self+1, self+2, ... wrapping (Ripple's best)
  random,       // a random victim per attempt
  topological,  // victims sharing a cache with us first, then the rest
};

const char* to_string(StealStrategy s) noexcept;
StealStrategy steal_strategy_from_string(const std::string& name);  // throws on an unknown name

struct ExecutorConfig {
  static constexpr int automatic = -1;

  // Workers with CPU priority. automatic: the physical cores not taken by GPU
  // workers (at least 1).
  int cpu_workers = automatic;
  // Workers with GPU priority. automatic: one more than the number of devices
  // in use (CUDA GPUs, or the virtual devices below) and 0 when there are none.
  int gpu_workers = automatic;
  // Host virtual devices to use when no CUDA device is (0: none).
  int virtual_devices = 0;
  // Use CUDA devices when present. false forces virtual devices even on a GPU machine.
  bool use_cuda = true;
  // Pin each worker to a core (hwloc). Ignored, with a warning, where the
  // topology cannot be read.
  bool pin_threads = false;
  StealStrategy steal_strategy = StealStrategy::round_robin;
  // Victims tried per round before a worker goes back to its own deques and,
  // after a few empty rounds, to sleep. automatic: twice the worker count.
  int steal_attempts = automatic;

  // `workers` CPU workers and nothing else: no GPU-priority workers, no
  // CUDA (what tests and CPU benchmarks race against their baselines with).
  static ExecutorConfig cpu_only(int workers) {
    ExecutorConfig config;
    config.cpu_workers = workers;
    config.gpu_workers = 0;
    config.use_cuda = false;
    return config;
  }
};

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How an Executor is set up.
//
//   weft::ExecutorConfig cfg;
//   cfg.cpu_workers = 4;
//   cfg.virtual_devices = 2;   // host virtual devices: GPU-domain jobs run on
//                              // GPU-priority workers even without a GPU
//   cfg.steal_strategy = weft::StealStrategy::topological;
//   weft::Executor executor(cfg);
//
// A default ExecutorConfig runs GPU-kind work anywhere: without a CUDA device
// it gets one host virtual device and one GPU-priority worker (taken from the
// cores, so the worker count stays one per core). WEFT_NUM_THREADS=n sets the
// CPU-priority workers of a config that leaves cpu_workers automatic.
#pragma once

#include <optional>
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

  // Workers with CPU priority. automatic: WEFT_NUM_THREADS when it is set,
  // else the physical cores not taken by GPU workers (at least 1).
  int cpu_workers = automatic;
  // Workers with GPU priority. automatic: one more than the number of devices
  // in use (CUDA GPUs, or the virtual devices below), 1 for the automatic
  // virtual device, and 0 when there are none.
  int gpu_workers = automatic;
  // Host virtual devices to use when no CUDA device is (0: none). automatic:
  // 1 when both worker counts are automatic (a default config, so GPU-kind
  // work runs on a machine without a GPU), else 0: a config that sets a
  // worker count gets exactly the workers it asks for.
  int virtual_devices = automatic;
  // Use CUDA devices when present. false forces virtual devices even on a GPU machine.
  bool use_cuda = true;
  // Pin each worker to a core (hwloc). Ignored, with a warning, where the
  // topology cannot be read.
  bool pin_threads = false;
  StealStrategy steal_strategy = StealStrategy::round_robin;
  // Victims tried per round before a worker goes back to its own deques and,
  // after a few empty rounds, to sleep. automatic: twice the worker count.
  int steal_attempts = automatic;
  // Threads outside the pool that may, at once, run their TaskGroups'
  // callables themselves while they wait (guests; docs/waiting.md), from 0
  // (the workers run every callable) to kMaxGuests.
  int guests = 4;

  // `workers` CPU workers and nothing else: no GPU-priority workers, no
  // virtual devices, no CUDA (what tests and CPU benchmarks race against
  // their baselines with).
  static ExecutorConfig cpu_only(int workers) {
    ExecutorConfig config;
    config.cpu_workers = workers;
    config.gpu_workers = 0;
    config.virtual_devices = 0;
    config.use_cuda = false;
    return config;
  }
};

// ---- how a config becomes workers (what the Executor constructor does, as
// pure functions for tests and tools such as `weft info`) ---------------------

// The environment variable that sets the default CPU-priority worker count,
// and the largest count it may ask for.
inline constexpr const char* kNumThreadsVariable = "WEFT_NUM_THREADS";
inline constexpr int kMaxNumThreads = 4096;
// The most guests (ExecutorConfig::guests) an executor keeps.
inline constexpr int kMaxGuests = 64;

// WEFT_NUM_THREADS's value: nullopt when `value` is null or empty (unset),
// else the count. Throws std::invalid_argument naming the variable and the
// value when it is not a whole number from 1 to kMaxNumThreads.
std::optional<int> parse_num_threads(const char* value);

// The host virtual devices `config` asks the device registry for (used only
// when no CUDA device is): virtual_devices, with automatic resolved.
int planned_virtual_devices(const ExecutorConfig& config) noexcept;

struct WorkerCounts {
  int cpu = 0;
  int gpu = 0;
};

// The workers an Executor for `config` starts on a machine with `cores`
// cores and `cuda_devices` CUDA devices in use, given WEFT_NUM_THREADS's
// value `num_threads` (null: unset). Throws std::invalid_argument for a bad
// config or, when the config leaves cpu_workers automatic, a bad variable.
WorkerCounts plan_workers(const ExecutorConfig& config, int cores, int cuda_devices, const char* num_threads);

}  // namespace weft

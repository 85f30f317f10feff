// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Executor configurations the suites share.
#pragma once

#include <weft/runtime/executor_config.hpp>

namespace weft::test {

// `workers` CPU workers and no GPU-priority workers.
inline ExecutorConfig cpu_only(int workers) { return ExecutorConfig::cpu_only(workers); }

// `workers` CPU workers that run everything: a thread outside the pool
// that waits for a task group runs none of its callables (no guests), so
// tests of the workers' own sleeping, waking and stealing keep their point.
inline ExecutorConfig workers_only(int workers) {
  ExecutorConfig config = cpu_only(workers);
  config.guests = 0;
  return config;
}

// `cpu` CPU workers plus GPU-priority workers for `virtual_devices` host
// virtual devices (none when it is 0): GPU-kind work without a GPU.
inline ExecutorConfig with_virtual_devices(int cpu, int virtual_devices) {
  ExecutorConfig config = cpu_only(cpu);
  config.virtual_devices = virtual_devices;
  if (virtual_devices > 0) config.gpu_workers = -1;
  return config;
}

}  // namespace weft::test

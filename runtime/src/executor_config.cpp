// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/runtime/executor_config.hpp>

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace weft {

std::optional<int> parse_num_threads(const char* value) {
  if (value == nullptr || *value == '\0') return std::nullopt;
  const std::string_view text(value);
  int count = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
  const bool digits_only = text.find_first_not_of("0123456789") == std::string_view::npos;
  if (!digits_only || error != std::errc{} || end != text.data() + text.size() || count < 1 ||
      count > kMaxNumThreads) {
    throw std::invalid_argument(std::string(kNumThreadsVariable) + "='" + std::string(text) +
                                "': expected a whole number of CPU-priority workers from 1 to " +
                                std::to_string(kMaxNumThreads) + " (unset it for one worker per core)");
  }
  return count;
}

int planned_virtual_devices(const ExecutorConfig& config) noexcept {
  if (config.virtual_devices != ExecutorConfig::automatic) return std::max(0, config.virtual_devices);
  const bool default_workers =
      config.cpu_workers == ExecutorConfig::automatic && config.gpu_workers == ExecutorConfig::automatic;
  return default_workers ? 1 : 0;
}

WorkerCounts plan_workers(const ExecutorConfig& config, int cores, int cuda_devices,
                          const char* num_threads) {
  if (config.cpu_workers < ExecutorConfig::automatic || config.gpu_workers < ExecutorConfig::automatic ||
      config.virtual_devices < ExecutorConfig::automatic) {
    throw std::invalid_argument(
        "ExecutorConfig: cpu_workers, gpu_workers and virtual_devices must be >= 0 "
        "(or ExecutorConfig::automatic), got " +
        std::to_string(config.cpu_workers) + ", " + std::to_string(config.gpu_workers) + " and " +
        std::to_string(config.virtual_devices));
  }
  WorkerCounts counts;
  if (config.gpu_workers != ExecutorConfig::automatic) {
    counts.gpu = config.gpu_workers;
  } else if (cuda_devices > 0) {
    counts.gpu = cuda_devices + 1;
  } else if (const int virtual_devices = planned_virtual_devices(config); virtual_devices > 0) {
    // The automatic virtual device only has to make GPU-kind work runnable:
    // one worker, which runs CPU jobs while it has no GPU work.
    counts.gpu = config.virtual_devices == ExecutorConfig::automatic ? 1 : virtual_devices + 1;
  }
  if (config.cpu_workers != ExecutorConfig::automatic) {
    counts.cpu = config.cpu_workers;
  } else if (const std::optional<int> n = parse_num_threads(num_threads)) {
    counts.cpu = *n;
  } else {
    counts.cpu = std::max(1, cores - counts.gpu);
  }
  if (config.guests < 0 || config.guests > kMaxGuests) {
    throw std::invalid_argument("ExecutorConfig: guests must be from 0 to " + std::to_string(kMaxGuests) +
                                ", got " + std::to_string(config.guests));
  }
  if (counts.cpu + counts.gpu == 0) {
    throw std::invalid_argument(
        "ExecutorConfig: an executor needs at least one worker (cpu_workers and "
        "gpu_workers are both 0)");
  }
  return counts;
}

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The process's logical CUDA device count (cuda_devices.hpp), in every build:
// without the CUDA backend nothing reads it, so it changes nothing.
#include <weft/backends/cuda_devices.hpp>

#include <weft/backends/detail/logical_devices.hpp>

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace weft {
namespace {

constexpr int kNotRead = -1;

// kNotRead until the variable is read or the count is set; then 0 (off) or
// the count. Acquire/release pairs the first read of the variable with later
// loads; the value is a plain int, so nothing else is published with it.
std::atomic<int> logical_count{kNotRead};

}  // namespace

int cuda_logical_devices() {
  int count = logical_count.load(std::memory_order_acquire);
  if (count != kNotRead) return count;
  // Throws for a bad value and stores nothing, so every later call reports
  // it again. Two threads reading at once read the same variable; the first
  // store wins, and a set_cuda_logical_devices in between wins over both.
  const int from_environment = detail::parse_logical_devices(std::getenv(detail::kLogicalDevicesVariable));
  if (logical_count.compare_exchange_strong(count, from_environment, std::memory_order_acq_rel)) {
    return from_environment;
  }
  return count;  // what the other thread stored
}

void set_cuda_logical_devices(int count) {
  if (count < 0 || count > detail::kMaxLogicalDevices) {
    throw std::invalid_argument("set_cuda_logical_devices(" + std::to_string(count) +
                                "): expected 0 (off) or a logical CUDA device count from 1 to " +
                                std::to_string(detail::kMaxLogicalDevices));
  }
  logical_count.store(count, std::memory_order_release);
}

}  // namespace weft

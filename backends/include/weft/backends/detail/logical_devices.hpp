// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Logical CUDA devices, the pure part: reading WEFT_CUDA_LOGICAL_DEVICES and
// mapping a logical device to the GPU it runs on. The process-wide setting is
// in cuda_devices.hpp (cuda_logical_devices); internal to weft.
//
//   weft::detail::parse_logical_devices("4");     // 4
//   weft::detail::parse_logical_devices(nullptr); // 0: not set, one weft device per GPU
//   weft::detail::parse_logical_devices("0");     // throws std::invalid_argument naming the variable
//   weft::detail::physical_device_of(3, 2);       // 1: logical device 3 runs on GPU 3 % 2
//
// Host code only, no CUDA needed.
#pragma once

#include <stdexcept>
#include <string>

namespace weft::detail {

inline constexpr const char* kLogicalDevicesVariable = "WEFT_CUDA_LOGICAL_DEVICES";
// More would be a typo rather than a test setup: each one has its own streams.
inline constexpr int kMaxLogicalDevices = 64;

// The logical device count `value` asks for, as WEFT_CUDA_LOGICAL_DEVICES:
// nullptr or "" (not set) gives 0, meaning off; a whole number from 1 to
// kMaxLogicalDevices gives itself. Anything else (signs, spaces, 0, too
// large) throws std::invalid_argument naming the variable and the value.
inline int parse_logical_devices(const char* value) {
  if (value == nullptr || *value == '\0') return 0;
  int count = 0;
  bool fits = true;
  for (const char* c = value; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') {
      fits = false;
      break;
    }
    count = count * 10 + (*c - '0');
    if (count > kMaxLogicalDevices) {
      fits = false;
      break;
    }
  }
  if (!fits || count < 1) {
    throw std::invalid_argument(std::string(kLogicalDevicesVariable) + "='" + value +
                                "': expected a whole number of logical CUDA devices from 1 to " +
                                std::to_string(kMaxLogicalDevices) + " (or the variable unset)");
  }
  return count;
}

// The GPU (CUDA device ordinal) logical device `logical` runs on: devices
// are dealt round robin over the `physical_count` GPUs present. The answer
// does not depend on how many logical devices there are, so a device keeps
// its GPU when the count changes. Without a GPU, or for a negative device
// (which CUDA then refuses by name), the device is passed through unchanged.
constexpr int physical_device_of(int logical, int physical_count) noexcept {
  return physical_count > 0 && logical >= 0 ? logical % physical_count : logical;
}

// How many CUDA devices weft sees: the logical count when one is set (0 for
// off), else the GPUs present; none without a GPU.
constexpr int visible_device_count(int logical_count, int physical_count) noexcept {
  if (physical_count <= 0) return 0;
  return logical_count > 0 ? logical_count : physical_count;
}

}  // namespace weft::detail

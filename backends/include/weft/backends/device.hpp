// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What weft knows about a device a graph can run on.
//
//   for (const weft::DeviceInfo& d : weft::DeviceRegistry(2).devices())
//     std::printf("%d %s %zu bytes\n", d.id, d.name.c_str(), d.total_memory);
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace weft {

enum class DeviceKind {
  Cuda,         // a CUDA GPU found through the CUDA runtime
  HostVirtual,  // a device simulated in host memory by the host backend
};

const char* to_string(DeviceKind kind) noexcept;

struct DeviceInfo {
  int id = 0;  // index among devices of the same kind
  DeviceKind kind = DeviceKind::HostVirtual;
  std::string name;
  std::size_t total_memory = 0;  // bytes
  std::size_t free_memory = 0;   // bytes, when it was discovered
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  // peer_access[j]: this device can read and write device j's memory
  // directly. Host virtual devices share host memory, so they are all peers.
  std::vector<bool> peer_access;
  // The GPU (CUDA device ordinal) a CUDA device runs on: id, unless
  // WEFT_CUDA_LOGICAL_DEVICES maps several devices onto one GPU
  // (cuda_devices.hpp). Host virtual devices: id.
  int physical_id = 0;
};

}  // namespace weft

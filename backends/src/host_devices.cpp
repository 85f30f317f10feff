// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/backends/host_devices.hpp>

#include <stdexcept>
#include <string>

#include <unistd.h>

namespace weft {

const char* to_string(DeviceKind kind) noexcept {
  switch (kind) {
    case DeviceKind::Cuda:
      return "cuda";
    case DeviceKind::HostVirtual:
      return "host-virtual";
  }
  return "unknown";
}

std::vector<DeviceInfo> host_virtual_devices(int count) {
  if (count < 0) {
    throw std::invalid_argument("host_virtual_devices: count must be >= 0, got " + std::to_string(count));
  }
  // Every virtual device reports the whole physical memory: they share it.
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  const std::size_t memory =
      pages > 0 && page_size > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size) : 0;
  std::vector<DeviceInfo> devices(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    DeviceInfo& d = devices[static_cast<std::size_t>(i)];
    d.id = i;
    d.physical_id = i;
    d.kind = DeviceKind::HostVirtual;
    d.name = "host-virtual-" + std::to_string(i);
    d.total_memory = memory;
    d.free_memory = memory;
    d.peer_access.assign(static_cast<std::size_t>(count), true);
  }
  return devices;
}

}  // namespace weft

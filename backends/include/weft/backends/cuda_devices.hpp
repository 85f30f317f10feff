// Discovery of CUDA devices.
//
//   weft::CudaDiscovery found = weft::discover_cuda_devices();
//   if (found.devices.empty()) std::puts(found.note.c_str());  // why none
//
// A build without the CUDA backend, or a machine without a GPU or driver,
// yields zero devices and a note saying why; discovery never throws for that.
#pragma once

#include <string>
#include <vector>

#include <weft/backends/config.hpp>
#include <weft/backends/device.hpp>

namespace weft {

struct CudaDiscovery {
  std::vector<DeviceInfo> devices;
  std::string note;  // empty when devices were found; otherwise the reason none were
};

// Queries the CUDA runtime once per call: count, names, memory and peer access.
CudaDiscovery discover_cuda_devices();

// True when this build contains the CUDA backend (it may still see no device).
constexpr bool cuda_backend_compiled() noexcept { return WEFT_HAS_CUDA != 0; }

}  // namespace weft

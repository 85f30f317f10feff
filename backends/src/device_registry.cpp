// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/backends/device_registry.hpp>

#include <weft/backends/cuda_devices.hpp>
#include <weft/backends/host_devices.hpp>

namespace weft {

DeviceRegistry::DeviceRegistry(int virtual_devices, bool use_cuda) {
  if (use_cuda) {
    CudaDiscovery found = discover_cuda_devices();
    devices_ = std::move(found.devices);
    cuda_note_ = std::move(found.note);
  } else {
    cuda_note_ = "CUDA devices not requested";
  }
  gpu_count_ = static_cast<int>(devices_.size());
  if (gpu_count_ == 0) devices_ = host_virtual_devices(virtual_devices);
}

}  // namespace weft

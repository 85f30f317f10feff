// Discovery through the CUDA runtime. "No driver" and "no device" are normal
// answers on build machines: they yield zero devices and a note, not an error.
#include <weft/backends/cuda_devices.hpp>

#include <string>

#include <cuda_runtime.h>

namespace weft {

CudaDiscovery discover_cuda_devices() {
  CudaDiscovery result;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    result.note = std::string("no CUDA device usable: ") + cudaGetErrorName(status) + " (" +
                  cudaGetErrorString(status) + ")";
    (void)cudaGetLastError();  // clear the sticky error so later calls start clean
    return result;
  }
  if (count == 0) {
    result.note = "the CUDA runtime reports zero devices";
    return result;
  }
  result.devices.resize(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    DeviceInfo& d = result.devices[static_cast<std::size_t>(i)];
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) == cudaSuccess) {
      d.name = prop.name;
      d.total_memory = prop.totalGlobalMem;
      d.compute_capability_major = prop.major;
      d.compute_capability_minor = prop.minor;
    }
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      d.free_memory = free_bytes;
    }
    d.id = i;
    d.kind = DeviceKind::Cuda;
    d.peer_access.assign(static_cast<std::size_t>(count), false);
    for (int j = 0; j < count; ++j) {
      int can = 0;
      if (i == j) {
        d.peer_access[static_cast<std::size_t>(j)] = true;
      } else if (cudaDeviceCanAccessPeer(&can, i, j) == cudaSuccess) {
        d.peer_access[static_cast<std::size_t>(j)] = can != 0;
      }
    }
  }
  return result;
}

}  // namespace weft

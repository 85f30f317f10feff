// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Discovery in a build without the CUDA backend (WEFT_ENABLE_CUDA=OFF or no nvcc).
#include <weft/backends/cuda_devices.hpp>

namespace weft {

CudaDiscovery discover_cuda_devices() {
  return {{}, "weft was built without the CUDA backend (WEFT_ENABLE_CUDA=OFF or no nvcc found)"};
}

}  // namespace weft

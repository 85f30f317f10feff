// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Memory spaces with the CUDA backend compiled in: device memory through
// cudaMalloc, page-locked host memory through cudaMallocHost.
#include <weft/backends/memory_space.hpp>

#include <cstring>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "cuda_device_map.hpp"
#include "host_pages.hpp"

namespace weft {
namespace {

std::string describe(cudaError_t status) {
  (void)cudaGetLastError();  // clear a sticky error so the next call starts clean
  return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}

// Makes `device` current while alive, then gives the caller its device back
// (`previous_` is CUDA's own ordinal, from cudaGetDevice).
class CurrentDevice {
 public:
  explicit CurrentDevice(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    status_ = detail::set_cuda_device(device);
  }
  ~CurrentDevice() {
    if (previous_ >= 0) (void)cudaSetDevice(previous_);
  }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;
  cudaError_t status() const noexcept { return status_; }

 private:
  int previous_ = -1;
  cudaError_t status_ = cudaSuccess;
};

// Empty when `device` can be used, else why not.
std::string device_problem(int device) {
  const detail::CudaDeviceCount count = detail::cuda_device_count();
  if (count.status != cudaSuccess) return "no CUDA device usable: " + describe(count.status);
  if (device < 0 || device >= count.visible) {
    return "device " + std::to_string(device) + " does not exist (" + detail::describe(count) + ")";
  }
  return {};
}

}  // namespace

bool HostPinnedSpace::pins_memory() {
  // Logical devices do not matter here: any GPU will do.
  static const bool pins = [] {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return count > 0;
  }();
  return pins;
}

void* HostPinnedSpace::allocate(std::size_t bytes) const {
  if (!pins_memory()) return detail::allocate_host_pages(bytes, name());
  if (bytes == 0) return nullptr;
  void* ptr = nullptr;
  const cudaError_t status = cudaMallocHost(&ptr, bytes);
  if (status != cudaSuccess) {
    throw AllocationError(std::string(name()) + ": cudaMallocHost of " + std::to_string(bytes) +
                          " bytes failed: " + describe(status));
  }
  return ptr;
}

void HostPinnedSpace::deallocate(void* ptr, std::size_t /*bytes*/) const noexcept {
  if (ptr == nullptr) return;
  if (pins_memory()) {
    (void)cudaFreeHost(ptr);
  } else {
    detail::free_host_pages(ptr);
  }
}

void HostPinnedSpace::copy_from_host(void* dst, const void* src, std::size_t bytes) const {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

void HostPinnedSpace::copy_to_host(void* dst, const void* src, std::size_t bytes) const {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

void* CudaSpace::allocate(std::size_t bytes) const {
  if (bytes == 0) return nullptr;
  const std::string problem = device_problem(device);
  if (!problem.empty()) {
    throw AllocationError(std::string(name()) + ": cannot allocate " + std::to_string(bytes) + " bytes on " +
                          detail::device_words(device) + ": " + problem);
  }
  CurrentDevice current(device);
  void* ptr = nullptr;
  cudaError_t status = current.status();
  if (status == cudaSuccess) status = cudaMalloc(&ptr, bytes);
  if (status != cudaSuccess) {
    throw AllocationError(std::string(name()) + ": cudaMalloc of " + std::to_string(bytes) + " bytes on " +
                          detail::device_words(device) + " failed: " + describe(status));
  }
  return ptr;
}

void CudaSpace::deallocate(void* ptr, std::size_t /*bytes*/) const noexcept {
  if (ptr == nullptr) return;
  CurrentDevice current(device);
  (void)cudaFree(ptr);
}

void CudaSpace::copy_from_host(void* dst, const void* src, std::size_t bytes) const {
  if (bytes == 0) return;
  CurrentDevice current(device);
  const cudaError_t status = cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(name()) + ": copying " + std::to_string(bytes) + " bytes to " +
                             detail::device_words(device) + " failed: " + describe(status));
  }
}

void CudaSpace::copy_to_host(void* dst, const void* src, std::size_t bytes) const {
  if (bytes == 0) return;
  CurrentDevice current(device);
  const cudaError_t status = cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost);
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(name()) + ": copying " + std::to_string(bytes) + " bytes from " +
                             detail::device_words(device) + " failed: " + describe(status));
  }
}

}  // namespace weft

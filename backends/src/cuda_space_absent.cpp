// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Memory spaces in a build without the CUDA backend: HostPinnedSpace is plain
// host memory and CudaSpace cannot allocate.
#include <weft/backends/memory_space.hpp>

#include <cstring>
#include <stdexcept>
#include <string>

#include "host_pages.hpp"

namespace weft {
namespace {

[[noreturn]] void no_cuda(const std::string& what) {
  throw std::runtime_error(
      std::string(CudaSpace::name()) + ": cannot " + what +
      ": weft was built without the CUDA backend (WEFT_ENABLE_CUDA=OFF or no nvcc found)");
}

}  // namespace

bool HostPinnedSpace::pins_memory() { return false; }

void* HostPinnedSpace::allocate(std::size_t bytes) const {
  return detail::allocate_host_pages(bytes, name());
}

void HostPinnedSpace::deallocate(void* ptr, std::size_t /*bytes*/) const noexcept {
  detail::free_host_pages(ptr);
}

void HostPinnedSpace::copy_from_host(void* dst, const void* src, std::size_t bytes) const {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

void HostPinnedSpace::copy_to_host(void* dst, const void* src, std::size_t bytes) const {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

void* CudaSpace::allocate(std::size_t bytes) const {
  if (bytes == 0) return nullptr;
  throw AllocationError(std::string(name()) + ": cannot allocate " + std::to_string(bytes) +
                        " bytes on device " + std::to_string(device) +
                        ": weft was built without the CUDA backend (WEFT_ENABLE_CUDA=OFF or no nvcc found)");
}

// Nothing can have been allocated, so there is nothing to free.
void CudaSpace::deallocate(void* /*ptr*/, std::size_t /*bytes*/) const noexcept {}

void CudaSpace::copy_from_host(void* /*dst*/, const void* /*src*/, std::size_t bytes) const {
  if (bytes != 0) no_cuda("copy " + std::to_string(bytes) + " bytes to a device");
}

void CudaSpace::copy_to_host(void* /*dst*/, const void* /*src*/, std::size_t bytes) const {
  if (bytes != 0) no_cuda("copy " + std::to_string(bytes) + " bytes from a device");
}

}  // namespace weft

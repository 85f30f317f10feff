// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/backends/memory_space.hpp>

#include <weft/backends/detail/checked_size.hpp>

#include <cstdlib>
#include <cstring>
#include <string>

#include "host_pages.hpp"

namespace weft {
namespace detail {

void* allocate_host_pages(std::size_t bytes, const char* space) {
  if (bytes == 0) return nullptr;
  constexpr std::size_t page = HostSpace::alignment;
  // std::aligned_alloc wants a size that is a multiple of the alignment.
  std::size_t rounded = 0;
  if (!checked_add(bytes, page - 1, rounded)) {
    throw AllocationError(std::string(space) + ": cannot allocate " + std::to_string(bytes) +
                          " bytes (larger than the address space)");
  }
  rounded = rounded / page * page;
  void* ptr = std::aligned_alloc(page, rounded);
  if (ptr == nullptr) {
    throw AllocationError(std::string(space) + ": cannot allocate " + std::to_string(bytes) +
                          " bytes of host memory (out of memory)");
  }
  return ptr;
}

void free_host_pages(void* ptr) noexcept { std::free(ptr); }

}  // namespace detail

void* HostSpace::allocate(std::size_t bytes) const { return detail::allocate_host_pages(bytes, name()); }

void HostSpace::deallocate(void* ptr, std::size_t /*bytes*/) const noexcept { detail::free_host_pages(ptr); }

void HostSpace::copy_from_host(void* dst, const void* src, std::size_t bytes) const {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

void HostSpace::copy_to_host(void* dst, const void* src, std::size_t bytes) const {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

}  // namespace weft

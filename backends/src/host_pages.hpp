// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Page-aligned host allocation shared by HostSpace and the HostPinnedSpace
// fallback (private to the backends library).
#pragma once

#include <cstddef>

namespace weft::detail {

// bytes == 0 returns nullptr; failure throws AllocationError naming `space`.
void* allocate_host_pages(std::size_t bytes, const char* space);
void free_host_pages(void* ptr) noexcept;

}  // namespace weft::detail

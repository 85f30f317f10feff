// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one hook MemoryPool offers the layers above it: a function that a
// host-side allocate() or deallocate() calls while one is set. The runtime
// sets it while some Executor has observers (observer.hpp), so that tools
// see pool allocations without memory/ knowing about executors.
//
//   weft::set_memory_pool_hook(&my_hook);  // process-wide; null unsets it
//
// Unset, allocate() and deallocate() pay one relaxed load and a branch.
// Device-side allocations (CudaSpace pools, in kernels) are not reported.
#pragma once

#include <atomic>
#include <cstddef>

namespace weft {

// allocated: true after allocate() (ptr null when it found no room), false
// after deallocate(). size: the size the caller asked for.
using MemoryPoolHook = void (*)(const void* pool, const char* space, const void* ptr, std::size_t size,
                                bool allocated) noexcept;

namespace detail {
// A plain function pointer (code, no data to publish): relaxed loads and stores do.
inline std::atomic<MemoryPoolHook> memory_pool_hook{nullptr};
}  // namespace detail

// Sets the process's hook (null: none); returns the one it replaces.
inline MemoryPoolHook set_memory_pool_hook(MemoryPoolHook hook) noexcept {
  return detail::memory_pool_hook.exchange(hook, std::memory_order_relaxed);
}

namespace detail {
inline void report_to_memory_pool_hook(const void* pool, const char* space, const void* ptr, std::size_t size,
                                       bool allocated) noexcept {
  if (MemoryPoolHook hook = memory_pool_hook.load(std::memory_order_relaxed)) [[unlikely]]
    hook(pool, space, ptr, size, allocated);
}
}  // namespace detail

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A linear (bump) arena over one buffer: allocating moves an offset forward,
// reset() moves it back to the start. There is no per-allocation free. This is
// the allocation strategy of Ripple's MultiarchAllocator (Ripple section 5.1):
// cheap enough to use while a graph runs, emptied between runs.
//
//   weft::LinearArena& arena = allocator.cpu_allocator();   // see multiarch_allocator.hpp
//   auto* scratch = static_cast<double*>(arena.allocate(1000 * sizeof(double), alignof(double)));
//   ...
//   arena.reset();   // when nothing allocated from it is in use any more
//
// Thread safe: any number of threads may allocate from one arena at once (a
// CAS moves the offset, so ranges never overlap). reset() must not run while
// another thread allocates from the arena or uses its memory; the caller's
// synchronization (for example the end of a graph run) orders the old uses
// before the new ones.
//
// The buffer may be device memory (device_memory() says so): the arena only
// does arithmetic on its addresses, never touches them.
#pragma once

#include <weft/backends/memory_space.hpp>

#include <atomic>
#include <cstddef>
#include <string>

namespace weft {

// Thrown by LinearArena::allocate when the arena has no room left; what()
// names the arena, the request and the bytes that remain.
class ArenaExhausted : public AllocationError {
 public:
  using AllocationError::AllocationError;
};

class LinearArena {
 public:
  // Does not own `base`; the caller keeps it alive longer than the arena.
  LinearArena(std::string name, void* base, std::size_t capacity, bool device_memory) noexcept;
  LinearArena(const LinearArena&) = delete;
  LinearArena& operator=(const LinearArena&) = delete;

  // `bytes` at an address that is a multiple of `alignment` (a power of two).
  // bytes == 0 returns nullptr. No room: throws ArenaExhausted and changes
  // nothing. A bad alignment throws std::invalid_argument.
  void* allocate(std::size_t bytes, std::size_t alignment = alignof(std::max_align_t));
  // The same, but returns nullptr instead of throwing.
  void* try_allocate(std::size_t bytes, std::size_t alignment = alignof(std::max_align_t)) noexcept;

  // Empties the arena (see the header comment for when that is allowed).
  void reset() noexcept;

  const std::string& name() const noexcept { return name_; }
  void* data() const noexcept { return base_; }
  std::size_t capacity() const noexcept { return capacity_; }
  // Bytes handed out since the last reset, alignment padding included.
  std::size_t used() const noexcept;
  std::size_t remaining() const noexcept { return capacity_ - used(); }
  bool device_memory() const noexcept { return device_memory_; }
  bool contains(const void* ptr) const noexcept;

 private:
  std::string name_;
  std::byte* base_;
  std::size_t capacity_;
  bool device_memory_;
  alignas(64) std::atomic<std::size_t> used_{0};  // its own cache line: the only word threads write
};

}  // namespace weft

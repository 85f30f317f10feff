// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MemoryPool<Space>: a finite, lock-free pool of variable-size blocks carved
// from one span of a memory space (the superblock pool of the Kokkos task-DAG
// report, section 2.5; the algorithm is described in memory_pool_handle.hpp).
//
//   weft::MemoryPool<weft::HostSpace> pool(weft::HostSpace{}, 16 << 20);  // 16 MiB
//   void* task = pool.allocate(200);        // a 256-byte block, or nullptr
//   if (task != nullptr) pool.deallocate(task, 200);
//   weft::MemoryPoolStatistics s = pool.get_usage_statistics();
//
// Construction: MemoryPool(space, min_total_alloc_size, min_block_alloc_size
// = 0, max_block_alloc_size = 0, min_superblock_size = 0). A 0 asks for the
// report's default: a 64-byte smallest block, a 4096-byte largest block, a
// superblock as large as the largest block. A default never breaks the
// requirement below by itself: it is capped by the sizes given above it (the
// smallest block by the largest, the superblock and the total; the largest
// by the superblock and the total) and is never below the smallest block.
// Block and superblock sizes round up to powers of two,
// the total up to whole superblocks (capacity() >= min_total_alloc_size).
// The requirement 0 < min_block <= max_block <= superblock <= total is checked
// on the values after defaults and before rounding; a broken one throws
// std::invalid_argument naming it. So does a superblock holding more than
// 32768 smallest blocks (its bitset would be slow to scan).
//
// allocate(size, attempt_limit = 1) returns nullptr, and never blocks or
// throws, when size is 0, when size > max_block_size() (such requests are not
// served at all), or when `attempt_limit` searches found no room: it never
// crashes, and a later call succeeds once blocks are freed. Small requests may
// get a larger block when no better superblock has room (the report's
// fallback); deallocate with the size you asked for either way.
//
// Threads: allocate and deallocate are safe from any number of host threads
// at once; deallocate may run on another thread than the allocate. Each
// thread has its own hints, starting in its own stretch of superblocks; a
// size takes a fresh superblock only when none of its own has a free block,
// so threads allocating the same size share a superblock while it has room.
//
// Failure means full: allocate() returns nullptr only if no superblock it
// looked at could serve the request at that moment (from its size, fresh, or
// by a larger block); requests that fill the pool exactly are all served,
// from any number of threads (memory_pool_handle.hpp states it exactly, with
// its one race: a block freed behind a running search).
//
// Tuning (report section 2.5.4): with the default superblock (= largest
// block) a largest-size block fills a superblock by itself, so every such
// allocation after the first goes through the search (about twice the cost
// of a pair that stays in one superblock). A search that ends in a fresh
// superblock looks at every superblock's header, so a size should fill many
// blocks per superblock: when many large blocks are live at once, ask for a
// larger min_superblock_size (for example 64 times the largest block).
//
// Spaces: the pool's blocks and its state live in `Space`. For host-accessible
// spaces (HostSpace, HostPinnedSpace) allocate/deallocate work on the host.
// For CudaSpace they work in device code only, through handle(); the host can
// still read the sizes and the statistics (copied from the device).
//
// Bad deallocations (a foreign pointer, a wrong size, a double free) throw
// std::invalid_argument in every build type; see memory_pool_handle.hpp.
//
// Ownership: a MemoryPool owns its memory and is move-only; handles taken
// from it stay valid across moves and die with the memory.
#pragma once

#include <weft/backends/memory_space.hpp>
#include <weft/memory/memory_pool_geometry.hpp>
#include <weft/memory/memory_pool_handle.hpp>
#include <weft/memory/memory_pool_hook.hpp>
#include <weft/memory/memory_pool_statistics.hpp>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace weft {

template <MemorySpace Space>
class MemoryPool {
 public:
  using memory_space = Space;
  using usage_statistics = MemoryPoolStatistics;

  // An empty pool: capacity 0, every allocation returns nullptr.
  MemoryPool() = default;

  MemoryPool(const Space& space, std::size_t min_total_alloc_size, std::size_t min_block_alloc_size = 0,
             std::size_t max_block_alloc_size = 0, std::size_t min_superblock_size = 0)
      : MemoryPool(space, detail::make_pool_geometry(min_total_alloc_size, min_block_alloc_size,
                                                     max_block_alloc_size, min_superblock_size)) {}

  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;
  MemoryPool(MemoryPool&& other) noexcept
      : data_(std::move(other.data_)),
        metadata_(std::move(other.metadata_)),
        handle_(std::exchange(other.handle_, MemoryPoolHandle{})) {}
  MemoryPool& operator=(MemoryPool&& other) noexcept {
    if (this != &other) {
      data_ = std::move(other.data_);
      metadata_ = std::move(other.metadata_);
      handle_ = std::exchange(other.handle_, MemoryPoolHandle{});
    }
    return *this;
  }
  ~MemoryPool() = default;

  // See the header comment. Host threads; host-accessible spaces only.
  void* allocate(std::size_t size, int attempt_limit = 1) const noexcept requires(Space::host_accessible) {
    void* ptr = handle_.allocate(size, attempt_limit);
    detail::report_to_memory_pool_hook(this, Space::name(), ptr, size, true);  // memory_pool_hook.hpp
    return ptr;
  }

  // Frees a block from allocate(size). Throws std::invalid_argument, changing
  // nothing, for a pointer this pool did not hand out (or already took back),
  // or for a size that does not fit the block. A null pointer is ignored.
  void deallocate(void* ptr, std::size_t size) const requires(Space::host_accessible) {
    handle_.deallocate(ptr, size);
    if (ptr != nullptr) detail::report_to_memory_pool_hook(this, Space::name(), ptr, size, false);
  }

  std::size_t allocate_block_size(std::size_t size) const noexcept {
    return handle_.allocate_block_size(size);
  }
  std::size_t capacity() const noexcept { return handle_.capacity(); }
  std::size_t min_block_size() const noexcept { return handle_.min_block_size(); }
  std::size_t max_block_size() const noexcept { return handle_.max_block_size(); }
  std::size_t superblock_size() const noexcept { return handle_.superblock_size(); }
  std::size_t superblock_count() const noexcept { return handle_.superblock_count(); }
  bool owns(const void* ptr) const noexcept { return handle_.owns(ptr); }

  // For device code (and host code that wants a trivially copyable view).
  MemoryPoolHandle handle() const noexcept { return handle_; }
  const Space& space() const noexcept { return data_.space(); }

  // Exact once every thread or kernel using the pool is done; a snapshot
  // meanwhile (see memory_pool_statistics.hpp).
  MemoryPoolStatistics get_usage_statistics() const {
    const detail::PoolGeometry& g = handle_.geometry();
    if (g.capacity == 0) return detail::summarize_pool_metadata(g, nullptr);
    if constexpr (Space::host_accessible) {
      return detail::summarize_pool_metadata(g, metadata_.data());
    } else {
      std::vector<std::uint64_t> copy((g.metadata_bytes() + sizeof(std::uint64_t) - 1) /
                                      sizeof(std::uint64_t));
      metadata_.space().copy_to_host(copy.data(), metadata_.data(), g.metadata_bytes());
      return detail::summarize_pool_metadata(g, copy.data());
    }
  }
  void get_usage_statistics(MemoryPoolStatistics& out) const { out = get_usage_statistics(); }

 private:
  MemoryPool(const Space& space, const detail::PoolGeometry& g)
      : data_(space, g.capacity), metadata_(space, g.metadata_bytes()) {
    const std::vector<std::byte> image = detail::initial_pool_metadata(g);
    space.copy_from_host(metadata_.data(), image.data(), image.size());
    handle_ = MemoryPoolHandle(g, data_.data(), metadata_.data());
  }

  SpaceBuffer<Space> data_;
  SpaceBuffer<Space> metadata_;
  MemoryPoolHandle handle_;
};

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The shared state behind a View's data: the label, the reference count and
// what to do when the last View goes (Kokkos tutorial, "Allocation and
// reference-counting semantics"). Views hold a pointer to one record; copies
// share it. Internal to the views layer.
//
// Which record a View gets:
//   View(label, n...)               SpaceAllocation: frees through the space
//   View(label, pool, n...)         PoolAllocation: gives the block back to the pool
//   View(label, arena, n...)        ViewRecord: arena memory goes with arena.reset()
//   View(label, pointer, n...)      ViewRecord, not counted: unmanaged, only the label is shared
//   View(pointer, n...)             no record at all
#pragma once

#include <weft/backends/memory_space.hpp>
#include <weft/memory/memory_pool.hpp>
#include <weft/views/view_errors.hpp>

#include <atomic>
#include <cstddef>
#include <string>
#include <utility>

namespace weft::detail {

class ViewRecord {
 public:
  // `counts_use`: false for a labelled unmanaged View, whose use_count() is 0.
  ViewRecord(std::string label, bool counts_use) : label_(std::move(label)), counts_use_(counts_use) {}
  virtual ~ViewRecord() = default;
  ViewRecord(const ViewRecord&) = delete;
  ViewRecord& operator=(const ViewRecord&) = delete;

  // A new reference comes from an existing one, so it needs no ordering.
  void retain() noexcept { references_.fetch_add(1, std::memory_order_relaxed); }

  // The release half publishes this View's writes to whoever frees the data;
  // the acquire half, in the thread that drops the last reference, makes
  // every other View's writes happen before the free.
  void release() noexcept {
    if (references_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  std::size_t use_count() const noexcept {
    return counts_use_ ? references_.load(std::memory_order_relaxed) : 0;
  }
  const std::string& label() const noexcept { return label_; }

 private:
  std::atomic<std::size_t> references_{1};
  std::string label_;
  bool counts_use_;
};

// Memory from Space::allocate, returned with Space::deallocate. Allocating in
// the constructor means a failed allocation leaves nothing to clean up.
template <MemorySpace Space>
class SpaceAllocation final : public ViewRecord {
 public:
  SpaceAllocation(std::string label, const Space& space, std::size_t bytes)
      : ViewRecord(std::move(label), true),
        space_(space),
        data_(bytes != 0 ? space.allocate(bytes) : nullptr),
        bytes_(bytes) {}
  ~SpaceAllocation() override {
    if (data_ != nullptr) space_.deallocate(data_, bytes_);
  }

  void* data() const noexcept { return data_; }

 private:
  Space space_;
  void* data_;
  std::size_t bytes_;
};

// A block of a MemoryPool, returned to it. The pool must outlive the Views.
// Host-accessible spaces only: a device pool's blocks are freed in kernels.
// A pool that cannot serve the request (exhausted, or a request above its
// largest block) throws AllocationError naming the View and the size.
template <MemorySpace Space>
class PoolAllocation final : public ViewRecord {
  static_assert(Space::host_accessible,
                "a View can take a pool block on the host only in a host-accessible space");

 public:
  PoolAllocation(std::string label, const MemoryPool<Space>& pool, std::size_t bytes)
      : ViewRecord(std::move(label), true),
        pool_(&pool),
        data_(bytes != 0 ? pool.allocate(bytes) : nullptr),
        bytes_(bytes) {
    if (data_ == nullptr && bytes != 0) {
      const MemoryPoolStatistics usage = pool.get_usage_statistics();
      throw AllocationError(view_name(this->label()) + ": MemoryPool<" + Space::name() + "> cannot provide " +
                            std::to_string(bytes) + " bytes (largest block " +
                            std::to_string(pool.max_block_size()) + " bytes, " +
                            std::to_string(usage.consumed_bytes) + " of " + std::to_string(pool.capacity()) +
                            " bytes in use)");
    }
  }
  // deallocate only throws for a pointer or size the pool never handed out,
  // which this record cannot produce; a throw here would mean a corrupted pool
  // and ends the program (destructors are noexcept).
  ~PoolAllocation() override {
    if (data_ != nullptr) pool_->deallocate(data_, bytes_);
  }

  void* data() const noexcept { return data_; }

 private:
  const MemoryPool<Space>* pool_;
  void* data_;
  std::size_t bytes_;
};

}  // namespace weft::detail

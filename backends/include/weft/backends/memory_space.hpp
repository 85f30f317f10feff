// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Memory spaces: where a buffer lives, and the raw allocation and byte copies
// for it. Pools, arenas and Views take a space as a template parameter.
//
//   weft::SpaceBuffer<weft::HostSpace> buffer(weft::HostSpace{}, 1 << 20);   // RAII, 1 MiB
//   weft::CudaSpace gpu(0);
//   void* d = gpu.allocate(4096);        // throws weft::AllocationError without a GPU
//   gpu.copy_from_host(d, buffer.data(), 4096);
//   gpu.deallocate(d, 4096);
//
// HostSpace is ordinary host memory. HostPinnedSpace is page-locked host memory
// (cudaMallocHost) when the CUDA backend is compiled in and a device exists,
// and ordinary host memory otherwise: HostPinnedSpace::pins_memory() says which.
// CudaSpace is device memory on one GPU; the host cannot dereference it.
#pragma once

#include <concepts>
#include <cstddef>
#include <new>
#include <string>
#include <utility>

namespace weft {

// Thrown when a space cannot provide the memory asked for. It is a
// std::bad_alloc, so code that handles allocation failure generically still
// works; what() names the space, the size and the reason.
class AllocationError : public std::bad_alloc {
 public:
  explicit AllocationError(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

struct HostSpace {
  static constexpr bool host_accessible = true;
  static constexpr std::size_t alignment = 4096;  // every allocation starts on a page
  static constexpr const char* name() noexcept { return "HostSpace"; }

  // bytes == 0 returns nullptr; failure throws AllocationError.
  void* allocate(std::size_t bytes) const;
  void deallocate(void* ptr, std::size_t bytes) const noexcept;
  void copy_from_host(void* dst, const void* src, std::size_t bytes) const;
  void copy_to_host(void* dst, const void* src, std::size_t bytes) const;
};

struct HostPinnedSpace {
  static constexpr bool host_accessible = true;
  static constexpr std::size_t alignment = 4096;
  static constexpr const char* name() noexcept { return "HostPinnedSpace"; }

  // True when allocations are page-locked: the CUDA backend is compiled in and
  // the CUDA runtime sees at least one device. Decided once per process.
  static bool pins_memory();

  void* allocate(std::size_t bytes) const;
  void deallocate(void* ptr, std::size_t bytes) const noexcept;
  void copy_from_host(void* dst, const void* src, std::size_t bytes) const;
  void copy_to_host(void* dst, const void* src, std::size_t bytes) const;
};

struct CudaSpace {
  static constexpr bool host_accessible = false;
  static constexpr std::size_t alignment = 256;  // what cudaMalloc guarantees
  static constexpr const char* name() noexcept { return "CudaSpace"; }

  int device = 0;  // CUDA device ordinal

  CudaSpace() = default;
  explicit CudaSpace(int device_ordinal) : device(device_ordinal) {}

  // Throws AllocationError when the build has no CUDA backend, when there is
  // no such device, or when cudaMalloc fails. Copies are synchronous.
  void* allocate(std::size_t bytes) const;
  void deallocate(void* ptr, std::size_t bytes) const noexcept;
  void copy_from_host(void* dst, const void* src, std::size_t bytes) const;
  void copy_to_host(void* dst, const void* src, std::size_t bytes) const;
};

// What pools and arenas need from a space.
template <class S>
concept MemorySpace = std::copy_constructible<S> &&
    requires(const S& s, void* p, const void* c, std::size_t n) {
  { s.allocate(n) } -> std::same_as<void*>;
  { s.deallocate(p, n) }
  noexcept;
  s.copy_from_host(p, c, n);
  s.copy_to_host(p, c, n);
  { S::name() } -> std::convertible_to<const char*>;
  { S::host_accessible } -> std::convertible_to<bool>;
  { S::alignment } -> std::convertible_to<std::size_t>;
};

// One allocation from a space, freed when the SpaceBuffer goes away.
template <MemorySpace Space>
class SpaceBuffer {
 public:
  SpaceBuffer() = default;
  SpaceBuffer(const Space& space, std::size_t bytes)
      : space_(space), data_(space.allocate(bytes)), bytes_(data_ != nullptr ? bytes : 0) {}
  ~SpaceBuffer() { release(); }

  SpaceBuffer(const SpaceBuffer&) = delete;
  SpaceBuffer& operator=(const SpaceBuffer&) = delete;
  SpaceBuffer(SpaceBuffer&& other) noexcept
      : space_(other.space_),
        data_(std::exchange(other.data_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)) {}
  SpaceBuffer& operator=(SpaceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      space_ = other.space_;
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }

  void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return bytes_; }
  const Space& space() const noexcept { return space_; }

 private:
  void release() noexcept {
    if (data_ != nullptr) space_.deallocate(data_, bytes_);
    data_ = nullptr;
    bytes_ = 0;
  }

  Space space_{};
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace weft

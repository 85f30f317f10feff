// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ElementArray<T>: a minimal owning host buffer of `count` elements of T laid
// out by element_storage<T>, so a polymorphic-layout type can be used as the
// element type of a container in tests and benchmarks (the Tensor manages
// its own, partitioned, buffers).
//
//   weft::ElementArray<State<double, 3, weft::StridedView>> states(1000);
//   states[3].density() = 1.0;   // operator[] returns element_storage<T>::reference
//   states.at(1000);             // throws std::out_of_range
//
// The buffer starts zero-filled, aligned to element_storage<T>::alignment.
// A count whose size in bytes overflows std::size_t throws AllocationError.
#pragma once

#include <weft/backends/detail/checked_size.hpp>
#include <weft/views/element_storage.hpp>

#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

namespace weft {

template <class T>
class ElementArray {
 public:
  using storage = element_storage<T>;
  using reference = typename storage::reference;
  using const_reference = typename storage::const_reference;

  explicit ElementArray(std::size_t count) : count_(count), bytes_(allocate(count)) {}

  std::size_t size() const noexcept { return count_; }
  // Size of the buffer in bytes (element_storage<T>::bytes(size())).
  std::size_t bytes() const noexcept { return storage::bytes(count_); }
  void* data() noexcept { return bytes_.get(); }
  const void* data() const noexcept { return bytes_.get(); }

  reference operator[](std::size_t index) noexcept { return storage::at(data(), index, count_); }
  const_reference operator[](std::size_t index) const noexcept { return storage::at(data(), index, count_); }

  reference at(std::size_t index) {
    check(index);
    return (*this)[index];
  }
  const_reference at(std::size_t index) const {
    check(index);
    return (*this)[index];
  }

 private:
  struct AlignedDelete {
    void operator()(std::byte* bytes) const noexcept {
      ::operator delete (bytes, std::align_val_t{storage::alignment});
    }
  };

  static std::unique_ptr<std::byte[], AlignedDelete> allocate(std::size_t count) {
    const detail::CheckedSize checked = storage::checked_bytes(count);
    if (!checked.fits()) {
      detail::throw_size_overflow("ElementArray: " + std::to_string(count) + " elements of " +
                                  std::to_string(storage::element_bytes) + " bytes overflow std::size_t");
    }
    const std::size_t size = checked.value();
    auto* bytes = static_cast<std::byte*>(::operator new (size, std::align_val_t{storage::alignment}));
    std::memset(bytes, 0, size);
    return std::unique_ptr<std::byte[], AlignedDelete>(bytes);
  }

  void check(std::size_t index) const {
    if (index >= count_) {
      throw std::out_of_range("ElementArray index " + std::to_string(index) + " out of bounds (" +
                              std::to_string(count_) + ")");
    }
  }

  std::size_t count_;
  std::unique_ptr<std::byte[], AlignedDelete> bytes_;
};

}  // namespace weft

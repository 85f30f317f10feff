// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Iterators over one block of a Tensor (Ripple section 5.2). A split kernel
// receives one iterator per tensor argument, already placed on its cell:
//
//   [](auto& in, auto& out) { *out = *in.offset(weft::dim_x, 1) - *in.offset(weft::dim_x, -1); }
//
// BlockIterator knows its block only: the data (padding included), where it
// is inside the block (index(dim), which is negative or >= extent(dim) in the
// padding) and how to move (offset, shift). IndexedIterator adds where the
// block sits in the whole tensor: global_index(dim), global_size(dim), the
// block's coordinates, and whether the cell is on the tensor's edge.
//
// Dereferencing gives element_storage<T>::reference: T& for plain types, and
// for polymorphic-layout types a T handle into the tensor's buffer (so
// (*it).density() reads and writes the tensor). Both iterators are plain
// values that copy by bytes, so they cross to the GPU unchanged.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>

#include <weft/backends/host_device.hpp>
#include <weft/views/element_storage.hpp>
#include <weft/views/tensor_geometry.hpp>

namespace weft {

// One block's buffer and shape, as an iterator needs them.
template <std::size_t D>
struct BlockSpace {
  void* data = nullptr;     // the block's buffer (padding included)
  std::size_t count = 0;    // elements in the buffer: product of padded
  Extents<D> padded{};      // extent + 2 * padding, per dimension
  Extents<D> stride{};      // elements between neighbours along each dimension (stride[0] == 1)
  Extents<D> extent{};      // interior cells per dimension
  std::size_t padding = 0;  // cells of padding on each side of each dimension

  // Linear position of interior cell `local` (0-based, padding excluded).
  WEFT_HOST_DEVICE std::size_t linear(const Extents<D>& local) const noexcept {
    std::size_t at = 0;
    for (std::size_t d = 0; d < D; ++d) at += (local[d] + padding) * stride[d];
    return at;
  }
};

// A block's place in its tensor, for IndexedIterator.
template <std::size_t D>
struct BlockPlace {
  Extents<D> origin{};  // global index of the block's first interior cell
  Extents<D> sizes{};   // the tensor's global sizes
  Extents<D> coords{};  // the block's coordinates in the grid of blocks
};

template <class T, std::size_t D>
class BlockIterator {
 public:
  using value_type = T;
  using reference = typename element_storage<T>::reference;
  static constexpr std::size_t dims = D;

  BlockIterator() = default;
  WEFT_HOST_DEVICE BlockIterator(const BlockSpace<D>& space, std::size_t linear) noexcept
      : space_(space), at_(linear) {}

  WEFT_HOST_DEVICE reference operator*() const noexcept {
    return element_storage<T>::at(space_.data, at_, space_.count);
  }
  // it->member(): a pointer for plain types, a holder of the handle otherwise.
  WEFT_HOST_DEVICE auto operator->() const noexcept {
    if constexpr (element_storage<T>::polymorphic) {
      struct Holder {
        reference handle;
        WEFT_HOST_DEVICE reference* operator->() noexcept { return &handle; }
      };
      return Holder{**this};
    } else {
      return &**this;
    }
  }

  // A copy moved by `amount` cells along `dim`; chains: it.offset(dim_x, 1).offset(dim_y, -1).
  WEFT_HOST_DEVICE BlockIterator offset(std::size_t dim, std::ptrdiff_t amount) const noexcept {
    BlockIterator moved = *this;
    moved.shift(dim, amount);
    return moved;
  }
  WEFT_HOST_DEVICE BlockIterator& shift(std::size_t dim, std::ptrdiff_t amount) noexcept {
    at_ = shifted(dim, amount);
    return *this;
  }
  // *offset(dim, amount) without the copy: a stencil reading six neighbours
  // through offset() copies the block's shape six times per cell, which GCC
  // may keep on the stack (docs/tensors.md, "Reading neighbours").
  WEFT_HOST_DEVICE reference neighbour(std::size_t dim, std::ptrdiff_t amount) const noexcept {
    return element_storage<T>::at(space_.data, shifted(dim, amount), space_.count);
  }

  // Position along `dim` inside the block's interior: 0 .. extent(dim) - 1,
  // negative or beyond in the padding.
  WEFT_HOST_DEVICE std::ptrdiff_t index(std::size_t dim) const noexcept {
    const std::size_t padded_index = (at_ / space_.stride[dim]) % space_.padded[dim];
    return static_cast<std::ptrdiff_t>(padded_index) - static_cast<std::ptrdiff_t>(space_.padding);
  }
  WEFT_HOST_DEVICE std::size_t extent(std::size_t dim) const noexcept { return space_.extent[dim]; }
  WEFT_HOST_DEVICE std::size_t padding() const noexcept { return space_.padding; }
  // Whether the cell is inside the block's interior (not in its padding).
  WEFT_HOST_DEVICE bool is_interior() const noexcept {
    for (std::size_t d = 0; d < D; ++d) {
      const std::ptrdiff_t i = index(d);
      if (i < 0 || i >= static_cast<std::ptrdiff_t>(space_.extent[d])) return false;
    }
    return true;
  }
  WEFT_HOST_DEVICE const BlockSpace<D>& space() const noexcept { return space_; }
  WEFT_HOST_DEVICE std::size_t linear_index() const noexcept { return at_; }

 private:
  WEFT_HOST_DEVICE std::size_t shifted(std::size_t dim, std::ptrdiff_t amount) const noexcept {
    return static_cast<std::size_t>(static_cast<std::ptrdiff_t>(at_) +
                                    amount * static_cast<std::ptrdiff_t>(space_.stride[dim]));
  }

  BlockSpace<D> space_{};
  std::size_t at_ = 0;
};

template <class T, std::size_t D>
class IndexedIterator : public BlockIterator<T, D> {
 public:
  IndexedIterator() = default;
  WEFT_HOST_DEVICE IndexedIterator(const BlockSpace<D>& space, const BlockPlace<D>& place,
                                   std::size_t linear) noexcept
      : BlockIterator<T, D>(space, linear), place_(place) {}

  WEFT_HOST_DEVICE IndexedIterator offset(std::size_t dim, std::ptrdiff_t amount) const noexcept {
    IndexedIterator moved = *this;
    moved.shift(dim, amount);
    return moved;
  }

  // Position in the whole tensor (negative or beyond global_size in padding
  // outside the tensor).
  WEFT_HOST_DEVICE std::ptrdiff_t global_index(std::size_t dim) const noexcept {
    return static_cast<std::ptrdiff_t>(place_.origin[dim]) + this->index(dim);
  }
  WEFT_HOST_DEVICE std::size_t global_size(std::size_t dim) const noexcept { return place_.sizes[dim]; }
  WEFT_HOST_DEVICE std::size_t block(std::size_t dim) const noexcept { return place_.coords[dim]; }
  // On the tensor's first / last cell along `dim` (where boundary loaders fill padding).
  WEFT_HOST_DEVICE bool is_global_first(std::size_t dim) const noexcept { return global_index(dim) == 0; }
  WEFT_HOST_DEVICE bool is_global_last(std::size_t dim) const noexcept {
    return global_index(dim) == static_cast<std::ptrdiff_t>(place_.sizes[dim]) - 1;
  }
  WEFT_HOST_DEVICE const BlockPlace<D>& place() const noexcept { return place_; }

 private:
  BlockPlace<D> place_{};
};

// iterator_traits_t<It>::dims, as in Ripple's kernels.
template <class It>
struct iterator_traits_t {
  static constexpr std::size_t dims = std::remove_cvref_t<It>::dims;
};

}  // namespace weft

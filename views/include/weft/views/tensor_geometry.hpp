// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How a Tensor's index space is cut into blocks (Ripple section 4.1).
//
// Each dimension d of `sizes[d]` cells is split into `partitions[d]` device
// partitions, and each of those into `sub_partitions[d]` blocks that live on
// the same device: blocks_per_dim[d] = partitions[d] * sub_partitions[d].
// When a size does not divide evenly the first blocks get one cell more.
// Blocks are numbered with dimension 0 fastest; a block's device is the
// number of its device partition, counted the same way. Every block carries
// `padding` extra cells on both sides of every dimension.
//
// A split that needs more blocks than a dimension has cells throws
// std::invalid_argument; one whose number of blocks overflows std::size_t
// throws AllocationError (see Tensor for the sizes of the blocks themselves).
#pragma once

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>

#include <weft/backends/detail/checked_size.hpp>
#include <weft/views/view_errors.hpp>

namespace weft {

template <std::size_t D>
using Extents = std::array<std::size_t, D>;

namespace detail {
template <std::size_t D>
std::string format_extents(const Extents<D>& e) {
  return format_index_list(e);
}
}  // namespace detail

template <std::size_t D>
class TensorGeometry {
  static_assert(D >= 1, "a Tensor has at least one dimension");

 public:
  TensorGeometry() = default;
  TensorGeometry(const Extents<D>& sizes, const Extents<D>& partitions, const Extents<D>& sub_partitions,
                 std::size_t padding)
      : sizes_(sizes), partitions_(partitions), sub_partitions_(sub_partitions), padding_(padding) {
    detail::CheckedSize blocks(1);
    for (std::size_t d = 0; d < D; ++d) {
      if (partitions[d] == 0 || sub_partitions[d] == 0) {
        throw std::invalid_argument("Tensor: partitions " + detail::format_extents(partitions) +
                                    " and sub-partitions " + detail::format_extents(sub_partitions) +
                                    " must all be at least 1");
      }
      const detail::CheckedSize per_dim = detail::CheckedSize(partitions[d]) * sub_partitions[d];
      if (!per_dim.fits() || sizes[d] < per_dim.value()) {
        const std::string wanted =
            per_dim.fits() ? std::to_string(per_dim.value())
                           : std::to_string(partitions[d]) + " x " + std::to_string(sub_partitions[d]);
        throw std::invalid_argument("Tensor: dimension " + std::to_string(d) + " has " +
                                    std::to_string(sizes[d]) + " cells, too few for " + wanted +
                                    " blocks (partitions " + detail::format_extents(partitions) +
                                    " times sub-partitions " + detail::format_extents(sub_partitions) + ")");
      }
      blocks_per_dim_[d] = per_dim.value();
      blocks *= per_dim;
    }
    if (!blocks.fits()) {
      detail::throw_size_overflow("Tensor: sizes " + detail::format_size_product(sizes) + " split into " +
                                  detail::format_size_product(blocks_per_dim_) +
                                  " blocks: the number of blocks overflows std::size_t");
    }
    block_count_ = blocks.value();
    device_count_ = 1;  // at most block_count_: no overflow
    for (std::size_t d = 0; d < D; ++d) device_count_ *= partitions[d];
  }

  const Extents<D>& sizes() const noexcept { return sizes_; }
  const Extents<D>& partitions() const noexcept { return partitions_; }
  const Extents<D>& sub_partitions() const noexcept { return sub_partitions_; }
  const Extents<D>& blocks_per_dim() const noexcept { return blocks_per_dim_; }
  std::size_t padding() const noexcept { return padding_; }
  std::size_t block_count() const noexcept { return block_count_; }
  // How many device partitions (devices, or virtual devices on the host backend).
  std::size_t device_count() const noexcept { return device_count_; }

  Extents<D> block_coords(std::size_t block) const noexcept {
    Extents<D> c{};
    for (std::size_t d = 0; d < D; ++d) {
      c[d] = block % blocks_per_dim_[d];
      block /= blocks_per_dim_[d];
    }
    return c;
  }
  std::size_t block_index(const Extents<D>& coords) const noexcept {
    std::size_t b = 0;
    for (std::size_t d = D; d-- > 0;) b = b * blocks_per_dim_[d] + coords[d];
    return b;
  }
  std::size_t device_of(std::size_t block) const noexcept {
    const Extents<D> c = block_coords(block);
    std::size_t device = 0;
    for (std::size_t d = D; d-- > 0;) device = device * partitions_[d] + c[d] / sub_partitions_[d];
    return device;
  }
  // Interior cells of a block along each dimension, and the global index of its first one.
  Extents<D> block_extent(std::size_t block) const noexcept {
    const Extents<D> c = block_coords(block);
    Extents<D> e{};
    for (std::size_t d = 0; d < D; ++d) e[d] = split_extent(d, c[d]);
    return e;
  }
  Extents<D> block_origin(std::size_t block) const noexcept {
    const Extents<D> c = block_coords(block);
    Extents<D> o{};
    for (std::size_t d = 0; d < D; ++d) o[d] = split_origin(d, c[d]);
    return o;
  }
  // The block holding global cell `index` (each index below its size).
  std::size_t block_holding(const Extents<D>& index) const noexcept {
    Extents<D> c{};
    for (std::size_t d = 0; d < D; ++d) {
      const std::size_t q = sizes_[d] / blocks_per_dim_[d], r = sizes_[d] % blocks_per_dim_[d];
      const std::size_t big = r * (q + 1);  // cells held by the r blocks one cell larger
      c[d] = index[d] < big ? index[d] / (q + 1) : r + (index[d] - big) / q;
    }
    return block_index(c);
  }
  bool operator==(const TensorGeometry& other) const noexcept = default;

 private:
  std::size_t split_extent(std::size_t d, std::size_t k) const noexcept {
    const std::size_t q = sizes_[d] / blocks_per_dim_[d], r = sizes_[d] % blocks_per_dim_[d];
    return q + (k < r ? 1 : 0);
  }
  std::size_t split_origin(std::size_t d, std::size_t k) const noexcept {
    const std::size_t q = sizes_[d] / blocks_per_dim_[d], r = sizes_[d] % blocks_per_dim_[d];
    return k * q + (k < r ? k : r);
  }

  Extents<D> sizes_{}, partitions_{}, sub_partitions_{}, blocks_per_dim_{};
  std::size_t padding_ = 0;
  std::size_t block_count_ = 0;
  std::size_t device_count_ = 0;
};

}  // namespace weft

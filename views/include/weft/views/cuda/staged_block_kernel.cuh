// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The in_shared path of weft::cuda::kernel: each CUDA block of threads takes
// a tile of the tensor block's interior, copies the tile and its padding of
// every staged tensor argument into shared memory, runs the kernel on
// iterators into those copies, and (for arguments the kernel may write)
// copies the tile's interior back. Tensors not staged are read and written
// in global memory as usual.
//
// Tiles: 256 cells along x in 1D, 32 x 8 in 2D, 32 x 4 x 2 in 3D, one
// thread per cell; the copies in and out are spread over all the threads
// (consecutive threads take consecutive cells, so they coalesce). An
// iterator into a tile is an IndexedIterator over the tile: offsets reach
// the tile's padding exactly as they reach the block's, global_index and the
// is_global_first/last tests are those of the cell, and index(dim) counts
// from the tile's first cell.
#pragma once

#ifndef __CUDACC__
#error \
    "weft/views/cuda/staged_block_kernel.cuh holds CUDA kernels: include it from .cu files compiled by nvcc"
#endif

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include <weft/backends/detail/checked_size.hpp>
#include <weft/views/cuda/cuda_check.cuh>
#include <weft/views/element_storage.hpp>
#include <weft/views/gpu_kernel.hpp>
#include <weft/views/tensor_iterator.hpp>

namespace weft::cuda::detail {

using weft::cuda::SharedStaging;  // gpu_kernel.hpp

// Cells of a tile along dimension d (a function: device code cannot index
// a static array member).
template <std::size_t D>
WEFT_HOST_DEVICE constexpr unsigned tile_cells(std::size_t d) {
  if constexpr (D == 1) {
    return 256;
  } else if constexpr (D == 2) {
    return d == 0 ? 32 : 8;
  } else {
    return d == 0 ? 32 : d == 1 ? 4 : 2;
  }
}

// Cells of a full tile with `padding` on every side; not fits() when they
// overflow std::size_t (the launch refuses such padding).
template <std::size_t D>
constexpr weft::detail::CheckedSize padded_tile_cells(std::size_t padding) {
  weft::detail::CheckedSize n(1);
  for (std::size_t d = 0; d < D; ++d) n *= weft::detail::CheckedSize(padding) * 2 + tile_cells<D>(d);
  return n;
}

// One staged argument's tile: its place in shared memory and in the tensor.
template <std::size_t D>
WEFT_HOST_DEVICE BlockSpace<D> tile_space(void* data, const Extents<D>& tile_extent, std::size_t padding) {
  BlockSpace<D> s;
  s.data = data;
  s.extent = tile_extent;
  s.padding = padding;
  s.count = 1;
  for (std::size_t d = 0; d < D; ++d) {
    s.padded[d] = tile_extent[d] + 2 * padding;
    s.stride[d] = s.count;
    s.count *= s.padded[d];
  }
  return s;
}

// Copies every cell of `from`'s box [first - padding, first + extent +
// padding) (coordinates of `big`'s interior) to or from the tile `small`,
// spread over the block's threads. to_tile: big -> small, else back (the
// interior only).
template <class T, std::size_t D>
__device__ void copy_tile(const BlockSpace<D>& big, const BlockSpace<D>& small, const Extents<D>& first,
                          bool to_tile, unsigned thread, unsigned threads) {
  const std::size_t p = small.padding;
  std::size_t box[D];
  std::size_t cells = 1;
  for (std::size_t d = 0; d < D; ++d) {
    box[d] = to_tile ? small.padded[d] : small.extent[d];
    cells *= box[d];
  }
  for (std::size_t t = thread; t < cells; t += threads) {
    std::size_t rest = t, at_small = 0, at_big = 0;
    for (std::size_t d = 0; d < D; ++d) {
      const std::size_t c = rest % box[d];  // in the box: padded tile, or interior
      rest /= box[d];
      const std::size_t in_small = to_tile ? c : c + p;  // padded-tile coordinate
      at_small += in_small * small.stride[d];
      at_big += (first[d] + in_small - p + big.padding) * big.stride[d];
    }
    if (to_tile) {
      element_storage<T>::at(small.data, at_small, small.count) =
          element_storage<T>::at(big.data, at_big, big.count);
    } else {
      element_storage<T>::at(big.data, at_big, big.count) =
          element_storage<T>::at(small.data, at_small, small.count);
    }
  }
}

}  // namespace weft::cuda::detail

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The GPU versions of the graph's boundary and reduce operations on one
// block of a tensor in GPU memory (the graph includes this in .cu files):
//
//   launch_block_boundary   load_boundary on every interior cell of the
//                           block: the loader fills the padding beyond the
//                           tensor's edges, as Graph::boundary does on the host.
//   launch_block_reduce     folds the block's interior cells (map(cell) of
//                           each, the cell itself by default) with the reducer
//                           and writes the block's partial into page-locked
//                           host memory (weft::cuda::parallel_reduce); the
//                           graph's finishing host node joins the partials.
// Both queue on `stream` and return.
#pragma once

#ifndef __CUDACC__
#error "weft/views/cuda/block_ops_cuda.cuh holds CUDA kernels: include it from .cu files compiled by nvcc"
#endif

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <weft/views/boundary_loader.hpp>
#include <weft/views/cuda/block_kernel_cuda.cuh>
#include <weft/views/cuda/parallel_reduce_cuda.cuh>
#include <weft/views/range_policy.hpp>
#include <weft/views/tensor.hpp>

namespace weft::cuda {
namespace detail {

template <class Loader>
struct BoundaryCell {
  Loader loader;
  template <class It>
  WEFT_HOST_DEVICE void operator()(It& it) const {
    load_boundary(it, loader);
  }
};

// f(i[, j[, k]], partial) for parallel_reduce over a block's interior: folds
// map(cell) of each cell.
template <class T, std::size_t D, class R, class Reducer, class Map>
struct BlockFold {
  BlockSpace<D> space;
  BlockPlace<D> place;
  Reducer reducer;
  Map map;

  WEFT_HOST_DEVICE void fold(const Extents<D>& local, R& partial) const {
    const IndexedIterator<T, D> it(space, place, space.linear(local));
    reducer.join(partial, static_cast<R>(map(*it)));
  }
  WEFT_HOST_DEVICE void operator()(std::int64_t i, R& partial) const requires(D == 1) {
    fold(Extents<D>{static_cast<std::size_t>(i)}, partial);
  }
  WEFT_HOST_DEVICE void operator()(std::int64_t i, std::int64_t j, R& partial) const requires(D == 2) {
    fold(Extents<D>{static_cast<std::size_t>(i), static_cast<std::size_t>(j)}, partial);
  }
  WEFT_HOST_DEVICE void operator()(std::int64_t i, std::int64_t j, std::int64_t k, R& partial) const
      requires(D == 3) {
    fold(Extents<D>{static_cast<std::size_t>(i), static_cast<std::size_t>(j), static_cast<std::size_t>(k)},
         partial);
  }
};

}  // namespace detail

template <class T, std::size_t D, class Loader>
void launch_block_boundary(CudaStream stream, const Tensor<T, D>& tensor, std::size_t block,
                           const Loader& loader) {
  Kernel<detail::BoundaryCell<Loader>>{{loader}}.launch(stream, block, tensor);
}

template <class R, class T, std::size_t D, class Reducer, class Map = CellItself>
void launch_block_reduce(CudaStream stream, const Tensor<T, D>& tensor, std::size_t block,
                         const Reducer& reducer, R* pinned_partial, const Map& map = {}) {
  static_assert(D >= 1 && D <= 3, "GPU reductions over tensors of 1, 2 or 3 dimensions");
  const BlockSpace<D>& space = tensor.block_space(block);
  const detail::BlockFold<T, D, R, Reducer, Map> fold{space, tensor.block_place(block), reducer, map};
  if constexpr (D == 1) {
    parallel_reduce(stream, RangePolicy<std::int64_t>(0, static_cast<std::int64_t>(space.extent[0])), fold,
                    reducer, PinnedHostSlot<R>{pinned_partial});
  } else {
    using Policy = MDRangePolicy<static_cast<int>(D)>;
    typename Policy::Indices begin{}, end{};
    for (std::size_t d = 0; d < D; ++d) end[d] = static_cast<typename Policy::index_type>(space.extent[d]);
    parallel_reduce(stream, Policy(begin, end), fold, reducer, PinnedHostSlot<R>{pinned_partial});
  }
}

}  // namespace weft::cuda

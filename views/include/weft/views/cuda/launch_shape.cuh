// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How a policy's index space is laid over CUDA threads, shared by the GPU
// parallel_for and parallel_reduce.
//
// Dimension 0 goes to threadIdx.x / blockIdx.x, dimension 1 to y, dimension
// 2 to z, so neighbouring threads of a warp take neighbouring i: the first
// index of weft's LayoutLeft Views and Tensors is the contiguous one, and
// their loads coalesce. Blocks always hold kThreadsPerBlock threads; a small
// extent in dimension 0 gives its threads to dimension 1 (an 8 x 1000 range
// runs in 8 x 32 blocks, not 256 x 1 blocks with 248 threads idle).
//
// parallel_for gives each index a thread of its own, and splits a box larger
// than the grid limits (2^31 - 1 blocks in x, 65535 in y and z) over several
// launches. parallel_reduce caps the block count (one partial per block) and
// covers every dimension with a grid-stride loop instead. The policy's tile
// sizes, chunk size and executor are host-side choices and are not used
// here.
#pragma once

#if !defined(__CUDACC__)
#error "<weft/views/cuda/launch_shape.cuh> is CUDA code: include it from a .cu file compiled by nvcc"
#endif

#include <weft/views/cuda/cuda_check.cuh>
#include <weft/views/range_policy.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>

namespace weft::cuda::detail {

inline constexpr unsigned kThreadsPerBlock = 256;
inline constexpr unsigned kWarpSize = 32;
inline constexpr unsigned kWarpsPerBlock = kThreadsPerBlock / kWarpSize;
inline constexpr std::uint64_t kUnlimitedBlocks = std::numeric_limits<std::uint64_t>::max();

// The part of a policy a kernel reads, in members a device can read
// (std::array's accessors are host functions).
template <class Index, int Rank>
struct IndexBox {
  Index begin[Rank];
  std::uint64_t extent[Rank];
};

template <class Index>
IndexBox<Index, 1> index_box(const RangePolicy<Index>& policy) {
  return {{policy.begin()}, {policy.size()}};
}

template <int Rank, class Index>
IndexBox<Index, Rank> index_box(const MDRangePolicy<Rank, Index>& policy) {
  static_assert(Rank <= 3, "weft::cuda runs RangePolicy and MDRangePolicy of rank 2 and 3");
  IndexBox<Index, Rank> box{};
  for (std::size_t d = 0; d < static_cast<std::size_t>(Rank); ++d) {
    box.begin[d] = policy.begin()[d];
    box.extent[d] = policy.extent(d);
  }
  return box;
}

template <class Policy>
using IndexBoxOf = decltype(index_box(std::declval<const Policy&>()));

struct LaunchShape {
  dim3 grid;
  dim3 block;
  std::uint64_t blocks() const noexcept {
    return std::uint64_t{grid.x} * std::uint64_t{grid.y} * std::uint64_t{grid.z};
  }
  // Threads along each dimension: how many indices one launch reaches there.
  std::array<std::uint64_t, 3> reach() const noexcept {
    return {std::uint64_t{grid.x} * block.x, std::uint64_t{grid.y} * block.y,
            std::uint64_t{grid.z} * block.z};
  }
};

inline unsigned power_of_two_at_least(std::uint64_t n, unsigned cap) {
  unsigned p = 1;
  while (p < cap && p < n) p *= 2;
  return p;
}

inline unsigned blocks_for(std::uint64_t extent, unsigned threads, std::uint64_t limit) {
  const std::uint64_t needed = (std::max<std::uint64_t>(extent, 1) + threads - 1) / threads;
  return static_cast<unsigned>(std::min(needed, limit));
}

// The grid for a box (no extent 0), with at most max_blocks blocks in all.
template <class Index, int Rank>
LaunchShape launch_shape(const IndexBox<Index, Rank>& box, std::uint64_t max_blocks) {
  constexpr std::uint64_t kMaxGridX = 2147483647u;
  constexpr std::uint64_t kMaxGridYZ = 65535u;
  dim3 block(kThreadsPerBlock, 1, 1);
  if constexpr (Rank >= 2) {
    block.x = power_of_two_at_least(box.extent[0], kThreadsPerBlock);
    block.y = kThreadsPerBlock / block.x;
  }
  if constexpr (Rank == 3) {
    block.y = power_of_two_at_least(box.extent[1], kThreadsPerBlock / block.x);
    block.z = kThreadsPerBlock / (block.x * block.y);
  }
  dim3 grid(blocks_for(box.extent[0], block.x, std::min(kMaxGridX, max_blocks)), 1, 1);
  if constexpr (Rank >= 2)
    grid.y = blocks_for(box.extent[1], block.y, std::min(kMaxGridYZ, max_blocks / grid.x));
  if constexpr (Rank == 3) {
    grid.z = blocks_for(box.extent[2], block.z,
                        std::min(kMaxGridYZ, max_blocks / (std::uint64_t{grid.x} * grid.y)));
  }
  return {grid, block};
}

__device__ inline unsigned thread_in_block() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__device__ inline std::uint64_t block_in_grid() {
  return blockIdx.x + std::uint64_t{gridDim.x} * (blockIdx.y + std::uint64_t{gridDim.y} * blockIdx.z);
}

// First index and stride of this thread along one grid dimension.
__device__ inline std::uint64_t first_x() { return std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; }
__device__ inline std::uint64_t first_y() { return std::uint64_t{blockIdx.y} * blockDim.y + threadIdx.y; }
__device__ inline std::uint64_t first_z() { return std::uint64_t{blockIdx.z} * blockDim.z + threadIdx.z; }
__device__ inline std::uint64_t stride_x() { return std::uint64_t{blockDim.x} * gridDim.x; }
__device__ inline std::uint64_t stride_y() { return std::uint64_t{blockDim.y} * gridDim.y; }
__device__ inline std::uint64_t stride_z() { return std::uint64_t{blockDim.z} * gridDim.z; }

// Calls call(i0, ...) for the one index of `box` this thread stands for in
// a grid that covers the box (one thread per index), if the thread is not
// past the box's end. No loop: nvcc schedules the call's loads as it would
// in a hand-written kernel, which a grid-stride loop of unknown trip count
// keeps it from doing (12% on a 2D stencil on an H100).
template <class Index, int Rank, class Call>
__device__ void call_covered_index(const IndexBox<Index, Rank>& box, const Call& call) {
  const std::uint64_t k0 = first_x();
  if (k0 >= box.extent[0]) return;
  const Index i0 = weft::detail::index_advance(box.begin[0], k0);
  if constexpr (Rank == 1) {
    call(i0);
  } else {
    const std::uint64_t k1 = first_y();
    if (k1 >= box.extent[1]) return;
    const Index i1 = weft::detail::index_advance(box.begin[1], k1);
    if constexpr (Rank == 2) {
      call(i0, i1);
    } else {
      const std::uint64_t k2 = first_z();
      if (k2 >= box.extent[2]) return;
      call(i0, i1, weft::detail::index_advance(box.begin[2], k2));
    }
  }
}

// Whether `shape` has a thread for every index of `box`.
template <class Index, int Rank>
bool covers(const LaunchShape& shape, const IndexBox<Index, Rank>& box) {
  const std::array<std::uint64_t, 3> reach = shape.reach();
  for (int d = 0; d < Rank; ++d)
    if (reach[d] < box.extent[d]) return false;
  return true;
}

// Calls launch_one(sub_box, shape) for sub-boxes that tile `box`, each with
// a shape that covers it: one call unless the box is larger than the grid
// limits (2^31 - 1 blocks in x, 65535 in y and z) let one launch cover.
template <class Index, int Rank, class LaunchOne>
void for_each_covered_box(const IndexBox<Index, Rank>& box, const LaunchOne& launch_one) {
  const LaunchShape whole = launch_shape(box, kUnlimitedBlocks);
  if (covers(whole, box)) {
    launch_one(box, whole);
    return;
  }
  // Slices as large as the whole box's shape reaches, in every dimension.
  const std::array<std::uint64_t, 3> reach = whole.reach();
  IndexBox<Index, Rank> slice = box;
  const auto slices = [&](const auto& self, int d) -> void {
    if (d < 0) {
      const LaunchShape shape = launch_shape(slice, kUnlimitedBlocks);
      if (!covers(shape, slice)) throw std::logic_error("weft::cuda: a launch slice is larger than its grid");
      launch_one(slice, shape);
      return;
    }
    for (std::uint64_t start = 0; start < box.extent[d]; start += reach[d]) {
      slice.begin[d] = weft::detail::index_advance(box.begin[d], start);
      slice.extent[d] = std::min(reach[d], box.extent[d] - start);
      self(self, d - 1);
    }
  };
  slices(slices, Rank - 1);
}

// Calls call(i0, ...) for every index this thread owns, dimension 0 innermost.
template <class Index, class Call>
__device__ void for_each_owned_index(const IndexBox<Index, 1>& box, const Call& call) {
  for (std::uint64_t k0 = first_x(); k0 < box.extent[0]; k0 += stride_x())
    call(weft::detail::index_advance(box.begin[0], k0));
}

template <class Index, class Call>
__device__ void for_each_owned_index(const IndexBox<Index, 2>& box, const Call& call) {
  for (std::uint64_t k1 = first_y(); k1 < box.extent[1]; k1 += stride_y()) {
    const Index i1 = weft::detail::index_advance(box.begin[1], k1);
    for (std::uint64_t k0 = first_x(); k0 < box.extent[0]; k0 += stride_x())
      call(weft::detail::index_advance(box.begin[0], k0), i1);
  }
}

template <class Index, class Call>
__device__ void for_each_owned_index(const IndexBox<Index, 3>& box, const Call& call) {
  for (std::uint64_t k2 = first_z(); k2 < box.extent[2]; k2 += stride_z()) {
    const Index i2 = weft::detail::index_advance(box.begin[2], k2);
    for (std::uint64_t k1 = first_y(); k1 < box.extent[1]; k1 += stride_y()) {
      const Index i1 = weft::detail::index_advance(box.begin[1], k1);
      for (std::uint64_t k0 = first_x(); k0 < box.extent[0]; k0 += stride_x())
        call(weft::detail::index_advance(box.begin[0], k0), i1, i2);
    }
  }
}

// Launches kernel(args...) with `shape` on `stream`, returning CUDA's verdict
// on the launch (not on the kernel's run, which is asynchronous).
template <class... Parameters, class... Arguments>
cudaError_t launch(const LaunchShape& shape, cudaStream_t stream, void (*kernel)(Parameters...),
                   Arguments&&... arguments) {
  cudaLaunchConfig_t config{};
  config.gridDim = shape.grid;
  config.blockDim = shape.block;
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Arguments&&>(arguments)...);
}

}  // namespace weft::cuda::detail

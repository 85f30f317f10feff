// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// weft::cuda::kernel(f): a split() kernel that runs on the GPU. The same
// kernel a host split() takes (one call per interior cell, an iterator per
// tensor argument, the other arguments as they are), marked WEFT_HOST_DEVICE
// and wrapped, over tensors made with weft::cuda_memory:
//
//   auto average = [] WEFT_HOST_DEVICE(auto& in, auto& out) {
//     *out = 0.25f * ((*in.offset(weft::dim_x, -1) + *in.offset(weft::dim_x, 1)) +
//                     (*in.offset(weft::dim_y, -1) + *in.offset(weft::dim_y, 1)));
//   };
//   g.then_split(weft::cuda::kernel(average), weft::concurrent_padded_access(a), b);
//
// Each block's node is a GPU node on the block's device: one kernel launch
// over the block's interior, dimension 0 on threadIdx.x as in
// weft::cuda::parallel_for, every cell in parallel (also under
// exclusive_padded_access: a GPU kernel does not run rows in order).
// Arguments other than tensors are copied to the GPU, so they must be
// trivially copyable; pointers in them must point to device memory.
#pragma once

#ifndef __CUDACC__
#error "weft/views/cuda/block_kernel_cuda.cuh holds CUDA kernels: include it from .cu files compiled by nvcc"
#endif

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <weft/views/block_kernel.hpp>
#include <weft/views/cuda/parallel_for_cuda.cuh>
#include <weft/views/cuda/staged_block_kernel.cuh>
#include <weft/views/gpu_kernel.hpp>
#include <weft/views/range_policy.hpp>
#include <weft/views/tensor.hpp>

namespace weft::cuda {
namespace detail {

// What a kernel launch carries for one tensor argument: its block (and,
// when it is staged in shared memory, where its tile goes there).
template <class T, std::size_t D>
struct DeviceBlock {
  BlockSpace<D> space;
  BlockPlace<D> place;
  std::size_t shared_offset = 0;
};

template <class Arg>
auto device_block_argument(const Arg& arg, std::size_t block) {
  if constexpr (is_tensor_v<Arg>) {
    using Tn = std::remove_cvref_t<Arg>;
    if (!arg.in_gpu_memory()) {
      throw std::invalid_argument(
          "weft::cuda::kernel: a tensor argument is in host memory; GPU kernels need tensors made with "
          "weft::cuda_memory");
    }
    return DeviceBlock<typename Tn::value_type, Tn::dims>{arg.block_space(block), arg.block_place(block), 0};
  } else {
    static_assert(std::is_trivially_copyable_v<Arg>,
                  "weft::cuda::kernel: arguments other than tensors are copied to the GPU, so they must be "
                  "trivially copyable");
    return arg;
  }
}

template <class A>
struct element_of {
  using type = void;
};
template <class T, std::size_t D>
struct element_of<DeviceBlock<T, D>> {
  using type = T;
};

// The per-cell functor of one block: builds the iterators for cell `local`
// and calls the user's kernel with them.
template <class F, class Tuple, std::size_t D>
struct BlockCells {
  F f;
  Tuple args;

  template <class... I>
  requires(sizeof...(I) == D) WEFT_HOST_DEVICE void operator()(I... index) const {
    const Extents<D> local{static_cast<std::size_t>(index)...};
    call(local, std::make_index_sequence<std::tuple_size_v<Tuple>>{});
  }

 private:
  template <std::size_t... K>
  WEFT_HOST_DEVICE void call(const Extents<D>& local, std::index_sequence<K...>) const {
    auto cells = std::make_tuple(make_cell<K>(local)...);
    f(std::get<K>(cells)...);
  }
  template <std::size_t K>
  WEFT_HOST_DEVICE auto make_cell(const Extents<D>& local) const {
    using A = std::tuple_element_t<K, Tuple>;
    const A& a = std::get<K>(args);
    if constexpr (!std::is_void_v<typename element_of<A>::type>) {
      return IndexedIterator<typename element_of<A>::type, D>(a.space, a.place, a.space.linear(local));
    } else {
      return a;
    }
  }
};

template <class A>
inline constexpr bool is_device_block_v = !std::is_void_v<typename element_of<A>::type>;

// Stages argument K's tile in (to_tile) or back out, if the staging says so.
template <std::size_t K, class Tuple, std::size_t D>
__device__ void stage_argument(const Tuple& args, unsigned char* shared, const Extents<D>& first,
                               const Extents<D>& tile_extent, bool to_tile, SharedStaging staging,
                               unsigned thread, unsigned threads) {
  using A = std::tuple_element_t<K, Tuple>;
  if constexpr (is_device_block_v<A>) {
    if (!((staging.stage >> K) & 1u) || (!to_tile && !((staging.write_back >> K) & 1u))) return;
    const A& a = std::get<K>(args);
    const BlockSpace<D> tile = tile_space<D>(shared + a.shared_offset, tile_extent, a.space.padding);
    copy_tile<typename element_of<A>::type, D>(a.space, tile, first, to_tile, thread, threads);
  }
}

template <std::size_t K, class Tuple, std::size_t D>
__device__ auto staged_cell(const Tuple& args, unsigned char* shared, const Extents<D>& first,
                            const Extents<D>& tile_extent, const Extents<D>& in_tile, SharedStaging staging) {
  using A = std::tuple_element_t<K, Tuple>;
  const A& a = std::get<K>(args);
  if constexpr (is_device_block_v<A>) {
    using Iterator = IndexedIterator<typename element_of<A>::type, D>;
    if ((staging.stage >> K) & 1u) {
      const BlockSpace<D> tile = tile_space<D>(shared + a.shared_offset, tile_extent, a.space.padding);
      BlockPlace<D> place = a.place;
      for (std::size_t d = 0; d < D; ++d) place.origin[d] += first[d];
      return Iterator(tile, place, tile.linear(in_tile));
    }
    Extents<D> local{};
    for (std::size_t d = 0; d < D; ++d) local[d] = first[d] + in_tile[d];
    return Iterator(a.space, a.place, a.space.linear(local));
  } else {
    return a;
  }
}

// One tile per CUDA block at a time (grid-stride over the tiles), one thread
// per cell of the tile.
template <class F, class Tuple, std::size_t D, std::size_t... K>
__global__ void __launch_bounds__(kThreadsPerBlock)
    staged_block_kernel(F f, Tuple args, Extents<D> extent, SharedStaging staging,
                        std::index_sequence<K...>) {
  extern __shared__ __align__(64) unsigned char shared[];
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  const unsigned mine[3] = {threadIdx.x, threadIdx.y, threadIdx.z};
  std::size_t tiles = 1;
  for (std::size_t d = 0; d < D; ++d) tiles *= (extent[d] + tile_cells<D>(d) - 1) / tile_cells<D>(d);
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    Extents<D> first{}, tile_extent{}, in_tile{};
    bool inside = true;
    std::size_t rest = tile;
    for (std::size_t d = 0; d < D; ++d) {
      const std::size_t per_dim = (extent[d] + tile_cells<D>(d) - 1) / tile_cells<D>(d);
      first[d] = (rest % per_dim) * tile_cells<D>(d);
      rest /= per_dim;
      tile_extent[d] = extent[d] - first[d] < tile_cells<D>(d) ? extent[d] - first[d] : tile_cells<D>(d);
      in_tile[d] = mine[d];
      inside = inside && in_tile[d] < tile_extent[d];
    }
    (stage_argument<K>(args, shared, first, tile_extent, true, staging, thread, threads), ...);
    __syncthreads();
    if (inside) {
      auto cells = std::make_tuple(staged_cell<K>(args, shared, first, tile_extent, in_tile, staging)...);
      f(std::get<K>(cells)...);
    }
    __syncthreads();
    (stage_argument<K>(args, shared, first, tile_extent, false, staging, thread, threads), ...);
    __syncthreads();  // before the next tile overwrites the shared copies
  }
}

}  // namespace detail

template <class F>
struct Kernel {
  F f;

  // Queues f over the interior of block `block` of the tensor arguments on
  // `stream` and returns.
  template <class... Args>
  void launch(CudaStream stream, std::size_t block, const Args&... args) const {
    launch(stream, block, SharedStaging{}, args...);
  }

  // The same with the tensor arguments whose bit is set in staging.stage
  // staged in shared memory (the *_in_shared modifiers; see
  // staged_block_kernel.cuh).
  template <class... Args>
  void launch(CudaStream stream, std::size_t block, SharedStaging staging, const Args&... args) const {
    constexpr std::size_t D = weft::detail::first_tensor_dims<Args...>();
    static_assert(D >= 1 && D <= 3, "weft::cuda::kernel: tensors of 1, 2 or 3 dimensions");
    static_assert(sizeof...(Args) <= 32, "weft::cuda::kernel: at most 32 arguments");
    const Extents<D> extent = weft::detail::first_tensor(args...).block_space(block).extent;
    auto arguments = std::make_tuple(detail::device_block_argument(args, block)...);
    if (staging.stage != 0) {
      launch_staged(stream, extent, arguments, staging, std::index_sequence_for<Args...>{});
      return;
    }
    const detail::BlockCells<F, decltype(arguments), D> cells{f, arguments};
    if constexpr (D == 1) {
      parallel_for(stream, RangePolicy<std::int64_t>(0, static_cast<std::int64_t>(extent[0])), cells);
    } else {
      using Policy = MDRangePolicy<static_cast<int>(D)>;
      typename Policy::Indices begin{}, end{};
      for (std::size_t d = 0; d < D; ++d) end[d] = static_cast<typename Policy::index_type>(extent[d]);
      parallel_for(stream, Policy(begin, end), cells);
    }
  }

 private:
  template <class Tuple, std::size_t D, std::size_t... K>
  void launch_staged(CudaStream stream, const Extents<D>& extent, Tuple& arguments, SharedStaging staging,
                     std::index_sequence<K...> order) const {
    // Each staged argument's tile gets its own 64-byte aligned slice.
    weft::detail::CheckedSize shared_size;
    std::size_t largest_padding = 0;
    const auto place = [&](auto& a, std::size_t k) {
      using A = std::remove_cvref_t<decltype(a)>;
      if constexpr (detail::is_device_block_v<A>) {
        if ((staging.stage >> k) & 1u) {
          a.shared_offset = shared_size.value();
          using T = typename detail::element_of<A>::type;
          const weft::detail::CheckedSize cells = detail::padded_tile_cells<D>(a.space.padding);
          const weft::detail::CheckedSize slice =
              (cells.fits() ? element_storage<T>::checked_bytes(cells.value()) : cells) + 63;
          shared_size += slice.fits() ? weft::detail::CheckedSize(slice.value() / 64 * 64) : slice;
          largest_padding = std::max(largest_padding, a.space.padding);
        }
      }
    };
    (place(std::get<K>(arguments), K), ...);
    if (!shared_size.fits()) {
      weft::detail::throw_size_overflow("weft::cuda::kernel: the in_shared tiles (up to " +
                                        std::to_string(largest_padding) +
                                        " cells of padding) need more bytes of shared memory than "
                                        "std::size_t holds");
    }
    const std::size_t shared_bytes = shared_size.value();
    const detail::StreamDevice on_device("weft::cuda::kernel (in_shared)", stream);
    const auto kernel = &detail::staged_block_kernel<F, Tuple, D, K...>;
    // A launch gets 48 KiB of shared memory unless the kernel opts in to
    // more, up to the device's per-block limit (227 KiB on an H100). The
    // opt-in asks for the whole limit rather than this launch's size, so
    // that workers launching the kernel with different tiles at once never
    // lower it under each other, and once per device (`opted_in`, a bit per
    // device), not on every launch.
    constexpr std::size_t kDefaultSharedLimit = 48 * 1024;
    static std::atomic<std::uint64_t> opted_in{0};
    if (shared_bytes > kDefaultSharedLimit) {
      int limit = 0;
      on_device.check(
          cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, on_device.device()),
          "cudaDeviceGetAttribute (shared memory per block)");
      if (shared_bytes > static_cast<std::size_t>(limit)) {
        throw std::invalid_argument(
            "weft::cuda::kernel: the in_shared tiles need " + std::to_string(shared_bytes) +
            " bytes of shared memory per block, more than the " + std::to_string(limit) +
            " a block can have on device " + std::to_string(on_device.device()) +
            " (use less padding, or stage fewer tensors in shared memory)");
      }
      const std::uint64_t bit = on_device.device() < 64 ? std::uint64_t{1} << on_device.device() : 0;
      if (bit == 0 || (opted_in.load(std::memory_order_relaxed) & bit) == 0) {
        on_device.check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, limit),
                        "cudaFuncSetAttribute (shared memory per block)");
        opted_in.fetch_or(bit, std::memory_order_relaxed);
      }
    }
    if (extent_is_empty(extent)) return;
    std::size_t tiles = 1;
    for (std::size_t d = 0; d < D; ++d)
      tiles *= (extent[d] + detail::tile_cells<D>(d) - 1) / detail::tile_cells<D>(d);
    const dim3 threads(detail::tile_cells<D>(0), D > 1 ? detail::tile_cells<D>(1) : 1,
                       D > 2 ? detail::tile_cells<D>(2) : 1);
    const dim3 grid(static_cast<unsigned>(std::min<std::size_t>(tiles, 1u << 20)));
    kernel<<<grid, threads, shared_bytes, stream>>>(f, arguments, extent, staging, order);
    on_device.check(cudaGetLastError(), "staged_block_kernel<<<>>>");
  }

  template <std::size_t D>
  static bool extent_is_empty(const Extents<D>& extent) {
    for (std::size_t d = 0; d < D; ++d)
      if (extent[d] == 0) return true;
    return false;
  }
};

// Marks f as a GPU kernel for split() and then_split().
template <class F>
Kernel<std::decay_t<F>> kernel(F&& f) {
  return Kernel<std::decay_t<F>>{std::forward<F>(f)};
}

}  // namespace weft::cuda

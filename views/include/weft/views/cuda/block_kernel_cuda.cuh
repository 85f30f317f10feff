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

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>

#include <weft/views/block_kernel.hpp>
#include <weft/views/cuda/parallel_for_cuda.cuh>
#include <weft/views/gpu_kernel.hpp>
#include <weft/views/range_policy.hpp>
#include <weft/views/tensor.hpp>

namespace weft::cuda {
namespace detail {

// What a kernel launch carries for one tensor argument: its block.
template <class T, std::size_t D>
struct DeviceBlock {
  BlockSpace<D> space;
  BlockPlace<D> place;
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
    return DeviceBlock<typename Tn::value_type, Tn::dims>{arg.block_space(block), arg.block_place(block)};
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

}  // namespace detail

template <class F>
struct Kernel {
  F f;

  // Queues f over the interior of block `block` of the tensor arguments on
  // `stream` and returns.
  template <class... Args>
  void launch(CudaStream stream, std::size_t block, const Args&... args) const {
    constexpr std::size_t D = weft::detail::first_tensor_dims<Args...>();
    static_assert(D >= 1 && D <= 3, "weft::cuda::kernel: tensors of 1, 2 or 3 dimensions");
    const Extents<D> extent = weft::detail::first_tensor(args...).block_space(block).extent;
    auto arguments = std::make_tuple(detail::device_block_argument(args, block)...);
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
};

// Marks f as a GPU kernel for split() and then_split().
template <class F>
Kernel<std::decay_t<F>> kernel(F&& f) {
  return Kernel<std::decay_t<F>>{std::forward<F>(f)};
}

}  // namespace weft::cuda

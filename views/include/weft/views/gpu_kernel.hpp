// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The marker graph operations use to tell a GPU kernel from a host kernel.
// weft::cuda::kernel(f) (views/cuda/block_kernel_cuda.cuh, .cu files only)
// wraps a split() kernel so that it runs on the GPU over tensors in GPU
// memory; host code only needs to recognise the wrapper.
#pragma once

#include <cstdint>
#include <type_traits>

namespace weft {
namespace cuda {
template <class F>
struct Kernel;  // defined in views/cuda/block_kernel_cuda.cuh
// Declared here so that code shared by host and .cu files can name it in a
// branch only .cu files take (if constexpr); defined in the same header.
template <class F>
Kernel<std::decay_t<F>> kernel(F&& f);

// Which arguments of a GPU kernel's launch go through shared memory (the
// *_in_shared modifiers): bit k for argument k.
struct SharedStaging {
  std::uint32_t stage = 0;       // copied into shared memory for the kernel
  std::uint32_t write_back = 0;  // and copied back after it (the kernel may write them)
};
}  // namespace cuda

template <class T>
inline constexpr bool is_gpu_kernel_v = false;
template <class F>
inline constexpr bool is_gpu_kernel_v<cuda::Kernel<F>> = true;

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// weft::cuda::parallel_for: the GPU twin of weft::parallel_for. It runs the
// very same WEFT_HOST_DEVICE functor, once per index, as a kernel queued on
// a stream.
//
//   struct Saxpy {
//     float a; const float* x; float* y;
//     WEFT_HOST_DEVICE void operator()(std::int64_t i) const { y[i] += a * x[i]; }
//   };
//   weft::parallel_for(weft::RangePolicy(0, n), Saxpy{a, x, y});                 // host backend
//   weft::cuda::parallel_for(gpu.compute_stream(), weft::RangePolicy(0, n),
//                            Saxpy{a, d_x, d_y});                                 // GPU, same functor
//
//   weft::cuda::parallel_for(stream, weft::MDRangePolicy<2>({0, 0}, {nx, ny}),
//                            [=] WEFT_HOST_DEVICE(std::int64_t i, std::int64_t j) { u[i + nx * j] = 0; });
//
// f is called as a const functor, f(i) for a RangePolicy and f(i0, i1[, i2])
// for an MDRangePolicy of rank 2 or 3, exactly once per index, from GPU
// threads in no particular order; dimension 0 runs along threadIdx.x, so
// warps walk the contiguous index of LayoutLeft data (launch_shape.cuh).
// f is copied to the GPU by value, as a kernel argument: it must hold device
// pointers (or unmanaged views of device memory), never host containers.
//
// Asynchronous: the call queues the kernel on `stream` and returns; wait with
// an event or a stream synchronisation before reading the results on the
// host. The kernel runs on the device `stream` belongs to, whichever device
// the calling thread has current. An empty range queues nothing. A launch
// that CUDA refuses throws std::runtime_error naming the device and the CUDA
// error; errors inside the kernel surface at the next synchronisation, as
// with any CUDA kernel.
#pragma once

#if !defined(__CUDACC__)
#error "<weft/views/cuda/parallel_for_cuda.cuh> is CUDA code: include it from a .cu file compiled by nvcc"
#endif

#include <weft/views/cuda/cuda_check.cuh>
#include <weft/views/cuda/launch_shape.cuh>
#include <weft/views/range_policy.hpp>

#include <cuda_runtime.h>

namespace weft::cuda {

namespace detail {

// One thread per index of a box the launch covers (for_each_covered_box).
template <class Box, class F>
__global__ void __launch_bounds__(kThreadsPerBlock) for_kernel(Box box, F f) {
  const F& fn = f;
  call_covered_index(box, fn);
}

}  // namespace detail

template <ExecutionPolicy Policy, class F>
void parallel_for(cudaStream_t stream, const Policy& policy, const F& f) {
  static_assert(weft::detail::invocable_per_index<Policy, const F&>::value,
                "weft::cuda::parallel_for: f must be callable on a const f as f(i) for a RangePolicy, "
                "f(i0, i1, ...) for an MDRangePolicy, and marked WEFT_HOST_DEVICE");
  if (policy.size() == 0) return;
  using Box = detail::IndexBoxOf<Policy>;
  const Box box = detail::index_box(policy);
  const detail::StreamDevice on_device("weft::cuda::parallel_for", stream);
  detail::for_each_covered_box(box, [&](const Box& covered, const detail::LaunchShape& shape) {
    on_device.check(detail::launch(shape, stream, &detail::for_kernel<Box, F>, covered, f),
                    "cudaLaunchKernelEx (parallel_for kernel)");
  });
}

}  // namespace weft::cuda

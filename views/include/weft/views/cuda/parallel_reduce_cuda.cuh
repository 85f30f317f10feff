// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// weft::cuda::parallel_reduce: the GPU twin of weft::parallel_reduce, with
// the same functors and reducers, queued on a stream.
//
//   struct Dot {
//     const double* x; const double* y;
//     WEFT_HOST_DEVICE void operator()(std::int64_t i, double& sum) const { sum += x[i] * y[i]; }
//   };
//   double* d_sum = ...;                                          // device memory
//   weft::cuda::parallel_reduce(stream, weft::RangePolicy(0, n), Dot{x, y}, weft::SumReducer(), d_sum);
//
//   double* h_max = ...;                                          // from HostPinnedSpace
//   weft::cuda::parallel_reduce(stream, weft::MDRangePolicy<2>({0, 0}, {nx, ny}), Largest{u},
//                               weft::MaxReducer(), weft::cuda::PinnedHostSlot<double>{h_max});
//   cudaStreamSynchronize(stream);                                // or wait on an event
//   use(*h_max);
//
// f is called as f(i, partial) or f(i0, i1[, i2], partial), once per index,
// as on the host; the reducer's init and join (reducers.hpp) run on the GPU,
// so they must be WEFT_HOST_DEVICE, as weft's own reducers are.
//
// How: each thread folds the indices it owns (launch_shape.cuh) into a
// partial that started as reducer.init; each block joins its threads'
// partials through warp shuffles and shared memory (block_reduce.cuh) into
// one partial per block (at most kMaxReduceBlocks); a second, one-block
// kernel joins those in block order and writes the result. Everything is
// queued on `stream`: no host round trip, no synchronisation. A range that
// fits one block skips the second kernel; an empty range writes reducer.init.
//
// Determinism: the grid depends only on the policy's extents, and every join
// happens in a fixed order, so the same call gives bit-identical results run
// after run, on any GPU. It is not the host backend's order: floating-point
// sums differ from the host's in the last bits. The threads of a block take
// interleaved indices (that is what makes their loads coalesce), so the join
// must be commutative as well as associative here; weft's Sum, Max and Min
// reducers are.
//
// T: trivially copyable and default-constructible (arithmetic types, small
// structs). The per-block partials live in stream-ordered memory
// (cudaMallocAsync / cudaFreeAsync on `stream`, from the device's memory
// pool), freed in stream order once the kernels are done.
//
// The results: T* device_result must be device memory (or memory the device
// can write, such as mapped pinned memory). PinnedHostSlot<T> is a T in
// page-locked host memory; the total is copied there by a cudaMemcpyAsync on
// the stream, and is valid once the stream has reached that point. Launches
// CUDA refuses throw std::runtime_error naming the call, device and error.
#pragma once

#if !defined(__CUDACC__)
#error "<weft/views/cuda/parallel_reduce_cuda.cuh> is CUDA code: include it from a .cu file compiled by nvcc"
#endif

#include <weft/views/cuda/block_reduce.cuh>
#include <weft/views/cuda/cuda_check.cuh>
#include <weft/views/cuda/launch_shape.cuh>
#include <weft/views/range_policy.hpp>
#include <weft/views/reducers.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace weft::cuda {

// Where a reduction leaves its value on the host: a T in page-locked memory
// (HostPinnedSpace, cudaMallocHost), so that the copy into it is asynchronous.
template <class T>
struct PinnedHostSlot {
  T* pointer = nullptr;
};

namespace detail {

// Caps the partials the second kernel joins (one block of 256 threads joins
// 4 each), while 1024 blocks of 256 threads still fill an H100 (132 SMs).
inline constexpr std::uint64_t kMaxReduceBlocks = 1024;

template <class Box, class F, class R, class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    reduce_blocks_kernel(Box box, F f, R reducer, T* block_totals) {
  T partial{};
  reducer.init(partial);
  const F& fn = f;
  for_each_owned_index(box, [&fn, &partial](auto... index) { fn(index..., partial); });
  if (block_join(partial, reducer)) block_totals[block_in_grid()] = partial;
}

// One block: thread t joins a contiguous run of the partials in order, then
// the block joins the threads in order, so the partials are joined in block
// order.
template <class R, class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    join_partials_kernel(const T* partials, std::uint64_t count, R reducer, T* total) {
  const std::uint64_t per_thread = (count + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const std::uint64_t first = thread_in_block() * per_thread;
  const std::uint64_t last = first + per_thread < count ? first + per_thread : count;
  T value{};
  reducer.init(value);
  for (std::uint64_t k = first; k < last; ++k) reducer.join(value, partials[k]);
  if (block_join(value, reducer)) *total = value;
}

// Device memory in stream order: usable by work queued on the stream after
// the allocation, returned to the pool after the work queued before the free.
class StreamScratch {
 public:
  StreamScratch(const StreamDevice& on_device, cudaStream_t stream, std::size_t bytes) : stream_(stream) {
    if (bytes != 0)
      on_device.check(cudaMallocAsync(&memory_, bytes, stream), "cudaMallocAsync (reduction partials)");
  }
  ~StreamScratch() {
    // The free is queued behind the kernels; it fails only for a stream or
    // pointer CUDA no longer knows, which the allocation above rules out.
    if (memory_ != nullptr) (void)cudaFreeAsync(memory_, stream_);
  }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  void* get() const noexcept { return memory_; }

 private:
  cudaStream_t stream_;
  void* memory_ = nullptr;
};

// Debug builds check what a kernel would otherwise fault on, or what would
// quietly make the call synchronous.
template <class T>
void check_result_memory(const StreamDevice& on_device, const T* pointer, bool must_be_pinned_host) {
#ifndef NDEBUG
  cudaPointerAttributes attributes{};
  on_device.check(cudaPointerGetAttributes(&attributes, pointer), "cudaPointerGetAttributes (result)");
  if (must_be_pinned_host && attributes.type != cudaMemoryTypeHost) {
    throw std::invalid_argument(std::string(on_device.who()) +
                                ": the PinnedHostSlot is not page-locked host memory (expected memory from "
                                "HostPinnedSpace or cudaMallocHost)");
  }
  if (!must_be_pinned_host && attributes.type == cudaMemoryTypeUnregistered) {
    throw std::invalid_argument(std::string(on_device.who()) +
                                ": device_result points to ordinary host memory (expected device memory, "
                                "or a PinnedHostSlot for a result on the host)");
  }
#else
  (void)on_device;
  (void)pointer;
  (void)must_be_pinned_host;
#endif
}

template <class Policy, class F, class R, class T>
void run_parallel_reduce(cudaStream_t stream, const Policy& policy, const F& f, const R& reducer,
                         T* device_result, T* pinned_host_result) {
  static_assert(Reducer<R, T>,
                "weft::cuda::parallel_reduce: the reducer needs WEFT_HOST_DEVICE init(T&) and "
                "join(T&, const T&) const members");
  static_assert(weft::detail::invocable_per_index<Policy, const F&, T&>::value,
                "weft::cuda::parallel_reduce: f must be callable on a const f as f(i, T& partial) for a "
                "RangePolicy, f(i0, i1, ..., T& partial) for an MDRangePolicy, and marked WEFT_HOST_DEVICE");
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>,
                "weft::cuda::parallel_reduce: the value type must be trivially copyable and "
                "default-constructible");
  const bool to_host = pinned_host_result != nullptr;
  const StreamDevice on_device("weft::cuda::parallel_reduce", stream);
  check_result_memory(on_device, to_host ? pinned_host_result : device_result, to_host);

  using Box = IndexBoxOf<Policy>;
  const Box box = index_box(policy);
  const LaunchShape shape = launch_shape(box, kMaxReduceBlocks);
  const std::uint64_t blocks = policy.size() == 0 ? 0 : shape.blocks();
  const std::uint64_t partial_slots = blocks > 1 ? blocks : 0;
  const StreamScratch scratch(on_device, stream, (partial_slots + (to_host ? 1 : 0)) * sizeof(T));
  T* const partials = static_cast<T*>(scratch.get());
  T* const total = to_host ? partials + partial_slots : device_result;

  if (blocks == 1) {  // the one block's value is the total
    on_device.check(launch(shape, stream, &reduce_blocks_kernel<Box, F, R, T>, box, f, reducer, total),
                    "cudaLaunchKernelEx (parallel_reduce kernel)");
  } else {
    if (blocks > 1) {
      on_device.check(launch(shape, stream, &reduce_blocks_kernel<Box, F, R, T>, box, f, reducer, partials),
                      "cudaLaunchKernelEx (parallel_reduce kernel)");
    }
    const LaunchShape one_block{dim3(1), dim3(kThreadsPerBlock)};
    on_device.check(launch(one_block, stream, &join_partials_kernel<R, T>, static_cast<const T*>(partials),
                           blocks, reducer, total),
                    "cudaLaunchKernelEx (parallel_reduce join kernel)");
  }
  if (to_host) {
    on_device.check(cudaMemcpyAsync(pinned_host_result, total, sizeof(T), cudaMemcpyDeviceToHost, stream),
                    "cudaMemcpyAsync (reduction result to the host)");
  }
}

}  // namespace detail

template <ExecutionPolicy Policy, class F, class R, class T>
void parallel_reduce(cudaStream_t stream, const Policy& policy, const F& f, const R& reducer,
                     T* device_result) {
  if (device_result == nullptr) {
    throw std::invalid_argument(
        "weft::cuda::parallel_reduce: device_result is null (expected device memory for one T)");
  }
  detail::run_parallel_reduce(stream, policy, f, reducer, device_result, static_cast<T*>(nullptr));
}

template <ExecutionPolicy Policy, class F, class R, class T>
void parallel_reduce(cudaStream_t stream, const Policy& policy, const F& f, const R& reducer,
                     PinnedHostSlot<T> host_result) {
  if (host_result.pointer == nullptr) {
    throw std::invalid_argument(
        "weft::cuda::parallel_reduce: the PinnedHostSlot is null (expected page-locked host memory for one "
        "T)");
  }
  detail::run_parallel_reduce(stream, policy, f, reducer, static_cast<T*>(nullptr), host_result.pointer);
}

// Without a reducer the reduction is a sum, as on the host.
template <ExecutionPolicy Policy, class F, class T>
void parallel_reduce(cudaStream_t stream, const Policy& policy, const F& f, T* device_result) {
  parallel_reduce(stream, policy, f, SumReducer<>{}, device_result);
}

template <ExecutionPolicy Policy, class F, class T>
void parallel_reduce(cudaStream_t stream, const Policy& policy, const F& f, PinnedHostSlot<T> host_result) {
  parallel_reduce(stream, policy, f, SumReducer<>{}, host_result);
}

}  // namespace weft::cuda

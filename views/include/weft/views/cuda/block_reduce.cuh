// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Joining the values of the threads of one block with a reducer: warp
// shuffles inside each warp, then shared memory across the warps.
//
// The join order is fixed: lane 0 of a warp joins lanes 0, 1, ..., 31 in
// order (the shuffle offsets grow 1, 2, 4, ..., so each step joins two
// neighbouring runs, the lower one first), and thread 0 joins the warps in
// order. So a block's result depends only on the values its threads hold,
// and, for an associative join, equals the in-order join of thread 0's value
// through thread 255's.
#pragma once

#if !defined(__CUDACC__)
#error "<weft/views/cuda/block_reduce.cuh> is CUDA code: include it from a .cu file compiled by nvcc"
#endif

#include <weft/views/cuda/launch_shape.cuh>

#include <cuda_runtime.h>

#include <cstring>
#include <type_traits>

namespace weft::cuda::detail {

static_assert(kThreadsPerBlock % kWarpSize == 0 && kWarpsPerBlock <= kWarpSize &&
                  (kWarpsPerBlock & (kWarpsPerBlock - 1)) == 0,
              "block_join: the warps of a block must fit, as a power of two, in one warp");

// __shfl_down_sync for any trivially copyable T, moved in 32-bit words (the
// hardware's unit), so that char, bool and small aggregates shuffle as well
// as int and double.
template <class T>
__device__ T shuffle_down(const T& value, unsigned offset) {
  static_assert(std::is_trivially_copyable_v<T>,
                "weft::cuda reductions move values between threads bitwise: T must be trivially copyable");
  constexpr unsigned kWords = (sizeof(T) + sizeof(unsigned) - 1) / sizeof(unsigned);
  unsigned words[kWords] = {};
  std::memcpy(words, &value, sizeof(T));
  for (unsigned w = 0; w < kWords; ++w) words[w] = __shfl_down_sync(0xffffffffu, words[w], offset);
  T moved;
  std::memcpy(&moved, words, sizeof(T));
  return moved;
}

// Lane 0 ends with the join of the values of lanes [0, lanes) in lane order
// (lanes: a power of two up to 32); the other lanes hold partial joins. Every
// lane of the warp must call it, as the shuffles need the whole warp.
template <class T, class R>
__device__ void warp_join(T& value, const R& reducer, unsigned lanes = kWarpSize) {
  const unsigned lane = thread_in_block() % kWarpSize;
  for (unsigned offset = 1; offset < lanes; offset *= 2) {
    const T higher = shuffle_down(value, offset);
    // Only lanes that start a run of 2 * offset join, so every join reads
    // values that were joined themselves, never past the warp's end.
    if ((lane & (2 * offset - 1)) == 0) reducer.join(value, higher);
  }
}

// Thread 0 of the block ends with the join of all kThreadsPerBlock values in
// thread order; returns true there. Every thread of the block must call it,
// once per kernel (it uses one static shared-memory buffer).
template <class T, class R>
__device__ bool block_join(T& value, const R& reducer) {
  __shared__ alignas(alignof(T)) unsigned char warp_totals[kWarpsPerBlock * sizeof(T)];
  const unsigned thread = thread_in_block();
  const unsigned lane = thread % kWarpSize;
  const unsigned warp = thread / kWarpSize;
  warp_join(value, reducer);
  if (lane == 0) std::memcpy(warp_totals + warp * sizeof(T), &value, sizeof(T));
  __syncthreads();
  if (warp != 0) return false;
  if (lane < kWarpsPerBlock) std::memcpy(&value, warp_totals + lane * sizeof(T), sizeof(T));
  warp_join(value, reducer, kWarpsPerBlock);
  return lane == 0;
}

}  // namespace weft::cuda::detail

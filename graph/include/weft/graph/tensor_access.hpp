// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How a split kernel uses a tensor's padding (Ripple section 5.4). Passing a
// Tensor plainly to split() says the kernel touches only its own block's
// interior; wrapping it says the kernel reads the padding, which must first
// be copied from the neighbouring blocks:
//
//   g.split(diff, weft::concurrent_padded_access(x), y);   // reads x's padding, writes y
//   g.split(smooth, weft::exclusive_padded_access(x));     // reads x's padding, writes x
//
// concurrent_padded_access: one copy node per (source, destination) pair of
//   neighbouring blocks runs first; a block's kernel waits for the copies
//   into its padding only (Figure 7), so copies out of a block overlap its
//   kernel.
// exclusive_padded_access: the kernel writes the data its neighbours copy,
//   so a block's kernel also waits for the copies out of it (Figure 9).
// in_shared and the *_in_shared forms ask the CUDA backend to stage the block
//   (and its padding) in shared memory, tile by tile, for a weft::cuda::kernel
//   (views/cuda/staged_block_kernel.cuh); the graph has the same shape as
//   without it, and on the host backend it changes nothing else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <weft/views/tensor.hpp>

namespace weft {

enum class PaddedAccess : std::uint8_t { None, Concurrent, Exclusive };

template <class T, std::size_t D>
struct TensorAccess {
  Tensor<T, D> tensor;
  PaddedAccess access = PaddedAccess::None;
  bool in_shared = false;
};

template <class T, std::size_t D>
TensorAccess<T, D> concurrent_padded_access(const Tensor<T, D>& t) {
  return {t, PaddedAccess::Concurrent, false};
}
template <class T, std::size_t D>
TensorAccess<T, D> exclusive_padded_access(const Tensor<T, D>& t) {
  return {t, PaddedAccess::Exclusive, false};
}
template <class T, std::size_t D>
TensorAccess<T, D> in_shared(const Tensor<T, D>& t) {
  return {t, PaddedAccess::None, true};
}
template <class T, std::size_t D>
TensorAccess<T, D> concurrent_padded_access_in_shared(const Tensor<T, D>& t) {
  return {t, PaddedAccess::Concurrent, true};
}
template <class T, std::size_t D>
TensorAccess<T, D> exclusive_padded_access_in_shared(const Tensor<T, D>& t) {
  return {t, PaddedAccess::Exclusive, true};
}

template <class T>
struct is_tensor_access : std::false_type {};
template <class T, std::size_t D>
struct is_tensor_access<TensorAccess<T, D>> : std::true_type {};
template <class T>
inline constexpr bool is_tensor_access_v = is_tensor_access<std::remove_cvref_t<T>>::value;

// The Tensor inside a split argument (for kernels), or the argument itself.
template <class Arg>
decltype(auto) unwrap_tensor(Arg& arg) noexcept {
  if constexpr (is_tensor_access_v<Arg>) {
    return (arg.tensor);
  } else {
    return (arg);
  }
}

}  // namespace weft

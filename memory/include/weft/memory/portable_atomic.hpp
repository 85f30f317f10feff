// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Atomic operations on plain words that compile for the host and, under nvcc,
// for the GPU: std::atomic_ref on the host side, cuda::atomic_ref (device
// scope) in device code. The memory pool keeps its state in plain arrays
// (they may live in device memory) and touches them only through these.
//
//   std::uint64_t word = 0;                     // any suitably aligned word
//   weft::detail::atomic_fetch_or(&word, 4u, weft::detail::MemoryOrder::acquire);
//
// Host code never sees a CUDA header: <cuda/atomic> is included only by nvcc.
#pragma once

#include <weft/backends/host_device.hpp>

#if defined(__CUDACC__)
#include <cuda/atomic>
#endif

#include <atomic>
#include <cstdint>

namespace weft::detail {

enum class MemoryOrder { relaxed, acquire, release, acq_rel, seq_cst };

#if defined(__CUDA_ARCH__)
template <class T>
using NativeAtomicRef = ::cuda::atomic_ref<T, ::cuda::thread_scope_device>;
using NativeMemoryOrder = ::cuda::std::memory_order;
#define WEFT_NATIVE_ORDER(name) ::cuda::std::memory_order_##name
#else
template <class T>
using NativeAtomicRef = std::atomic_ref<T>;
using NativeMemoryOrder = std::memory_order;
#define WEFT_NATIVE_ORDER(name) std::memory_order_##name
#endif

WEFT_HOST_DEVICE constexpr NativeMemoryOrder native_order(MemoryOrder order) noexcept {
  switch (order) {
    case MemoryOrder::relaxed:
      return WEFT_NATIVE_ORDER(relaxed);
    case MemoryOrder::acquire:
      return WEFT_NATIVE_ORDER(acquire);
    case MemoryOrder::release:
      return WEFT_NATIVE_ORDER(release);
    case MemoryOrder::acq_rel:
      return WEFT_NATIVE_ORDER(acq_rel);
    case MemoryOrder::seq_cst:
      return WEFT_NATIVE_ORDER(seq_cst);
  }
  return WEFT_NATIVE_ORDER(seq_cst);
}

// A load may not use release or acq_rel; callers pass relaxed, acquire or seq_cst.
template <class T>
WEFT_HOST_DEVICE inline T atomic_load(const T* word, MemoryOrder order) noexcept {
  return NativeAtomicRef<T>(*const_cast<T*>(word)).load(native_order(order));
}

template <class T>
WEFT_HOST_DEVICE inline void atomic_store(T* word, T value, MemoryOrder order) noexcept {
  NativeAtomicRef<T>(*word).store(value, native_order(order));
}

template <class T>
WEFT_HOST_DEVICE inline T atomic_exchange(T* word, T value, MemoryOrder order) noexcept {
  return NativeAtomicRef<T>(*word).exchange(value, native_order(order));
}

template <class T>
WEFT_HOST_DEVICE inline T atomic_fetch_or(T* word, T bits, MemoryOrder order) noexcept {
  return NativeAtomicRef<T>(*word).fetch_or(bits, native_order(order));
}

template <class T>
WEFT_HOST_DEVICE inline T atomic_fetch_and(T* word, T bits, MemoryOrder order) noexcept {
  return NativeAtomicRef<T>(*word).fetch_and(bits, native_order(order));
}

// Strong compare-exchange; on failure `expected` receives the current value,
// read with relaxed order.
template <class T>
WEFT_HOST_DEVICE inline bool atomic_compare_exchange(T* word, T& expected, T desired,
                                                     MemoryOrder order) noexcept {
  return NativeAtomicRef<T>(*word).compare_exchange_strong(expected, desired, native_order(order),
                                                           WEFT_NATIVE_ORDER(relaxed));
}

#undef WEFT_NATIVE_ORDER

}  // namespace weft::detail

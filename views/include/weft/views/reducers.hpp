// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reducers: how parallel_reduce and ReductionResult combine partial values.
//
//   double total;
//   weft::parallel_reduce(n, [&](std::int64_t i, double& sum) { sum += x(i); },
//                         weft::SumReducer(), total);
//
//   struct ArgMax {                       // a user reducer over a user type
//     void init(Best& b) const { b = {-inf, -1}; }
//     void join(Best& into, const Best& from) const { if (from.value > into.value) into = from; }
//   };
//
// A reducer R for values of type T has `void init(T&) const`, which sets a
// value to the identity of the reduction, and `void join(T& into, const T&
// from) const`, which folds `from` into `into`. join must be associative
// (parallel_reduce groups values by chunk) but need not be commutative:
// partials are always joined in index order.
//
// SumReducer, MaxReducer and MinReducer work with no template argument (their
// members are templates, as Ripple writes `SumReducer()`) or fixed to one T.
// Sum works for any T whose value-initialised T{} is zero and which has +=
// (arithmetic types, complex numbers, small vectors); Max and Min for
// arithmetic types, with -inf / +inf (or the lowest / highest value for
// integers) as identity.
#pragma once

#include <limits>
#include <type_traits>

#include <weft/backends/host_device.hpp>

namespace weft {

template <class R, class T>
concept Reducer = requires(const R& reducer, T& into, const T& from) {
  reducer.init(into);
  reducer.join(into, from);
};

namespace detail {

template <class T>
concept Arithmetic = std::is_arithmetic_v<T>;

template <class T>
WEFT_HOST_DEVICE constexpr T lowest_or_minus_infinity() noexcept {
  if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
  return std::numeric_limits<T>::lowest();
}

template <class T>
WEFT_HOST_DEVICE constexpr T highest_or_infinity() noexcept {
  if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
  return std::numeric_limits<T>::max();
}

}  // namespace detail

template <class T = void>
struct SumReducer {
  WEFT_HOST_DEVICE constexpr void init(T& value) const { value = T{}; }
  WEFT_HOST_DEVICE constexpr void join(T& into, const T& from) const { into += from; }
};

template <>
struct SumReducer<void> {
  template <class T>
  WEFT_HOST_DEVICE constexpr void init(T& value) const {
    value = T{};
  }
  template <class T>
  WEFT_HOST_DEVICE constexpr void join(T& into, const T& from) const {
    into += from;
  }
};

template <class T = void>
struct MaxReducer {
  static_assert(std::is_arithmetic_v<T>, "MaxReducer<T> needs an arithmetic T");
  WEFT_HOST_DEVICE constexpr void init(T& value) const { value = detail::lowest_or_minus_infinity<T>(); }
  WEFT_HOST_DEVICE constexpr void join(T& into, const T& from) const {
    if (into < from) into = from;
  }
};

template <>
struct MaxReducer<void> {
  template <detail::Arithmetic T>
  WEFT_HOST_DEVICE constexpr void init(T& value) const {
    value = detail::lowest_or_minus_infinity<T>();
  }
  template <detail::Arithmetic T>
  WEFT_HOST_DEVICE constexpr void join(T& into, const T& from) const {
    if (into < from) into = from;
  }
};

template <class T = void>
struct MinReducer {
  static_assert(std::is_arithmetic_v<T>, "MinReducer<T> needs an arithmetic T");
  WEFT_HOST_DEVICE constexpr void init(T& value) const { value = detail::highest_or_infinity<T>(); }
  WEFT_HOST_DEVICE constexpr void join(T& into, const T& from) const {
    if (from < into) into = from;
  }
};

template <>
struct MinReducer<void> {
  template <detail::Arithmetic T>
  WEFT_HOST_DEVICE constexpr void init(T& value) const {
    value = detail::highest_or_infinity<T>();
  }
  template <detail::Arithmetic T>
  WEFT_HOST_DEVICE constexpr void join(T& into, const T& from) const {
    if (from < into) into = from;
  }
};

// What Graph::reduce folds when it is given no map: each cell itself
// (converted to the result's type by the reduction).
struct CellItself {
  template <class Cell>
  WEFT_HOST_DEVICE constexpr Cell&& operator()(Cell&& cell) const noexcept {
    return static_cast<Cell&&>(cell);
  }
};

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// unrolled_for<N>(f): calls f(dim) for dim = 0 .. N-1, each dim an
// std::integral_constant, so code written once for any number of dimensions
// (Ripple Listing 4) unrolls at compile time and indexes with constants.
//
//   double sum = 0;
//   weft::unrolled_for<2>([&](auto dim) { sum += *it.offset(dim, 1) - *it.offset(dim, -1); });
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include <weft/backends/host_device.hpp>

namespace weft {

// The dimension names of Ripple's kernels: it.offset(weft::dim_x, 1).
inline constexpr std::integral_constant<std::size_t, 0> dim_x{};
inline constexpr std::integral_constant<std::size_t, 1> dim_y{};
inline constexpr std::integral_constant<std::size_t, 2> dim_z{};

namespace detail {
template <class F, std::size_t... I>
WEFT_HOST_DEVICE constexpr void unrolled_for_impl(F&& f, std::index_sequence<I...>) {
  (f(std::integral_constant<std::size_t, I>{}), ...);
}
}  // namespace detail

template <std::size_t N, class F>
WEFT_HOST_DEVICE constexpr void unrolled_for(F&& f) {
  detail::unrolled_for_impl(f, std::make_index_sequence<N>{});
}

}  // namespace weft

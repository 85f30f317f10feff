// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Array layouts: how a View turns a multi-index into a memory offset (Kokkos
// tutorial, "Optionally specifying a particular array layout").
//
//   weft::View<double**, weft::LayoutRight> c("c", 4, 3);  // c(i, j) at i * 3 + j (C order, the default)
//   weft::View<double**, weft::LayoutLeft> f("f", 4, 3);   // f(i, j) at i + j * 4 (Fortran order)
//   weft::View<double**, weft::LayoutStride> s("s", weft::LayoutStride(4, 8, 3, 1));  // s(i, j) at i * 8 + j
//
// LayoutLeft and LayoutRight are tags: the extents decide every stride.
// LayoutStride carries its strides; subviews that cannot keep their source's
// order get it, and users may build one with explicit (extent, stride) pairs
// (a LayoutStride View given plain extents is laid out in C order).
// The layout never changes what user code writes: a(i, j) reads the same
// element whichever layout `a` has.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <stdexcept>
#include <type_traits>

namespace weft {

namespace detail {

// True for a negative value of any integral type (bool and char included, which std::cmp_less refuses).
template <std::integral Int>
constexpr bool is_negative(Int value) noexcept {
  if constexpr (std::is_signed_v<Int>) {
    return value < 0;
  } else {
    return false;
  }
}

// An even count of integers, at most two per dimension.
template <std::size_t Count, std::size_t MaxRank>
concept extent_stride_pairs = Count % 2 == 0 && Count <= 2 * MaxRank;

}  // namespace detail

// The first index is stride-one (Fortran, column-major).
struct LayoutLeft {};

// The last index is stride-one (C, row-major). The default layout.
struct LayoutRight {};

// Any stride per dimension, given as interleaved (extent, stride) pairs:
// LayoutStride(n0, s0, n1, s1, ...). Strides count elements, not bytes.
// Strides that make two indices share an element are not rejected; writing
// through such a View is then the caller's business.
struct LayoutStride {
  static constexpr std::size_t max_rank = 8;

  std::size_t rank = 0;  // (extent, stride) pairs given
  std::array<std::size_t, max_rank> extent{};
  std::array<std::size_t, max_rank> stride{};

  constexpr LayoutStride() = default;

  template <std::integral... ExtentStridePairs>
  requires detail::extent_stride_pairs<sizeof...(ExtentStridePairs), max_rank>
  constexpr explicit LayoutStride(ExtentStridePairs... pairs) : rank(sizeof...(ExtentStridePairs) / 2) {
    if ((detail::is_negative(pairs) || ...)) {
      throw std::invalid_argument("LayoutStride: extents and strides must be >= 0");
    }
    const std::array<std::size_t, sizeof...(ExtentStridePairs)> values{static_cast<std::size_t>(pairs)...};
    for (std::size_t k = 0; 2 * k < values.size(); ++k) {
      extent[k] = values[2 * k];
      stride[k] = values[2 * k + 1];
    }
  }
};

template <class L>
concept ViewLayout =
    std::same_as<L, LayoutLeft> || std::same_as<L, LayoutRight> || std::same_as<L, LayoutStride>;

}  // namespace weft

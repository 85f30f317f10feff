// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// subview(v, args...): a View of part of another View, sharing its allocation
// (Kokkos' subview; the Kokkos array paper's "subarray" of a multi-index map).
//
//   weft::View<double***> a("a", 4, 5, 6);
//   auto plane = weft::subview(a, 2, weft::ALL, weft::ALL);             // a(2, :, :), rank 2, LayoutRight
//   auto block = weft::subview(a, weft::Range{1, 3}, std::pair{0, 2}, 5);  // rank 2, LayoutStride
//   plane(1, 1) = 7.0;                                                  // writes a(2, 1, 1)
//
// One argument per dimension of `v`:
//   an integer i          keeps only index i and drops the dimension,
//   Range{b, e} or a      keeps the half-open [b, e), renumbered from 0,
//   std::pair{b, e}
//   ALL                   keeps the whole dimension.
// The result has one runtime extent per kept dimension, the same element type
// (const stays const) and space, and shares ownership with `v`: it keeps the
// allocation alive on its own. Its layout is the source's when the kept
// elements still follow that order with no holes (LayoutRight: indices first,
// then at most one range, then only ALL; LayoutLeft: the mirror image),
// LayoutStride otherwise.
//
// Arguments are always checked, in every build type (a subview is not an
// inner-loop operation): an index or range outside the extent throws
// std::out_of_range naming the View, the dimension and the extent; a range
// with begin > end throws std::invalid_argument.
#pragma once

#include <weft/views/layout.hpp>
#include <weft/views/view.hpp>
#include <weft/views/view_errors.hpp>
#include <weft/views/view_extents.hpp>
#include <weft/views/view_mapping.hpp>

#include <array>
#include <concepts>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace weft {

// Keeps a whole dimension in a subview.
struct AllExtent {};
inline constexpr AllExtent ALL{};

// The half-open index range [begin, end) of one dimension.
struct Range {
  std::size_t begin = 0;
  std::size_t end = 0;

  constexpr Range() = default;
  template <std::integral Begin, std::integral End>
  constexpr Range(Begin first, End last)
      : begin(static_cast<std::size_t>(first)), end(static_cast<std::size_t>(last)) {
    if (detail::is_negative(first) || detail::is_negative(last)) {
      throw std::invalid_argument("Range: begin and end must not be negative (got [" + std::to_string(first) +
                                  ", " + std::to_string(last) + "))");
    }
  }
};

namespace detail {

template <class T>
struct IsIntegralPair : std::false_type {};
template <std::integral Begin, std::integral End>
struct IsIntegralPair<std::pair<Begin, End>> : std::true_type {};

// What a subview argument does to its dimension.
enum class SubviewKind { index, range, all };

template <class Arg>
constexpr SubviewKind subview_kind() {
  if constexpr (std::integral<Arg>) {
    return SubviewKind::index;
  } else if constexpr (std::same_as<Arg, AllExtent>) {
    return SubviewKind::all;
  } else {
    return SubviewKind::range;
  }
}

template <class Arg>
concept SubviewArg = std::integral<Arg> || std::same_as<Arg, AllExtent> || std::same_as<Arg, Range> ||
    IsIntegralPair<Arg>::value;

template <class... Args>
concept SubviewArgs = (SubviewArg<Args> && ...);

// Whether the kept dimensions still form a LayoutRight (or, mirrored,
// LayoutLeft) array: every dimension after the first kept one (before the
// last kept one) must be whole.
template <class Layout, class... Args>
constexpr bool subview_keeps_layout() {
  constexpr std::array<SubviewKind, sizeof...(Args)> kinds{subview_kind<Args>()...};
  if constexpr (std::same_as<Layout, LayoutStride>) {
    return false;
  } else {
    bool seen_kept = false;
    for (std::size_t n = 0; n < kinds.size(); ++n) {
      const SubviewKind kind = std::same_as<Layout, LayoutRight> ? kinds[n] : kinds[kinds.size() - 1 - n];
      if (seen_kept && kind != SubviewKind::all) return false;
      if (kind != SubviewKind::index) seen_kept = true;
    }
    return true;
  }
}

template <class Source, class... Args>
struct SubviewResult {
  static constexpr std::size_t kept = ((subview_kind<Args>() != SubviewKind::index ? 1 : 0) + ... + 0);
  using layout =
      std::conditional_t<kept == 0 || subview_keeps_layout<typename Source::array_layout, Args...>(),
                         typename Source::array_layout, LayoutStride>;
  using type =
      View<runtime_data_type_t<typename Source::value_type, kept>, layout, typename Source::memory_space>;
};

// [begin, end) of one dimension, checked against its extent.
template <class Arg>
std::pair<std::size_t, std::size_t> subview_bounds(const Arg& arg, std::size_t dim, std::size_t extent,
                                                   const std::string& label) {
  const auto where = [&] { return "subview of " + view_name(label) + ": dimension " + std::to_string(dim); };
  if constexpr (std::integral<Arg>) {
    if (is_negative(arg) || static_cast<std::size_t>(arg) >= extent) {
      throw std::out_of_range(where() + " index " + std::to_string(arg) + " is out of bounds (extent " +
                              std::to_string(extent) + ")");
    }
    return {static_cast<std::size_t>(arg), static_cast<std::size_t>(arg) + 1};
  } else if constexpr (std::same_as<Arg, AllExtent>) {
    return {0, extent};
  } else {
    if constexpr (IsIntegralPair<Arg>::value) {
      if (is_negative(arg.first) || is_negative(arg.second)) {
        throw std::out_of_range(where() + " range [" + std::to_string(arg.first) + ", " +
                                std::to_string(arg.second) + ") is out of bounds (extent " +
                                std::to_string(extent) + ")");
      }
    }
    const Range range = [&] {
      if constexpr (std::same_as<Arg, Range>) {
        return arg;
      } else {
        return Range(arg.first, arg.second);
      }
    }();
    if (range.begin > range.end) {
      throw std::invalid_argument(where() + " range [" + std::to_string(range.begin) + ", " +
                                  std::to_string(range.end) + ") has begin > end");
    }
    if (range.end > extent) {
      throw std::out_of_range(where() + " range [" + std::to_string(range.begin) + ", " +
                              std::to_string(range.end) + ") is out of bounds (extent " +
                              std::to_string(extent) + ")");
    }
    return {range.begin, range.end};
  }
}

}  // namespace detail

template <class DataType, class Layout, class Space, class... Args>
requires detail::SubviewArgs<Args...>
auto subview(const View<DataType, Layout, Space>& source, const Args&... args) ->
    typename detail::SubviewResult<View<DataType, Layout, Space>, Args...>::type {
  using Source = View<DataType, Layout, Space>;
  using Result = typename detail::SubviewResult<Source, Args...>::type;
  static_assert(sizeof...(Args) == Source::rank,
                "subview: pass exactly one argument per dimension of the View");

  std::array<std::size_t, Result::rank> extents{};
  std::array<std::size_t, Result::rank> strides{};
  std::size_t offset = 0;
  std::size_t dim = 0;
  std::size_t kept = 0;
  const auto take = [&](const auto& arg) {
    const auto [begin, end] = detail::subview_bounds(arg, dim, source.extent(dim), source.label());
    offset += begin * source.stride(dim);
    if constexpr (detail::subview_kind<std::remove_cvref_t<decltype(arg)>>() != detail::SubviewKind::index) {
      extents[kept] = end - begin;
      strides[kept] = source.stride(dim);
      ++kept;
    }
    ++dim;
  };
  (take(args), ...);

  const auto map = detail::make_mapping<typename Result::mapping_type>(extents, strides);
  // An empty result may start past the end of the source; it points at the
  // source's start instead, since it can never be dereferenced.
  bool empty = false;
  for (std::size_t e : extents) empty = empty || e == 0;
  typename Result::pointer_type data =
      source.data() == nullptr || empty ? source.data() : source.data() + offset;
  return detail::ViewAccess::share<Result>(source, data, map);
}

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The shape of a View: its data type spells the rank and which extents are
// known at compile time (Kokkos tutorial, "Views to Arrays").
//
//   using Traits = weft::ViewDataTraits<double**[3][8]>;
//   static_assert(Traits::rank == 4 && Traits::rank_dynamic == 2);
//   Traits::extents_type shape({n, m});   // [n][m][3][8]
//   shape.extent<2>();                    // 3, a constant the compiler folds into index math
//
// Each `*` is a runtime extent, each `[N]` a compile-time one; runtime extents
// come first. C++ reads `double**[3][8]` as "array of 3 arrays of 8 double**",
// so the array bounds are peeled first (outermost first) and the pointers
// after them. Up to 8 dimensions in all; `double` alone is a rank-0 View.
#pragma once

#include <weft/backends/host_device.hpp>

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace weft {

inline constexpr std::size_t max_view_rank = 8;

namespace detail {

template <class T, std::size_t N>
struct AddPointers {
  using type = typename AddPointers<T*, N - 1>::type;
};

template <class T>
struct AddPointers<T, 0> {
  using type = T;
};

// AddArrays<T, 3, 8>::type is T[3][8].
template <class T, std::size_t... StaticExtents>
struct AddArrays {
  using type = T;
};

template <class T, std::size_t N, std::size_t... StaticExtents>
struct AddArrays<T, N, StaticExtents...> {
  using type = typename AddArrays<T, StaticExtents...>::type[N];
};

}  // namespace detail

// A View's extents: RankDynamic runtime values followed by the compile-time
// StaticExtents. Only the runtime values take space.
template <std::size_t RankDynamic, std::size_t... StaticExtents>
class ViewExtents {
 public:
  static constexpr std::size_t rank = RankDynamic + sizeof...(StaticExtents);
  static constexpr std::size_t rank_dynamic = RankDynamic;
  static_assert(rank <= max_view_rank, "a View has at most 8 dimensions");

  // The data type with these extents and element type T: for
  // ViewExtents<2, 3>, data_type_for<float> is float**[3].
  template <class T>
  using data_type_for =
      typename detail::AddArrays<typename detail::AddPointers<T, RankDynamic>::type, StaticExtents...>::type;

  constexpr ViewExtents() = default;
  constexpr explicit ViewExtents(const std::array<std::size_t, RankDynamic>& runtime_extents) {
    if constexpr (RankDynamic != 0) runtime_ = runtime_extents;
  }

  // 0 for a runtime extent; the value for a compile-time one.
  static constexpr std::size_t static_extent(std::size_t i) noexcept {
    return i < RankDynamic || i >= rank ? 0 : static_value(i - RankDynamic);
  }

  template <std::size_t I>
  WEFT_HOST_DEVICE constexpr std::size_t extent() const noexcept {
    static_assert(I < rank);
    if constexpr (I < RankDynamic) {
      return runtime_[I];
    } else {
      return static_value(I - RankDynamic);
    }
  }

  WEFT_HOST_DEVICE constexpr std::size_t extent(std::size_t i) const noexcept {
    return i < RankDynamic ? runtime_[i] : static_value(i - RankDynamic);
  }

  constexpr std::array<std::size_t, rank> to_array() const noexcept {
    std::array<std::size_t, rank> all{};
    for (std::size_t i = 0; i < rank; ++i) all[i] = extent(i);
    return all;
  }

  constexpr std::size_t product() const noexcept {
    std::size_t n = 1;
    for (std::size_t i = 0; i < rank; ++i) n *= extent(i);
    return n;
  }

 private:
  // Compile-time extent k, computed rather than read from a static array:
  // device code cannot read a static data member.
  WEFT_HOST_DEVICE static constexpr std::size_t static_value(std::size_t k) noexcept {
    std::size_t value = 0;
    [[maybe_unused]] std::size_t at = 0;
    ((value = at++ == k ? StaticExtents : value), ...);
    return value;
  }

  // Takes no room when every extent is fixed (std::array<T, 0> is not an empty class).
  struct NoRuntimeExtents {
    constexpr std::size_t operator[](std::size_t) const noexcept { return 0; }
  };
  using RuntimeExtents =
      std::conditional_t<RankDynamic == 0, NoRuntimeExtents, std::array<std::size_t, RankDynamic>>;

  [[no_unique_address]] RuntimeExtents runtime_{};
};

namespace detail {

template <class T, std::size_t RankDynamic, std::size_t... StaticExtents>
struct StripPointers {
  using value_type = T;
  using extents_type = ViewExtents<RankDynamic, StaticExtents...>;
};

template <class T, std::size_t RankDynamic, std::size_t... StaticExtents>
struct StripPointers<T*, RankDynamic, StaticExtents...>
    : StripPointers<T, RankDynamic + 1, StaticExtents...> {};

template <class T, std::size_t... StaticExtents>
struct StripArrays : StripPointers<T, 0, StaticExtents...> {};

template <class T, std::size_t N, std::size_t... StaticExtents>
struct StripArrays<T[N], StaticExtents...> : StripArrays<T, StaticExtents..., N> {};

}  // namespace detail

// What a View's data type says: value type, rank and extents type.
template <class DataType>
struct ViewDataTraits {
 private:
  using split = detail::StripArrays<DataType>;

 public:
  using data_type = DataType;
  using value_type = typename split::value_type;
  using extents_type = typename split::extents_type;
  static constexpr std::size_t rank = extents_type::rank;
  static constexpr std::size_t rank_dynamic = extents_type::rank_dynamic;

  static_assert(!std::is_array_v<value_type> && !std::is_pointer_v<value_type>,
                "View data type: runtime extents ('*') must all come before compile-time extents ([N]), "
                "and arrays of unknown bound ([]) are not supported");
  static_assert(!std::is_reference_v<value_type> && !std::is_void_v<value_type>,
                "View data type: the element type must be an object type");
};

// `T` followed by `N` runtime extents: runtime_data_type_t<double, 2> is double**.
template <class T, std::size_t N>
using runtime_data_type_t = typename detail::AddPointers<T, N>::type;

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ViewMapping<Extents, Layout>: the multi-index -> offset map behind
// View::operator() (the "multi-index mapping" of the Kokkos array paper).
//
//   using Shape = weft::ViewExtents<1, 3>;                                     // [n][3]
//   weft::ViewMapping<Shape, weft::LayoutRight> map(Shape({n}));
//   map.offset(i, j);   // i * 3 + j: the 3 is a compile-time constant
//   map.stride(0);      // 3
//
// LayoutRight evaluates ((i0 * e1 + i1) * e2 + i2)... and LayoutLeft the same
// from the other end, so the map is a chain of multiply-adds in which
// compile-time extents are constants. LayoutStride is a dot product of the
// indices with stored strides. A mapping holds only the runtime extents (and,
// for LayoutStride, the strides): nothing per View beyond what the shape needs.
#pragma once

#include <weft/backends/host_device.hpp>
#include <weft/views/layout.hpp>
#include <weft/views/view_extents.hpp>

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace weft {

template <class Extents, class Layout>
class ViewMapping;

namespace detail {

// The extents type's runtime part taken from a full list of extents.
template <class Extents>
constexpr Extents extents_from_array(const std::array<std::size_t, Extents::rank>& all) noexcept {
  std::array<std::size_t, Extents::rank_dynamic> runtime{};
  for (std::size_t i = 0; i < Extents::rank_dynamic; ++i) runtime[i] = all[i];
  return Extents(runtime);
}

// The elements between the first and the last one a strided shape reaches.
template <std::size_t Rank>
constexpr std::size_t strided_span(const std::array<std::size_t, Rank>& extents,
                                   const std::array<std::size_t, Rank>& strides) noexcept {
  std::size_t last = 0;
  for (std::size_t i = 0; i < Rank; ++i) {
    if (extents[i] == 0) return 0;
    last += (extents[i] - 1) * strides[i];
  }
  return last + 1;
}

}  // namespace detail

template <class Extents>
class ViewMapping<Extents, LayoutRight> {
 public:
  using extents_type = Extents;
  using layout_type = LayoutRight;
  static constexpr std::size_t rank = Extents::rank;

  constexpr ViewMapping() = default;
  constexpr explicit ViewMapping(const Extents& extents) : extents_(extents) {}

  template <class... Indices>
  WEFT_HOST_DEVICE constexpr std::size_t offset(Indices... indices) const noexcept {
    return offset_of(std::make_index_sequence<rank>{}, indices...);
  }

  constexpr std::size_t stride(std::size_t dim) const noexcept {
    std::size_t s = 1;
    for (std::size_t i = dim + 1; i < rank; ++i) s *= extents_.extent(i);
    return s;
  }

  constexpr std::size_t span() const noexcept { return extents_.product(); }
  constexpr const Extents& extents() const noexcept { return extents_; }

 private:
  template <std::size_t... K, class... Indices>
  WEFT_HOST_DEVICE constexpr std::size_t offset_of(std::index_sequence<K...>,
                                                   Indices... indices) const noexcept {
    if constexpr (rank == 0) {
      return 0;
    } else {
      const std::size_t index[] = {static_cast<std::size_t>(indices)...};
      std::size_t off = 0;
      ((off = off * extents_.template extent<K>() + index[K]), ...);
      return off;
    }
  }

  [[no_unique_address]] Extents extents_{};
};

template <class Extents>
class ViewMapping<Extents, LayoutLeft> {
 public:
  using extents_type = Extents;
  using layout_type = LayoutLeft;
  static constexpr std::size_t rank = Extents::rank;

  constexpr ViewMapping() = default;
  constexpr explicit ViewMapping(const Extents& extents) : extents_(extents) {}

  template <class... Indices>
  WEFT_HOST_DEVICE constexpr std::size_t offset(Indices... indices) const noexcept {
    return offset_of(std::make_index_sequence<rank>{}, indices...);
  }

  constexpr std::size_t stride(std::size_t dim) const noexcept {
    std::size_t s = 1;
    for (std::size_t i = 0; i < dim && i < rank; ++i) s *= extents_.extent(i);
    return s;
  }

  constexpr std::size_t span() const noexcept { return extents_.product(); }
  constexpr const Extents& extents() const noexcept { return extents_; }

 private:
  // The same Horner chain as LayoutRight, walking the dimensions last to first.
  template <std::size_t... K, class... Indices>
  WEFT_HOST_DEVICE constexpr std::size_t offset_of(std::index_sequence<K...>,
                                                   Indices... indices) const noexcept {
    if constexpr (rank == 0) {
      return 0;
    } else {
      const std::size_t index[] = {static_cast<std::size_t>(indices)...};
      std::size_t off = 0;
      ((off = off * extents_.template extent<rank - 1 - K>() + index[rank - 1 - K]), ...);
      return off;
    }
  }

  [[no_unique_address]] Extents extents_{};
};

template <class Extents>
class ViewMapping<Extents, LayoutStride> {
 public:
  using extents_type = Extents;
  using layout_type = LayoutStride;
  static constexpr std::size_t rank = Extents::rank;

  constexpr ViewMapping() = default;
  constexpr ViewMapping(const Extents& extents, const std::array<std::size_t, rank>& strides)
      : extents_(extents), strides_(strides) {}

  template <class... Indices>
  WEFT_HOST_DEVICE constexpr std::size_t offset(Indices... indices) const noexcept {
    return offset_of(std::make_index_sequence<rank>{}, indices...);
  }

  constexpr std::size_t stride(std::size_t dim) const noexcept { return dim < rank ? strides_[dim] : 0; }
  constexpr std::size_t span() const noexcept { return detail::strided_span(extents_.to_array(), strides_); }
  constexpr const Extents& extents() const noexcept { return extents_; }

 private:
  template <std::size_t... K, class... Indices>
  WEFT_HOST_DEVICE constexpr std::size_t offset_of(std::index_sequence<K...>,
                                                   Indices... indices) const noexcept {
    return (std::size_t{0} + ... + (static_cast<std::size_t>(indices) * strides_[K]));
  }

  [[no_unique_address]] Extents extents_{};
  std::array<std::size_t, rank> strides_{};
};

namespace detail {

// Builds any layout's mapping from full extents and strides (the strides are
// used only by LayoutStride; for the others they follow from the extents).
template <class Mapping>
constexpr Mapping make_mapping(const std::array<std::size_t, Mapping::rank>& extents,
                               const std::array<std::size_t, Mapping::rank>& strides) noexcept {
  using Extents = typename Mapping::extents_type;
  if constexpr (std::is_same_v<typename Mapping::layout_type, LayoutStride>) {
    return Mapping(extents_from_array<Extents>(extents), strides);
  } else {
    return Mapping(extents_from_array<Extents>(extents));
  }
}

template <class Mapping>
constexpr std::array<std::size_t, Mapping::rank> strides_of(const Mapping& map) noexcept {
  std::array<std::size_t, Mapping::rank> strides{};
  for (std::size_t i = 0; i < Mapping::rank; ++i) strides[i] = map.stride(i);
  return strides;
}

}  // namespace detail

}  // namespace weft

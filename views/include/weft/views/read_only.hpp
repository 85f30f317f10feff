// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// weft::read_only<Owned>(element): a copy of an element that the running
// kernel only reads, loaded on a GPU through the read-only data path (the
// texture / non-coherent cache, `ld.global.nc`, what __ldg emits).
//
//   template <class Layout> using Cell = State<float, Layout>;
//   struct Step {                 // `in` is an input no thread writes
//     WEFT_HOST_DEVICE void operator()(auto in, auto out) const {
//       const auto centre = weft::read_only<Cell<weft::ContiguousOwned>>(*in);
//       const auto east = weft::read_only<Cell<weft::ContiguousOwned>>(in[{1, 0}]);
//       ...
//     }
//   };
//
// Why: nvcc uses the read-only path only where it can prove that nothing
// writes the memory while the kernel runs, which it can for `const T*
// __restrict__` kernel arguments but not for pointers a handle computes from
// a container's base. A struct-of-arrays stencil reads one cache-line stream
// per component and row, so it loses the most without that path.
//
// The contract, as for __ldg: no thread of the kernel (nor anything running
// beside it) writes the element's memory while the kernel runs. In a graph,
// that holds for a tensor a node accesses with weft::concurrent; it does not
// for the tensor a node writes, even at other cells.
//
// `Owned` is the owned form of the element: the same polymorphic-layout
// type with the ContiguousOwned layout (or any layout relative), or, for
// plain element types, the element type itself. On the host, and for value
// types __ldg does not take (bool, user structs), it is an ordinary copy.
#pragma once

#include <weft/backends/host_device.hpp>
#include <weft/views/polymorphic_layout.hpp>
#include <weft/views/storage_components.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace weft {

namespace detail {

template <class V>
inline constexpr bool ldg_loadable_v =
    std::is_same_v<V, float> || std::is_same_v<V, double> || std::is_same_v<V, char> ||
    std::is_same_v<V, signed char> || std::is_same_v<V, unsigned char> || std::is_same_v<V, short> ||
    std::is_same_v<V, unsigned short> || std::is_same_v<V, int> || std::is_same_v<V, unsigned> ||
    std::is_same_v<V, long> || std::is_same_v<V, unsigned long> || std::is_same_v<V, long long> ||
    std::is_same_v<V, unsigned long long>;

// One value, through the read-only path where the device and type allow.
template <class V>
WEFT_HOST_DEVICE V load_read_only(const V* address) noexcept {
#if defined(__CUDA_ARCH__)
  if constexpr (ldg_loadable_v<V>) return __ldg(address);
#endif
  return *address;
}

// A storage-shaped source for copy_component_values: the same components as
// Storage, each value read through load_read_only.
template <class Storage>
struct read_only_storage {
  using components = typename Storage::components;
  const Storage& source;

  template <std::size_t I>
  WEFT_HOST_DEVICE auto get() const noexcept {
    return load_read_only(&source.template get<I>());
  }
  template <std::size_t I, std::size_t K>
  WEFT_HOST_DEVICE auto get() const noexcept {
    return load_read_only(&source.template get<I, K>());
  }
};

}  // namespace detail

template <class Owned, class Element>
requires polymorphic_layout_type<Owned> &&
    (std::is_same_v<std::remove_cv_t<Owned>, std::remove_cv_t<Element>> ||
     layout_relative_of<Element, Owned>)WEFT_HOST_DEVICE Owned read_only(const Element& element) noexcept {
  static_assert(!is_view_layout_v<typename storage_of_t<Owned>::layout>,
                "weft::read_only<Owned>: Owned must own its values (the ContiguousOwned layout); a handle "
                "would read the element's memory again on every access");
  Owned copy;
  detail::copy_component_values(copy.storage,
                                detail::read_only_storage<storage_of_t<Element>>{element.storage});
  return copy;
}

template <class Owned, class Element>
requires(!polymorphic_layout_type<Owned> &&
         std::is_same_v<std::remove_cv_t<Owned>, std::remove_cv_t<Element>> &&
         std::is_trivially_copyable_v<Owned>) WEFT_HOST_DEVICE Owned read_only(const Element& element)
noexcept { return detail::load_read_only(&element); }

}  // namespace weft

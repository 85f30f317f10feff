// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-time facts about the component list of a StorageDescriptor: the
// value type and extent of each component, and a value-by-value copy between
// two storages that hold the same components in different layouts. Internal
// to the polymorphic layout; the storages and element_storage build on it.
//
//   using C = weft::detail::storage_components<weft::Vector<double, 3>, bool>;
//   static_assert(C::extents[0] == 3 && std::is_same_v<C::value_type<1>, bool>);
//   static_assert(C::first_vector == 0);
#pragma once

#include <weft/backends/host_device.hpp>
#include <weft/views/vector.hpp>

#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace weft::detail {

template <class Component>
struct component_traits {
  using value_type = Component;
  static constexpr std::size_t extent = 1;
};

template <class T, std::size_t N>
struct component_traits<Vector<T, N>> {
  using value_type = T;
  static constexpr std::size_t extent = N;
};

template <class Component>
constexpr bool is_storable_value() {
  using Value = typename component_traits<Component>::value_type;
  return std::is_object_v<Value> && !std::is_array_v<Value> && !std::is_const_v<Value> &&
         !std::is_volatile_v<Value> && !is_vector_v<Value> && std::is_trivially_copyable_v<Value>;
}

template <class... Components>
struct storage_components {
  static_assert(sizeof...(Components) > 0, "a StorageDescriptor needs at least one component type");
  static_assert((is_storable_value<Components>() && ...),
                "StorageDescriptor components must be trivially copyable, non-const, non-array object types "
                "or Vector<T, N> of such types (containers copy them as bytes; nest a Vector in a Vector "
                "by flattening it)");

  static constexpr std::size_t count = sizeof...(Components);

  template <std::size_t I>
  using component = std::tuple_element_t<I, std::tuple<Components...>>;

  template <std::size_t I>
  using value_type = typename component_traits<component<I>>::value_type;

  template <std::size_t I>
  static constexpr bool is_vector = is_vector_v<component<I>>;

  static constexpr std::array<std::size_t, count> extents{component_traits<Components>::extent...};
  static constexpr std::array<std::size_t, count> value_sizes{
      sizeof(typename component_traits<Components>::value_type)...};
  static constexpr std::array<std::size_t, count> value_alignments{
      alignof(typename component_traits<Components>::value_type)...};

  // Index of the first Vector component (what an Accessor reads), or count.
  static constexpr std::size_t first_vector = [] {
    constexpr std::array<bool, count> vectors{is_vector_v<Components>...};
    std::size_t i = 0;
    while (i < count && !vectors[i]) ++i;
    return i;
  }();
};

template <class A, class B>
inline constexpr bool same_components_v = std::is_same_v<typename A::components, typename B::components>;

template <std::size_t I, class Destination, class Source>
WEFT_HOST_DEVICE constexpr void copy_component_value(Destination& destination, const Source& source) {
  using Components = typename Destination::components;
  if constexpr (Components::template is_vector<I>) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      ((destination.template get<I, K>() = source.template get<I, K>()), ...);
    }
    (std::make_index_sequence<Components::extents[I]>{});
  } else {
    destination.template get<I>() = source.template get<I>();
  }
}

// Copies every value of `source` into `destination`; the two may use
// different layouts but must describe the same components.
template <class Destination, class Source>
WEFT_HOST_DEVICE constexpr void copy_component_values(Destination& destination, const Source& source) {
  static_assert(same_components_v<Destination, Source>, "storages with different components");
  [&]<std::size_t... I>(std::index_sequence<I...>) { (copy_component_value<I>(destination, source), ...); }
  (std::make_index_sequence<Destination::components::count>{});
}

}  // namespace weft::detail

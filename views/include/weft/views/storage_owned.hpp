// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Storage of a polymorphic-layout type whose Layout is ContiguousOwned:
// the values themselves, as typed members in declaration order, so the type
// is an ordinary trivially copyable struct (no pointers, no indirection).
//
//   weft::StorageDescriptor<weft::ContiguousOwned, weft::Vector<double, 3>, bool>::Storage s{};
//   s.get<0, 1>() = 2.0;    // second double
//   s.get<0>(2) = 3.0;      // third double, run-time index
//   s.get<1>() = true;      // the bool
//
// Default construction leaves the values uninitialised, as for a plain
// struct; value-initialise (`Storage s{};`, `State<...> s{};`) to zero them.
// No member has a default initialiser so that the storage can sit in the
// union of a type with Accessors (Ripple Listing 3).
#pragma once

#include <weft/backends/host_device.hpp>
#include <weft/views/storage_components.hpp>
#include <weft/views/storage_layout.hpp>

#include <cassert>
#include <cstddef>

namespace weft {

namespace detail {

template <class Component>
struct owned_slot {
  using type = Component;
};

template <class T, std::size_t N>
struct owned_slot<Vector<T, N>> {
  using type = T[N];
};

// A flat list of typed members built by recursion; the last component ends
// the recursion so no empty member pads the struct.
template <class... Components>
struct owned_values;

template <class Last>
struct owned_values<Last> {
  typename owned_slot<Last>::type first;
};

template <class First, class... Rest>
struct owned_values<First, Rest...> {
  typename owned_slot<First>::type first;
  owned_values<Rest...> rest;
};

template <std::size_t I, class Values>
WEFT_HOST_DEVICE constexpr auto& owned_member(Values& values) noexcept {
  if constexpr (I == 0) {
    return values.first;
  } else {
    return owned_member<I - 1>(values.rest);
  }
}

}  // namespace detail

template <class... Components>
class OwnedStorage {
 public:
  using layout = ContiguousOwned;
  using components = detail::storage_components<Components...>;
  template <std::size_t I>
  using value_type = typename components::template value_type<I>;

  // Copies the values of a storage with the same components in another layout.
  template <class Other>
  requires(detail::same_components_v<OwnedStorage, Other> &&
           !std::is_same_v<Other, OwnedStorage>) WEFT_HOST_DEVICE constexpr OwnedStorage&
  operator=(const Other& other) {
    detail::copy_component_values(*this, other);
    return *this;
  }

  // Component I, which is not a Vector.
  template <std::size_t I>
  WEFT_HOST_DEVICE constexpr value_type<I>& get() noexcept {
    static_assert(!components::template is_vector<I>,
                  "component I is a Vector: use get<I, K>() or get<I>(k)");
    return detail::owned_member<I>(values_);
  }
  template <std::size_t I>
  WEFT_HOST_DEVICE constexpr const value_type<I>& get() const noexcept {
    static_assert(!components::template is_vector<I>,
                  "component I is a Vector: use get<I, K>() or get<I>(k)");
    return detail::owned_member<I>(values_);
  }

  // Element K of Vector component I.
  template <std::size_t I, std::size_t K>
  WEFT_HOST_DEVICE constexpr value_type<I>& get() noexcept {
    static_assert(components::template is_vector<I>, "component I is not a Vector: use get<I>()");
    static_assert(K < components::extents[I], "Vector element index K out of range");
    return detail::owned_member<I>(values_)[K];
  }
  template <std::size_t I, std::size_t K>
  WEFT_HOST_DEVICE constexpr const value_type<I>& get() const noexcept {
    static_assert(components::template is_vector<I>, "component I is not a Vector: use get<I>()");
    static_assert(K < components::extents[I], "Vector element index K out of range");
    return detail::owned_member<I>(values_)[K];
  }

  // Element k of Vector component I; k must be below the Vector's size.
  template <std::size_t I>
  WEFT_HOST_DEVICE constexpr value_type<I>& get(std::size_t k) noexcept {
    static_assert(components::template is_vector<I>, "component I is not a Vector: use get<I>()");
    assert(k < components::extents[I] && "Vector element index out of range");
    return detail::owned_member<I>(values_)[k];
  }
  template <std::size_t I>
  WEFT_HOST_DEVICE constexpr const value_type<I>& get(std::size_t k) const noexcept {
    static_assert(components::template is_vector<I>, "component I is not a Vector: use get<I>()");
    assert(k < components::extents[I] && "Vector element index out of range");
    return detail::owned_member<I>(values_)[k];
  }

  // Where component I's first value is, and how many values apart (in
  // value_type<I> units) the elements of a Vector component are: what a view
  // needs to refer to these values.
  template <std::size_t I>
  WEFT_HOST_DEVICE constexpr value_type<I>* data() noexcept {
    if constexpr (components::template is_vector<I>) {
      return detail::owned_member<I>(values_);
    } else {
      return &detail::owned_member<I>(values_);
    }
  }
  template <std::size_t I>
  WEFT_HOST_DEVICE constexpr const value_type<I>* data() const noexcept {
    if constexpr (components::template is_vector<I>) {
      return detail::owned_member<I>(values_);
    } else {
      return &detail::owned_member<I>(values_);
    }
  }
  WEFT_HOST_DEVICE static constexpr std::size_t element_stride() noexcept { return 1; }

 private:
  detail::owned_values<Components...> values_;
};

}  // namespace weft

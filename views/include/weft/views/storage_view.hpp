// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Storage of a polymorphic-layout type whose Layout is StridedView or
// ContiguousView: a handle on one element's values inside a container. It
// holds where each component's first value is and how far apart the values
// of a Vector component are, so the same handle type can refer to an element
// of a strided buffer (values one element-count apart), of a contiguous
// buffer or of an owned object (values adjacent).
//
//   double values[2 * 8];         // 8 densities, then 8 pressures
//   weft::ViewStorage<weft::StridedView, weft::Vector<double, 2>> s(8, &values[3]);
//   s.get<0, 1>() = 1.0;          // writes values[8 + 3], element 3's pressure
//   auto alias = s;               // copying rebinds: alias refers to element 3 too
//   alias = t;                    // assigning copies t's values into element 3
//
// Containers build these through element_storage; users rarely construct one.
#pragma once

#include <weft/backends/host_device.hpp>
#include <weft/views/storage_components.hpp>
#include <weft/views/storage_layout.hpp>

#include <cassert>
#include <cstddef>
#include <type_traits>

namespace weft {

template <class Layout, class... Components>
class ViewStorage {
  static_assert(is_view_layout_v<Layout>, "ViewStorage needs StridedView or ContiguousView");

 public:
  using layout = Layout;
  using components = detail::storage_components<Components...>;
  template <std::size_t I>
  using value_type = typename components::template value_type<I>;

  // Unbound; only assigning a bound handle to it or placing a bound one over
  // it makes it usable. Trivial, so the storage can sit in an Accessor union.
  ViewStorage() = default;

  // Binds to the element whose component I starts at first_values[I]; the
  // values of a Vector component are `stride` values apart.
  template <class... Pointers>
  requires(sizeof...(Pointers) == components::count &&
           (std::is_convertible_v<Pointers, void*> && ...)) WEFT_HOST_DEVICE
      ViewStorage(std::size_t stride, Pointers... first_values)
  noexcept : component_data_{static_cast<void*>(first_values)...}, element_stride_(stride) {}

  // Copying a handle rebinds: the copy refers to the same element.
  ViewStorage(const ViewStorage&) = default;

  // Assigning through a handle copies values into the element it refers to,
  // the way assigning through a reference does.
  WEFT_HOST_DEVICE ViewStorage& operator=(const ViewStorage& other) noexcept {
    detail::copy_component_values(*this, other);
    return *this;
  }
  template <class Other>
  requires(detail::same_components_v<ViewStorage, Other> &&
           !std::is_same_v<Other, ViewStorage>) WEFT_HOST_DEVICE ViewStorage&
  operator=(const Other& other) noexcept {
    detail::copy_component_values(*this, other);
    return *this;
  }

  // Component I, which is not a Vector. A const handle gives read-only access,
  // as a const owned object would.
  template <std::size_t I>
  WEFT_HOST_DEVICE value_type<I>& get() noexcept {
    static_assert(!components::template is_vector<I>,
                  "component I is a Vector: use get<I, K>() or get<I>(k)");
    return *data<I>();
  }
  template <std::size_t I>
  WEFT_HOST_DEVICE const value_type<I>& get() const noexcept {
    static_assert(!components::template is_vector<I>,
                  "component I is a Vector: use get<I, K>() or get<I>(k)");
    return *data<I>();
  }

  // Element K of Vector component I.
  template <std::size_t I, std::size_t K>
  WEFT_HOST_DEVICE value_type<I>& get() noexcept {
    static_assert(components::template is_vector<I>, "component I is not a Vector: use get<I>()");
    static_assert(K < components::extents[I], "Vector element index K out of range");
    return data<I>()[K * element_stride_];
  }
  template <std::size_t I, std::size_t K>
  WEFT_HOST_DEVICE const value_type<I>& get() const noexcept {
    static_assert(components::template is_vector<I>, "component I is not a Vector: use get<I>()");
    static_assert(K < components::extents[I], "Vector element index K out of range");
    return data<I>()[K * element_stride_];
  }

  // Element k of Vector component I; k must be below the Vector's size.
  template <std::size_t I>
  WEFT_HOST_DEVICE value_type<I>& get(std::size_t k) noexcept {
    static_assert(components::template is_vector<I>, "component I is not a Vector: use get<I>()");
    assert(k < components::extents[I] && "Vector element index out of range");
    return data<I>()[k * element_stride_];
  }
  template <std::size_t I>
  WEFT_HOST_DEVICE const value_type<I>& get(std::size_t k) const noexcept {
    static_assert(components::template is_vector<I>, "component I is not a Vector: use get<I>()");
    assert(k < components::extents[I] && "Vector element index out of range");
    return data<I>()[k * element_stride_];
  }

  template <std::size_t I>
  WEFT_HOST_DEVICE value_type<I>* data() noexcept {
    return static_cast<value_type<I>*>(component_data_[I]);
  }
  template <std::size_t I>
  WEFT_HOST_DEVICE const value_type<I>* data() const noexcept {
    return static_cast<const value_type<I>*>(component_data_[I]);
  }
  WEFT_HOST_DEVICE std::size_t element_stride() const noexcept { return element_stride_; }

 private:
  void* component_data_[components::count];
  std::size_t element_stride_;
};

}  // namespace weft

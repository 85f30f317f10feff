// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// PolymorphicLayout<T> marks a user type whose data layout is chosen by a
// template parameter, so one struct serves both as a standalone object and as
// the element type of a container laid out as struct of arrays or array of
// structs (Ripple section 4.2, Listing 2, Figure 1).
//
//   template <typename T, size_t D, typename Layout>
//   struct State : weft::PolymorphicLayout<State<T, D, Layout>> {
//     using Desc = weft::StorageDescriptor<Layout, weft::Vector<T, D>, bool>;
//     using Storage = typename Desc::Storage;
//     auto operator[](size_t i) -> T& { return storage.template get<0>(i); }
//     auto density() -> T& { return storage.template get<0, 0>(); }
//     auto is_valid() const -> bool { return storage.template get<1>(); }
//     Storage storage;
//   };
//
//   State<double, 3, weft::ContiguousOwned> s{};          // a plain struct
//   weft::ElementArray<State<double, 3, weft::StridedView>> states(1000);
//   states[7].density() = 1.0;                            // writes into the array
//   states[8] = s;                                        // copies s's values in
//   s = states[7];                                        // and out again
//
// What a polymorphic-layout type must look like:
// - it derives from PolymorphicLayout<itself> and keeps all its data in one
//   public member named `storage` of its descriptor's Storage type (it may
//   share a union with Accessors, see accessor.hpp);
// - it is default-constructible.
//
// Semantics, by layout:
// - ContiguousOwned: the object owns its values. It is a trivially copyable
//   aggregate the size of the equivalent plain struct; copies copy values.
// - StridedView, ContiguousView: the object is a handle on one element of a
//   container (or of another object), like a reference that can be passed by
//   value. Copy-constructing one rebinds: the copy refers to the same
//   element. Assigning to one copies values into the element it refers to.
//   A const handle gives read-only access, but a copy of it does not stay
//   const (as with std::span).
// - Across layouts (same component types, different Layout): assignment
//   copies values, in both directions (view = owned, owned = view, strided =
//   contiguous). Converting to a view type binds the view to the source's
//   values; binding one to a temporary leaves it dangling, as binding a
//   std::string_view to a temporary string does.
#pragma once

#include <weft/backends/host_device.hpp>
#include <weft/views/storage_descriptor.hpp>
#include <weft/views/storage_layout.hpp>

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace weft {

template <class T>
struct PolymorphicLayout;

// The Storage type a polymorphic-layout type keeps in its `storage` member.
template <class T>
using storage_of_t = std::remove_cvref_t<decltype(std::declval<T&>().storage)>;

template <class T>
concept polymorphic_layout_type =
    std::is_base_of_v<PolymorphicLayout<std::remove_cv_t<T>>, std::remove_cv_t<T>> && requires(T& value) {
  value.storage;
};

// A polymorphic-layout type whose objects are handles into a container.
template <class T>
concept polymorphic_view_type =
    polymorphic_layout_type<T> && is_view_layout_v<typename storage_of_t<T>::layout>;

// Two polymorphic-layout types that store the same components in different
// layouts (typically one user template instantiated with two Layouts).
template <class Source, class Target>
concept layout_relative_of = polymorphic_layout_type<Source> && polymorphic_layout_type<Target> &&
                             !std::is_same_v<std::remove_cv_t<Source>, std::remove_cv_t<Target>> &&
                             detail::same_components_v<storage_of_t<Source>, storage_of_t<Target>>;

namespace detail {

// A T (view layout) bound to the element `storage` refers to. The storage is
// constructed in place rather than assigned, since assigning a view storage
// copies values instead of rebinding.
template <class T>
WEFT_HOST_DEVICE T make_bound(const storage_of_t<T>& storage) noexcept {
  T element;
  ::new (static_cast<void*>(&element.storage)) storage_of_t<T>(storage);
  return element;
}

// A view storage of type ViewStorage that refers to the values held or
// referred to by `source` (a storage of any layout with the same components).
template <class View, class Source, std::size_t... I>
WEFT_HOST_DEVICE View view_of(const Source& source, std::index_sequence<I...>) noexcept {
  // The view may write through; const on the source object does not carry
  // over to a handle made from it (see the semantics above).
  return View(source.element_stride(),
              const_cast<typename View::template value_type<I>*>(source.template data<I>())...);
}

template <class Target, class Source>
WEFT_HOST_DEVICE Target convert_layout(const Source& source) {
  using TargetStorage = storage_of_t<Target>;
  if constexpr (is_view_layout_v<typename TargetStorage::layout>) {
    return make_bound<Target>(
        view_of<TargetStorage>(source.storage, std::make_index_sequence<TargetStorage::components::count>{}));
  } else {
    Target target;
    ::new (static_cast<void*>(&target.storage)) TargetStorage;
    target.storage = source.storage;
    return target;
  }
}

}  // namespace detail

// The trait base (CRTP). Deriving from it declares that Derived has a
// polymorphic layout and gives it conversions to its relatives in other
// layouts, which is what makes cross-layout assignment work without the user
// writing any operator.
template <class Derived>
struct PolymorphicLayout {
  template <class Target>
  WEFT_HOST_DEVICE operator Target() const requires layout_relative_of<Derived, Target> {
    return detail::convert_layout<Target>(static_cast<const Derived&>(*this));
  }
};

}  // namespace weft

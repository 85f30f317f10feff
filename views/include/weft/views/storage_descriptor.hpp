// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// StorageDescriptor<Layout, Types...> declares what a polymorphic-layout type
// stores, much as a std::tuple would, and picks the Storage that holds it in
// the given layout (Ripple section 4.2, Listing 2):
//
//   template <typename T, size_t D, typename Layout>
//   struct State : weft::PolymorphicLayout<State<T, D, Layout>> {
//     using Desc = weft::StorageDescriptor<Layout, weft::Vector<T, D>, bool>;
//     using Storage = typename Desc::Storage;
//     auto density() -> T& { return storage.template get<0, 0>(); }
//     Storage storage;
//   };
//
// Storage is OwnedStorage<Types...> for ContiguousOwned and
// ViewStorage<Layout, Types...> for StridedView and ContiguousView; both
// offer get<I>(), get<I, K>() and get<I>(k), with offsets fixed at compile
// time.
#pragma once

#include <weft/views/storage_layout.hpp>
#include <weft/views/storage_owned.hpp>
#include <weft/views/storage_view.hpp>
#include <weft/views/vector.hpp>

#include <type_traits>

namespace weft {

template <class Layout, class... Types>
struct StorageDescriptor {
  static_assert(is_storage_layout_v<Layout>,
                "StorageDescriptor's Layout must be StridedView, ContiguousView or ContiguousOwned");

  using Storage =
      std::conditional_t<is_view_layout_v<Layout>, ViewStorage<Layout, Types...>, OwnedStorage<Types...>>;
};

}  // namespace weft

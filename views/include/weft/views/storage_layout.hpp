// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The three places the values of a polymorphic-layout type can live (Ripple
// section 4.2, Figure 1). A user type takes one of these as a template
// parameter and passes it on to its StorageDescriptor:
//
//   State<double, 3, weft::ContiguousOwned> s;         // a plain struct, holds its values
//   weft::ElementArray<State<double, 3, weft::StridedView>> soa(1000);     // struct of arrays
//   weft::ElementArray<State<double, 3, weft::ContiguousView>> aos(1000);  // array of structs
//
// The two view layouts make the type a handle on one element of a container;
// see polymorphic_layout.hpp for what copying and assigning such handles does.
#pragma once

#include <type_traits>

namespace weft {

// Structure of arrays: a container keeps each component's values for all its
// elements in one contiguous array, and the component arrays one after
// another, so a loop over elements reads each component with unit stride.
struct StridedView {};

// Array of structures: a container keeps each element's components together,
// in one record per element.
struct ContiguousView {};

// The object holds its own values, like an ordinary struct.
struct ContiguousOwned {};

template <class Layout>
inline constexpr bool is_view_layout_v =
    std::is_same_v<Layout, StridedView> || std::is_same_v<Layout, ContiguousView>;

template <class Layout>
inline constexpr bool is_storage_layout_v =
    is_view_layout_v<Layout> || std::is_same_v<Layout, ContiguousOwned>;

}  // namespace weft

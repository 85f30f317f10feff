// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Vector<T, N> declares, inside a StorageDescriptor, N values of type T that
// belong together (a velocity, the conserved variables of a cell). Under the
// strided layout each of the N values gets its own component array; under
// the contiguous layouts they sit next to each other.
//
//   using Desc = weft::StorageDescriptor<Layout, weft::Vector<double, 3>, bool>;
//   storage.get<0, 2>();   // the third double, index known at compile time
//   storage.get<0>(k);     // the k-th double, index known at run time
//
// Vector is only a description: it holds no values itself.
#pragma once

#include <cstddef>

namespace weft {

template <class T, std::size_t N>
struct Vector {
  static_assert(N > 0, "Vector<T, N> needs at least one element (N > 0)");
  using value_type = T;
  static constexpr std::size_t size = N;
};

template <class Component>
inline constexpr bool is_vector_v = false;

template <class T, std::size_t N>
inline constexpr bool is_vector_v<Vector<T, N>> = true;

}  // namespace weft

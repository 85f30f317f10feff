// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host mirrors: a View in host memory with the shape and layout of another, so
// that data crosses between spaces as one block copy with no permutation
// (Kokkos tutorial, "Deep copy ... Mirror the layout in the Host memory space").
//
//   weft::View<double**, weft::LayoutLeft, weft::CudaSpace> d("d", n, m);
//   auto h = weft::create_mirror_view(d);   // a new host View "d_mirror", n x m, LayoutLeft
//   h(0, 0) = 1.0;
//   weft::deep_copy(d, h);                  // one copy_from_host
//
// create_mirror_view(v) returns v itself (same data, no allocation) when v's
// space is host accessible, so the deep_copy calls around it cost nothing;
// otherwise it is create_mirror(v). create_mirror(v) always allocates a new,
// zero-filled HostSpace View labelled "<label>_mirror" with v's extents,
// layout and strides (a strided v gets a strided mirror over the same span).
// Neither copies any data: that is deep_copy's job.
#pragma once

#include <weft/backends/memory_space.hpp>
#include <weft/views/layout.hpp>
#include <weft/views/view.hpp>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

namespace weft {

namespace detail {

// A new host View of type Mirror with the extents of `shape`.
template <class Mirror, std::size_t... K>
Mirror allocate_with_extents(const std::string& label, const LayoutStride& shape, std::index_sequence<K...>) {
  return Mirror(label, shape.extent[K]...);
}

}  // namespace detail

template <class DataType, class Layout, class Space>
auto create_mirror(const View<DataType, Layout, Space>& view) ->
    typename View<DataType, Layout, Space>::host_mirror_type {
  using Mirror = typename View<DataType, Layout, Space>::host_mirror_type;
  const std::string label = view.label() + "_mirror";
  if constexpr (std::is_same_v<Layout, LayoutStride>) {
    return Mirror(label, view.layout_stride());
  } else {
    return detail::allocate_with_extents<Mirror>(label, view.layout_stride(),
                                                 std::make_index_sequence<Mirror::rank>{});
  }
}

template <class DataType, class Layout, class Space>
auto create_mirror_view(const View<DataType, Layout, Space>& view) {
  if constexpr (Space::host_accessible) {
    return view;
  } else {
    return create_mirror(view);
  }
}

}  // namespace weft

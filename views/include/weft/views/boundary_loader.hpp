// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Boundary loaders fill the padding on a Tensor's outer edges, where no
// neighbouring block supplies it. A loader is any callable
//
//   loader(pad, edge, dim, side)
//
// where `pad` is an iterator on a padding cell, `edge` the iterator on the
// interior cell at the tensor's edge it extends, `dim` the dimension and
// `side` -1 (the low edge) or +1 (the high edge). Inside a split kernel:
//
//   g.then_split([](auto& it) { weft::load_boundary(it, weft::FirstOrderExtrapolation{}); }, u);
//
// load_boundary acts only on cells at the edge and fills, along each
// dimension, the `padding` cells beyond it. It checks every cell it is
// called on, so a split over the whole tensor pays for every cell; the graph
// operation Graph::boundary (load_block_boundary) visits only the edges. Corner padding outside the tensor
// in two dimensions at once is not loaded: stencils that read diagonal
// neighbours at the tensor's corners must load it themselves.
#pragma once

#include <cstddef>

#include <weft/backends/host_device.hpp>
#include <weft/views/block_kernel.hpp>
#include <weft/views/unrolled_for.hpp>

namespace weft {

// Zero-gradient (transmissive) extrapolation: padding copies the edge cell.
// Ripple's "first order" loader; waves leave the domain without reflecting.
struct FirstOrderExtrapolation {
  template <class It>
  WEFT_HOST_DEVICE void operator()(It& pad, const It& edge, std::size_t, int) const {
    *pad = *edge;
  }
};

// Padding holds a fixed value (a Dirichlet boundary).
template <class V>
struct ConstantLoader {
  V value;
  template <class It>
  WEFT_HOST_DEVICE void operator()(It& pad, const It&, std::size_t, int) const {
    *pad = value;
  }
};
template <class V>
ConstantLoader(V) -> ConstantLoader<V>;

template <class It, class Loader>
WEFT_HOST_DEVICE void load_boundary(const It& it, const Loader& loader) {
  const auto padding = static_cast<std::ptrdiff_t>(it.padding());
  unrolled_for<It::dims>([&](auto dim) {
    if (it.is_global_first(dim)) {
      for (std::ptrdiff_t k = 1; k <= padding; ++k) {
        It pad = it.offset(dim, -k);
        loader(pad, it, dim, -1);
      }
    }
    if (it.is_global_last(dim)) {
      for (std::ptrdiff_t k = 1; k <= padding; ++k) {
        It pad = it.offset(dim, k);
        loader(pad, it, dim, +1);
      }
    }
  });
}

// Loads the padding beyond the tensor's edges around one block: the same
// values load_boundary gives when called on every cell, but visiting only
// the block's faces that lie on the tensor's edge (what a graph's boundary
// operation runs per block). Blocks inside the tensor do nothing.
template <class T, std::size_t D, class Loader>
void load_block_boundary(const Tensor<T, D>& tensor, std::size_t block, const Loader& loader) {
  using It = IndexedIterator<T, D>;
  const BlockSpace<D>& space = tensor.block_space(block);
  const BlockPlace<D> place = tensor.block_place(block);
  const auto padding = static_cast<std::ptrdiff_t>(space.padding);
  if (padding == 0) return;
  for (std::size_t dim = 0; dim < D; ++dim) {
    for (const int side : {-1, +1}) {
      const bool on_edge =
          side < 0 ? place.origin[dim] == 0 : place.origin[dim] + space.extent[dim] == place.sizes[dim];
      if (!on_edge) continue;
      // Every cell of the face: `dim` fixed at the edge, the others over the interior.
      Extents<D> cell{};
      cell[dim] = side < 0 ? 0 : space.extent[dim] - 1;
      while (true) {
        const It edge(space, place, space.linear(cell));
        for (std::ptrdiff_t k = 1; k <= padding; ++k) {
          It pad = edge.offset(dim, side * k);
          loader(pad, edge, dim, side);
        }
        std::size_t d = 0;
        for (; d < D; ++d) {
          if (d == dim) continue;
          if (++cell[d] < space.extent[d]) break;
          cell[d] = 0;
        }
        if (d == D) break;
      }
    }
  }
}

// Host side: loads the boundary of every block at once.
template <class T, std::size_t D, class Loader>
void load_boundaries(const Tensor<T, D>& tensor, const Loader& loader) {
  for (std::size_t b = 0; b < tensor.block_count(); ++b) load_block_boundary(tensor, b, loader);
}

}  // namespace weft

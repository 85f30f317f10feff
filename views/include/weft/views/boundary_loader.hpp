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
// dimension, the `padding` cells beyond it. Corner padding outside the tensor
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

// Host side: loads the boundary of every block at once.
template <class T, std::size_t D, class Loader>
void load_boundaries(const Tensor<T, D>& tensor, const Loader& loader) {
  const auto load = [&loader](auto& it) { load_boundary(it, loader); };
  for (std::size_t b = 0; b < tensor.block_count(); ++b) run_block_kernel(b, load, tensor);
}

}  // namespace weft

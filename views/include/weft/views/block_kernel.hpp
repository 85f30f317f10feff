// Running a kernel over one block of one or more Tensors: what a split node
// does for its partition on a CPU worker.
//
//   weft::run_block_kernel(block, [](auto& x, auto& y, double a) { *y = a * *x + *y; }, x, y, 2.0);
//
// Every Tensor argument becomes an IndexedIterator on the same interior cell
// of its block; other arguments are passed through as lvalues. Cells are
// visited with dimension 0 innermost, as a plain counted loop, so a simple
// kernel vectorises. The tensors must split the same way (equal block
// extents); graph operations check that when the graph is built.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <weft/views/tensor.hpp>

namespace weft {

template <class T>
struct is_tensor : std::false_type {};
template <class T, std::size_t D>
struct is_tensor<Tensor<T, D>> : std::true_type {};
template <class T>
inline constexpr bool is_tensor_v = is_tensor<std::remove_cvref_t<T>>::value;

namespace detail {

// A Tensor argument bound to one block: makes the iterator for a cell.
template <class T, std::size_t D>
struct BoundBlock {
  BlockSpace<D> space;
  BlockPlace<D> place;
  std::size_t row = 0;  // linear index of the current row's first interior cell
  IndexedIterator<T, D> at(std::size_t x) const noexcept {
    return IndexedIterator<T, D>(space, place, row + x);
  }
};

template <class Arg>
decltype(auto) bind_block(Arg& arg, std::size_t block) {
  if constexpr (is_tensor_v<Arg>) {
    using Tn = std::remove_cvref_t<Arg>;
    return BoundBlock<typename Tn::value_type, Tn::dims>{arg.block_space(block), arg.block_place(block), 0};
  } else {
    return std::ref(arg);
  }
}

template <class Bound>
void start_row(Bound& bound, const auto& local) {
  if constexpr (requires { bound.space; }) bound.row = bound.space.linear(local);
}

template <class Bound>
decltype(auto) cell_argument(Bound& bound, std::size_t x) {
  if constexpr (requires { bound.space; }) {
    return bound.at(x);
  } else {
    return bound.get();
  }
}

// Kernels take their iterators as `auto&`: temporaries passed on as lvalues
// (they live until the kernel call returns).
template <class T>
T& as_lvalue(T&& value) noexcept {
  return value;
}

template <class Arg, class... Rest>
constexpr std::size_t first_tensor_dims() {
  if constexpr (is_tensor_v<Arg>) {
    return std::remove_cvref_t<Arg>::dims;
  } else {
    static_assert(sizeof...(Rest) > 0, "run_block_kernel needs at least one Tensor argument");
    return first_tensor_dims<Rest...>();
  }
}

template <class Arg, class... Rest>
const auto& first_tensor(const Arg& arg, const Rest&... rest) {
  if constexpr (is_tensor_v<Arg>) {
    return arg;
  } else {
    return first_tensor(rest...);
  }
}

}  // namespace detail

template <class F, class... Args>
void run_block_kernel(std::size_t block, F& kernel, Args&... args) {
  constexpr std::size_t D = detail::first_tensor_dims<Args...>();
  const Extents<D> extent = detail::first_tensor(args...).block_space(block).extent;
  // (not make_tuple: it would unwrap the reference_wrappers)
  std::tuple<decltype(detail::bind_block(args, block))...> bound{detail::bind_block(args, block)...};
  Extents<D> row{};  // the current row's first cell (row[0] stays 0)
  while (true) {
    std::apply([&](auto&... b) { (detail::start_row(b, row), ...); }, bound);
    std::apply(
        [&](auto&... b) {
          for (std::size_t x = 0; x < extent[0]; ++x)
            kernel(detail::as_lvalue(detail::cell_argument(b, x))...);
        },
        bound);
    std::size_t d = 1;
    for (; d < D; ++d) {
      if (++row[d] < extent[d]) break;
      row[d] = 0;
    }
    if (d >= D) break;
  }
}

}  // namespace weft

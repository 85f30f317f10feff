// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Running a kernel over one block of one or more Tensors: what a split node
// does for its partition on a CPU worker.
//
//   weft::run_block_kernel(block, [](auto& x, auto& y, double a) { *y = a * *x + *y; }, x, y, 2.0);
//
// Every Tensor argument becomes an IndexedIterator on the same interior cell
// of its block; other arguments are passed through as lvalues. Cells are
// visited with dimension 0 innermost, as a plain counted loop, so a simple
// kernel vectorises. The tensors must split the same way (equal block
// extents); graph operations check that when the graph is built. Small
// trivially copyable arguments reach the kernel as a copy made for each run
// of rows (a kernel's changes to them are not kept); others by reference.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <weft/views/parallel_for.hpp>
#include <weft/views/range_policy.hpp>
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

// A small plain argument (a scalar, a pointer, a small struct) bound by
// value: a local copy the compiler knows no store in the kernel can change,
// so it stays in a register and adds no alias checks to the cell loop.
template <class Arg>
struct BoundCopy {
  Arg value;
  Arg& get() noexcept { return value; }
};

template <class Arg>
inline constexpr bool bound_by_copy_v = std::is_trivially_copyable_v<Arg> && sizeof(Arg) <= 64 &&
                                        !std::is_const_v<Arg>;

template <class Arg>
decltype(auto) bind_block(Arg& arg, std::size_t block) {
  if constexpr (is_tensor_v<Arg>) {
    using Tn = std::remove_cvref_t<Arg>;
    return BoundBlock<typename Tn::value_type, Tn::dims>{arg.block_space(block), arg.block_place(block), 0};
  } else if constexpr (bound_by_copy_v<Arg>) {
    return BoundCopy<Arg>{arg};
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

// Runs the kernel over rows [first_row, last_row) of a block: a row is the
// cells sharing their coordinates in dimensions 1 .. D-1, and rows are
// numbered with dimension 1 fastest.
template <class F, class... Args>
void run_block_rows(std::size_t block, std::size_t first_row, std::size_t last_row, F& kernel,
                    Args&... args) {
  constexpr std::size_t D = detail::first_tensor_dims<Args...>();
  const Extents<D> extent = detail::first_tensor(args...).block_space(block).extent;
  // (not make_tuple: it would unwrap the reference_wrappers)
  std::tuple<decltype(detail::bind_block(args, block))...> bound{detail::bind_block(args, block)...};
  Extents<D> row{};  // the current row's first cell (row[0] stays 0)
  for (std::size_t d = 1, rest = first_row; d < D; ++d) {
    row[d] = rest % extent[d];
    rest /= extent[d];
  }
  for (std::size_t r = first_row; r < last_row; ++r) {
    std::apply([&](auto&... b) { (detail::start_row(b, row), ...); }, bound);
    std::apply(
        [&](auto&... b) {
          for (std::size_t x = 0; x < extent[0]; ++x)
            kernel(detail::as_lvalue(detail::cell_argument(b, x))...);
        },
        bound);
    for (std::size_t d = 1; d < D; ++d) {
      if (++row[d] < extent[d]) break;
      row[d] = 0;
    }
  }
}

template <class... Args>
std::size_t block_rows(std::size_t block, const Args&... args) {
  const auto& extent = detail::first_tensor(args...).block_space(block).extent;
  std::size_t rows = 1;
  for (std::size_t d = 1; d < extent.size(); ++d) rows *= extent[d];
  return rows;
}

// Whether the kernel says it leaves `block` as it is: a kernel may have a
// member skip_block(block, args...) (the kernel's own arguments, tensors
// whole) that returns true for a block none of whose cells it would change,
// such as a block a sweep already converged. run_block_kernel and
// run_block_kernel_shared then visit none of its cells. It is a hint: GPU
// nodes launch their kernel regardless, so a kernel gives the same result
// when it is run on a block it said to skip.
template <class F, class... Args>
concept block_skipping_kernel = requires(const F& kernel, std::size_t block, const Args&... args) {
  { kernel.skip_block(block, args...) } -> std::convertible_to<bool>;
};
template <class F, class... Args>
bool kernel_skips_block(const F& kernel, std::size_t block, const Args&... args) {
  if constexpr (block_skipping_kernel<F, Args...>) {
    return kernel.skip_block(block, args...);
  } else {
    return false;
  }
}

// Whether the kernel says block `to`'s padding needs nothing from block
// `from` this time: a kernel may have a member
// skip_padding_copy(from, to, args...) that returns true when `to`'s padding
// already holds what `from` would copy into it (`from` has not changed since
// the last copy), or when the kernel reads none of those padding cells (a
// corner it never looks at). A graph's padding copy from `from` into `to`
// (host memory, same rank) then copies nothing, for every padded tensor of
// the operation.
template <class F, class... Args>
concept padding_copy_skipping_kernel = requires(const F& kernel, std::size_t from, std::size_t to,
                                                const Args&... args) {
  { kernel.skip_padding_copy(from, to, args...) } -> std::convertible_to<bool>;
};

// The whole block on the calling thread.
template <class F, class... Args>
void run_block_kernel(std::size_t block, F& kernel, Args&... args) {
  if (kernel_skips_block(kernel, block, args...)) return;
  run_block_rows(block, 0, block_rows(block, args...), kernel, args...);
}

// The whole block, its rows shared with the other CPU workers when the
// calling thread is a worker and the block is large (what a split node does:
// a tensor in one partition still uses every core). Rows go in chunks of
// about kBlockChunkCells cells; each cell is computed as in the serial form,
// so for kernels that write only their own cell (and read cells nobody
// writes) the result does not depend on how the rows were shared. The
// kernel may then run on several threads at once, for different cells.
// In-place kernels that read neighbours they also write must use
// run_block_kernel (graphs do for exclusive_padded_access).
inline constexpr std::size_t kParallelBlockCells = 16384;
inline constexpr std::size_t kBlockChunkCells = 4096;

template <class F, class... Args>
void run_block_kernel_shared(std::size_t block, F& kernel, Args&... args) {
  if (kernel_skips_block(kernel, block, args...)) return;
  const std::size_t rows = block_rows(block, args...);
  const std::size_t row_cells = detail::first_tensor(args...).block_space(block).extent[0];
  WorkerContext* worker = Executor::current_worker();
  if (worker == nullptr || rows < 2 || rows * row_cells < kParallelBlockCells ||
      worker->executor().cpu_worker_count() < 2) {
    run_block_rows(block, 0, rows, kernel, args...);
    return;
  }
  // One index per chunk of rows, so each chunk binds its tensors once.
  const std::size_t rows_per_chunk = std::max<std::size_t>(1, kBlockChunkCells / row_cells);
  const std::size_t chunks = (rows + rows_per_chunk - 1) / rows_per_chunk;
  parallel_for(RangePolicy(worker->executor(), std::size_t{0}, chunks).chunk_size(1), [&](std::size_t c) {
    run_block_rows(block, c * rows_per_chunk, std::min(rows, (c + 1) * rows_per_chunk), kernel, args...);
  });
}

}  // namespace weft

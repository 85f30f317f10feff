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

// How a block's rows are cut into chunks when they are shared: chunks of
// about kBlockChunkCells cells, except the last rows, cut in chunks that
// halve down to one row, so that workers finishing a block together wait
// for each other about a row at most (as guided scheduling ends). The plan
// depends only on the rows and their length, never on the workers or on
// timing: a reduction that folds chunk by chunk and joins the chunks in
// order gives the same result on any executor.
inline constexpr std::size_t kParallelBlockCells = 16384;
inline constexpr std::size_t kBlockChunkCells = 4096;

class BlockRowChunks {
 public:
  BlockRowChunks(std::size_t rows, std::size_t row_cells) noexcept
      : rows_(rows),
        row_cells_(row_cells),
        per_chunk_(std::max<std::size_t>(1, kBlockChunkCells / std::max<std::size_t>(1, row_cells))) {
    // Whole chunks until fewer than 2 chunks' rows are left (at least one
    // chunk's, when there were that many), then halving: ceil(left / 2)
    // each, at most 2 + log2(2 * per_chunk) chunks.
    body_chunks_ = rows >= 2 * per_chunk_ ? (rows - 2 * per_chunk_) / per_chunk_ + 1 : 0;
    for (std::size_t first = body_chunks_ * per_chunk_, left = rows - first; left > 0; ++tail_chunks_) {
      tail_first_[tail_chunks_] = first;
      const std::size_t take = (left + 1) / 2;
      first += take;
      left -= take;
    }
  }

  std::size_t count() const noexcept { return body_chunks_ + tail_chunks_; }
  std::size_t rows() const noexcept { return rows_; }
  // Chunk c holds rows [first_row(c), last_row(c)).
  std::size_t first_row(std::size_t c) const noexcept {
    return c < body_chunks_ ? c * per_chunk_ : tail_first_[c - body_chunks_];
  }
  std::size_t last_row(std::size_t c) const noexcept { return c + 1 < count() ? first_row(c + 1) : rows_; }
  // Whether a block of this shape is large enough for its rows to be
  // shared. The shape alone decides it, so a reduction may fold a smaller
  // block in one loop and still give the same result on any executor.
  bool worth_sharing() const noexcept { return count() >= 2 && rows_ * row_cells_ >= kParallelBlockCells; }

 private:
  std::size_t rows_, row_cells_, per_chunk_, body_chunks_ = 0, tail_chunks_ = 0;
  std::size_t tail_first_[2 + 8 * sizeof(std::size_t)] = {};
};

template <class... Args>
BlockRowChunks block_row_chunks(std::size_t block, const Args&... args) {
  return BlockRowChunks(block_rows(block, args...),
                        detail::first_tensor(args...).block_space(block).extent[0]);
}

// Whether the calling thread shares the rows of a block with this plan: the
// block is worth sharing and the thread is a CPU worker among others.
inline bool shares_rows(const BlockRowChunks& plan) noexcept {
  const WorkerContext* worker = Executor::current_worker();
  return plan.worth_sharing() && worker != nullptr && worker->executor().cpu_worker_count() >= 2;
}

// Calls chunk(c) for every chunk c of `plan`, on the calling thread and,
// when shares_rows(plan), on helper jobs of the other workers too
// (parallel_for): chunks may then run concurrently, in any order. Returns
// when all have run.
template <class Chunk>
void for_each_row_chunk(const BlockRowChunks& plan, const Chunk& chunk) {
  if (!shares_rows(plan)) {
    for (std::size_t c = 0; c < plan.count(); ++c) chunk(c);
    return;
  }
  Executor& executor = Executor::current_worker()->executor();
  parallel_for(RangePolicy(executor, std::size_t{0}, plan.count()).chunk_size(1), chunk);
}

// The whole block, its rows shared with the other CPU workers when the
// calling thread is a worker and the block is large (what a split node does:
// a tensor in one partition still uses every core), in the chunks of
// BlockRowChunks. Each cell is computed as in the serial form, so for
// kernels that write only their own cell (and read cells nobody writes) the
// result does not depend on how the rows were shared. The kernel may then
// run on several threads at once, for different cells. In-place kernels
// that read neighbours they also write must use run_block_kernel (graphs do
// for exclusive_padded_access).
template <class F, class... Args>
void run_block_kernel_shared(std::size_t block, F& kernel, Args&... args) {
  if (kernel_skips_block(kernel, block, args...)) return;
  const BlockRowChunks plan = block_row_chunks(block, args...);
  if (!shares_rows(plan)) {  // one loop: the cells come out the same
    run_block_rows(block, 0, plan.rows(), kernel, args...);
    return;
  }
  // Each chunk binds its tensors once.
  for_each_row_chunk(plan, [&](std::size_t c) {
    run_block_rows(block, plan.first_row(c), plan.last_row(c), kernel, args...);
  });
}

}  // namespace weft

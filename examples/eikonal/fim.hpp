// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Fast Iterative Method (Jeong and Whitaker) for |grad phi| = 1 on a 2D
// or 3D grid, as a weft graph: the distance from one source cell, within a
// band.
//
//   weft::eikonal::Problem p{.nx = 64, .ny = 64, .band = 10};   // source at the centre
//   weft::eikonal::Solver<double, weft::StridedView> solver(p);
//   weft::Executor executor;
//   solver.run(executor);                   // passes until none changes a cell
//   double d = solver.distance(10, 20);     // +inf outside the band
//   weft::eikonal::Solver3D<float, weft::ContiguousView> cube(q);   // q.nz cells along z
//
// Contract: cell (i, j, k) has its centre at ((i + 0.5) h, (j + 0.5) h,
// (k + 0.5) h), h = 1 / nx. Every pass is Jacobi-style: it reads only the
// previous pass's field, so the result is bitwise the same for any split and either layout,
// and equals the serial reference (reference.hpp). A cell takes a value only
// while it is at most band * h (the band); cells beyond keep +infinity. A
// pass visits only the blocks that can change (docs/eikonal.md, "Quiet
// blocks"); the others already hold its result.
#pragma once

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <weft/weft.hpp>

namespace weft::eikonal {

struct Problem {
  std::size_t nx = 256, ny = 256;
  std::size_t nz = 1;     // a 2D solver needs 1; a 3D one any number
  std::size_t band = 10;  // K: cells with a distance above K h stay at +inf
  std::size_t source_x = std::numeric_limits<std::size_t>::max();  // max: the centre, nx / 2
  std::size_t source_y = std::numeric_limits<std::size_t>::max();  // max: the centre, ny / 2
  std::size_t source_z = std::numeric_limits<std::size_t>::max();  // max: the centre, nz / 2
  std::size_t partitions = 1;  // along the last axis: y in 2D, z in 3D (one per GPU with --gpus)
  std::size_t tiles_x = 1, tiles_y = 1, tiles_z = 1;  // blocks per partition per axis: what a pass may skip
  bool skip_quiet_blocks = true;                      // false: every pass visits every block
  bool in_shared = false;                             // GPU kernels: stage the input in shared memory
  int gpus = 0;                                       // GPU solvers: devices to use (0: all present)

  std::size_t sx() const noexcept {
    return source_x == std::numeric_limits<std::size_t>::max() ? nx / 2 : source_x;
  }
  std::size_t sy() const noexcept {
    return source_y == std::numeric_limits<std::size_t>::max() ? ny / 2 : source_y;
  }
  std::size_t sz() const noexcept {
    return source_z == std::numeric_limits<std::size_t>::max() ? nz / 2 : source_z;
  }
  double h() const noexcept { return 1.0 / static_cast<double>(nx); }

  // The same, per axis, for a D-dimensional solver (D = 2 drops z).
  template <std::size_t D>
  Extents<D> cells() const noexcept {
    return pick<D>(nx, ny, nz);
  }
  template <std::size_t D>
  Extents<D> source() const noexcept {
    return pick<D>(sx(), sy(), sz());
  }
  template <std::size_t D>
  Extents<D> partition_grid() const noexcept {
    Extents<D> grid{};
    for (auto& g : grid) g = 1;
    grid[D - 1] = partitions;
    return grid;
  }
  template <std::size_t D>
  Extents<D> tile_grid() const noexcept {
    return pick<D>(tiles_x, tiles_y, tiles_z);
  }
  template <std::size_t D>
  Extents<D> block_grid() const noexcept {
    Extents<D> grid = tile_grid<D>();
    grid[D - 1] *= partitions;
    return grid;
  }

 private:
  template <std::size_t D>
  static Extents<D> pick(std::size_t x, std::size_t y, std::size_t z) noexcept {
    static_assert(D == 2 || D == 3, "eikonal: 2D or 3D grids");
    if constexpr (D == 2) {
      return {x, y};
    } else {
      return {x, y, z};
    }
  }
};

// A cell: its distance and whether the last pass lowered it (the FIM's
// active list: only cells next to a changed cell need solving again).
template <class T, class Layout>
struct Cell : PolymorphicLayout<Cell<T, Layout>> {
  using Storage = typename StorageDescriptor<Layout, T, int>::Storage;

  WEFT_HOST_DEVICE T& value() noexcept { return storage.template get<0>(); }
  WEFT_HOST_DEVICE const T& value() const noexcept { return storage.template get<0>(); }
  WEFT_HOST_DEVICE int& changed() noexcept { return storage.template get<1>(); }
  WEFT_HOST_DEVICE const int& changed() const noexcept { return storage.template get<1>(); }
  // What Graph::then_reduce sums (it converts each cell to the result's
  // type): 64 bits, as a grid may hold more than 2^31 cells.
  WEFT_HOST_DEVICE explicit operator std::int64_t() const noexcept { return changed(); }

  Storage storage;
};

// Products and differences rounded once each, on the GPU too (nvcc would
// otherwise contract a * b - c into one fused multiply-add, which the host
// does not do, and the fields would differ in the last bit).
template <class T>
WEFT_HOST_DEVICE inline T mul(T a, T b) noexcept {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) {
    return __fmul_rn(a, b);
  } else {
    return __dmul_rn(a, b);
  }
#else
  return a * b;
#endif
}
template <class T>
WEFT_HOST_DEVICE inline T sub(T a, T b) noexcept {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) {
    return __fsub_rn(a, b);
  } else {
    return __dsub_rn(a, b);
  }
#else
  return a - b;
#endif
}

// The first-order Godunov upwind solution at a cell of width h whose
// smallest neighbours are a (along x) and b (along y): the root of
// (u - a)^2 + (u - b)^2 = h^2, or the 1D update min(a, b) + h where that
// root would not lie above both (|a - b| >= h, which includes a negative
// discriminant, and an infinite neighbour).
template <class T>
WEFT_HOST_DEVICE inline T godunov_update(T a, T b, T h) noexcept {
  if (b < a) {
    const T t = a;
    a = b;
    b = t;
  }
  if (!(b - a < h)) return a + h;  // also inf - inf (NaN): a + h, still +inf
  const T d = a - b;
  return (a + b + std::sqrt(sub(mul(mul(T(2), h), h), mul(d, d)))) / T(2);
}

// The same in 3D, with c the smallest neighbour along z: the 2D update from
// the two smallest of a, b, c, or, where that lies above the third, the
// root of (u - a)^2 + (u - b)^2 + (u - c)^2 = h^2, whose discriminant is
// 3 h^2 - (a - b)^2 - (b - c)^2 - (c - a)^2.
template <class T>
WEFT_HOST_DEVICE inline T godunov_update(T a, T b, T c, T h) noexcept {
  const auto order = [](T& lo, T& hi) {
    if (hi < lo) {
      const T t = lo;
      lo = hi;
      hi = t;
    }
  };
  order(a, b);
  order(b, c);
  order(a, b);
  const T two = godunov_update(a, b, h);  // a <= b <= c now
  if (!(two > c)) return two;             // also c = +inf
  const T ab = a - b, bc = b - c, ca = c - a;
  const T spread = mul(ab, ab) + mul(bc, bc) + mul(ca, ca);
  const T discriminant = sub(mul(mul(T(3), h), h), spread);
  // Positive in exact arithmetic when two > c; rounding may leave it just below.
  if (!(discriminant > T(0))) return two;
  return (a + b + c + std::sqrt(discriminant)) / T(3);
}

// Per-block flags shared by a pass and the bookkeeping node after it
// (block = x + blocks_x (y + blocks_y z), as the tensor numbers its blocks).
// Passes are numbered from 1; pass 0 is the start.
struct BlockFlags {
  const int* active = nullptr;  // the pass visits the block
  int* changed = nullptr;       // the pass lowered a cell of the block
  // The last pass that changed a cell of the block, and the last pass that
  // read this pass's input field with the block visited: its padding then
  // held the field of the pass before that one (docs/eikonal.md, "Padding
  // copies").
  const int* last_change = nullptr;
  const int* last_read = nullptr;
  std::size_t blocks_x = 1, blocks_y = 1;

  WEFT_HOST_DEVICE std::size_t index(std::size_t x, std::size_t y, std::size_t z = 0) const noexcept {
    return x + (y + z * blocks_y) * blocks_x;
  }
};

// Notes that a cell of a block changed; cells of one block may run on
// several threads, which all store the same 1.
WEFT_HOST_DEVICE inline void mark_changed(int& flag) noexcept {
#if defined(__CUDA_ARCH__)
  flag = 1;
#else
  std::atomic_ref<int>(flag).store(1, std::memory_order_relaxed);  // read after the pass's join
#endif
}

// One pass at one cell: from `in` (the previous pass, neighbours in the
// padding) into `out`. The padding beyond the grid holds +inf and no flag
// (set once, never copied over), so a neighbour outside the domain counts
// as absent. A block the flags call quiet is left alone: `out` holds this
// pass's result there already (docs/eikonal.md).
template <class T, std::size_t Dims = 2>
struct UpdateCell {
  static_assert(Dims == 2 || Dims == 3, "eikonal: 2D or 3D grids");

  template <class In, class Out>
  WEFT_HOST_DEVICE void operator()(In& in, Out& out, T h, T limit, BlockFlags flags) const {
#if defined(__CUDA_ARCH__)
    // GPU launches do not ask skip_block: the test is per cell there.
    if (flags.active[block_of(out, flags)] == 0) return;
#endif
    // The centre first: GCC 12 then keeps the strided iterators in
    // registers; reading it last cost a store-forwarding stall per cell and
    // made strided double 3x slower (docs/eikonal.md, "Host figures").
    // neighbour() rather than *offset(): no copy of the block's shape per
    // read, which in 3D GCC kept on the stack (strided double 1.3x slower).
    const auto centre = *in;
    const auto west = in.neighbour(0, -1), east = in.neighbour(0, 1);
    const auto south = in.neighbour(1, -1), north = in.neighbour(1, 1);
    T value = centre.value();
    int changed = 0;
    if constexpr (Dims == 2) {
      if ((west.changed() | east.changed() | south.changed() | north.changed()) != 0) {
        // otherwise the same inputs as last time: no lower value
        const T solved =
            godunov_update(std::fmin(west.value(), east.value()), std::fmin(south.value(), north.value()), h);
        if (solved < value && solved <= limit) {
          value = solved;
          changed = 1;
        }
      }
    } else {
      const auto below = in.neighbour(2, -1), above = in.neighbour(2, 1);
      if ((west.changed() | east.changed() | south.changed() | north.changed() | below.changed() |
           above.changed()) != 0) {
        const T solved =
            godunov_update(std::fmin(west.value(), east.value()), std::fmin(south.value(), north.value()),
                           std::fmin(below.value(), above.value()), h);
        if (solved < value && solved <= limit) {
          value = solved;
          changed = 1;
        }
      }
    }
    auto next = *out;
    next.value() = value;
    next.changed() = changed;
    if (changed != 0) mark_changed(flags.changed[block_of(out, flags)]);
  }
  // A quiet block: on the host, run_block_kernel visits none of its cells.
  template <class In, class Out>
  bool skip_block(std::size_t block, const In&, const Out& out, T, T, BlockFlags flags) const {
    return flags.active[index_of(block, out, flags)] == 0;
  }
  // The copy from `from` into `to`'s padding brings nothing new when `from`
  // has not changed since the pass whose field the padding holds, and
  // nothing read when the blocks meet only at an edge or corner: the kernel
  // reads face neighbours alone.
  template <class In, class Out>
  bool skip_padding_copy(std::size_t from, std::size_t to, const In&, const Out& out, T, T,
                         BlockFlags flags) const {
    const Extents<Dims> a = out.geometry().block_coords(from), b = out.geometry().block_coords(to);
    std::size_t apart = 0;
    for (std::size_t d = 0; d < Dims; ++d) apart += a[d] > b[d] ? a[d] - b[d] : b[d] - a[d];
    if (apart != 1) return true;
    return flags.last_change[index_of(from, out, flags)] < flags.last_read[index_of(to, out, flags)] - 1;
  }

 private:
  template <class Out>
  static std::size_t index_of(std::size_t block, const Out& out, const BlockFlags& flags) {
    const Extents<Dims> at = out.geometry().block_coords(block);
    if constexpr (Dims == 2) {
      return flags.index(at[0], at[1]);
    } else {
      return flags.index(at[0], at[1], at[2]);
    }
  }
  template <class Out>
  WEFT_HOST_DEVICE static std::size_t block_of(const Out& out, const BlockFlags& flags) noexcept {
    if constexpr (Dims == 2) {
      return flags.index(out.block(0), out.block(1));
    } else {
      return flags.index(out.block(0), out.block(1), out.block(2));
    }
  }
};

// FNV-1a over the bytes of every cell's value, row by row (then plane by
// plane); value_at(i, j, k).
template <class ValueAt>
std::uint64_t field_checksum(std::size_t nx, std::size_t ny, std::size_t nz, ValueAt value_at) {
  std::uint64_t hash = 1469598103934665603ull;
  for (std::size_t k = 0; k < nz; ++k) {
    for (std::size_t j = 0; j < ny; ++j) {
      for (std::size_t i = 0; i < nx; ++i) {
        const auto value = value_at(i, j, k);
        unsigned char bytes[sizeof value];
        std::memcpy(bytes, &value, sizeof value);
        for (unsigned char byte : bytes) hash = (hash ^ byte) * 1099511628211ull;
      }
    }
  }
  return hash;
}
// The same over a 2D field; value_at(i, j).
template <class ValueAt>
std::uint64_t field_checksum(std::size_t nx, std::size_t ny, ValueAt value_at) {
  return field_checksum(nx, ny, 1, [&](std::size_t i, std::size_t j, std::size_t) { return value_at(i, j); });
}

// The exact distance from the source's centre to cell (i, j, k)'s centre.
inline double exact_distance(const Problem& p, std::size_t i, std::size_t j, std::size_t k = 0) {
  const double dx = static_cast<double>(i) - static_cast<double>(p.sx());
  const double dy = static_cast<double>(j) - static_cast<double>(p.sy());
  const double dz = static_cast<double>(k) - static_cast<double>(p.nz > 1 ? p.sz() : 0);
  return p.h() * std::sqrt(dx * dx + dy * dy + dz * dz);
}

// Errors against exact_distance over the cells that hold a value (the band):
// the largest and the mean (L1 per cell) absolute difference. value_at(i,
// j) for a 2D problem, value_at(i, j, k) for a 3D one.
struct BandError {
  double max = 0.0, l1 = 0.0;
  std::size_t cells = 0;
};
template <class ValueAt>
BandError band_error(const Problem& p, ValueAt value_at) {
  BandError e;
  double sum = 0.0;
  for (std::size_t k = 0; k < p.nz; ++k) {
    for (std::size_t j = 0; j < p.ny; ++j) {
      for (std::size_t i = 0; i < p.nx; ++i) {
        double v = 0.0;
        if constexpr (std::is_invocable_v<ValueAt&, std::size_t, std::size_t, std::size_t>) {
          v = static_cast<double>(value_at(i, j, k));
        } else {
          v = static_cast<double>(value_at(i, j));
        }
        if (!std::isfinite(v)) continue;
        const double error = std::fabs(v - exact_distance(p, i, j, k));
        e.max = std::fmax(e.max, error);
        sum += error;
        ++e.cells;
      }
    }
  }
  e.l1 = e.cells > 0 ? sum / static_cast<double>(e.cells) : 0.0;
  return e;
}

// "64x32x16" with sep "x", "3, 4" with ", ": for messages.
template <std::size_t D>
std::string join(const Extents<D>& e, const char* sep) {
  std::string text = std::to_string(e[0]);
  for (std::size_t d = 1; d < D; ++d) text += sep + std::to_string(e[d]);
  return text;
}

// Throws std::invalid_argument naming the field when the problem makes no
// sense for a D-dimensional solver.
template <std::size_t D = 2>
void check_problem(const Problem& p) {
  static_assert(D == 2 || D == 3, "eikonal: 2D or 3D grids");
  const char* const axis[] = {"x", "y", "z"};
  if (D == 2 && p.nz != 1)
    throw std::invalid_argument("eikonal: a 2D solver needs nz = 1, not " + std::to_string(p.nz) +
                                " (Solver3D solves 3D grids)");
  const Extents<D> cells = p.cells<D>(), tiles = p.tile_grid<D>(), blocks = p.block_grid<D>();
  for (std::size_t d = 0; d < D; ++d)
    if (cells[d] == 0)
      throw std::invalid_argument(std::string("eikonal: the grid needs a cell along ") + axis[d]);
  if (p.partitions == 0) throw std::invalid_argument("eikonal: the grid needs at least one partition");
  for (std::size_t d = 0; d < D; ++d) {
    if (tiles[d] != 0 && cells[d] >= blocks[d]) continue;
    std::string what = std::to_string(tiles[d]) + " tiles";
    if (d == D - 1) what = std::to_string(p.partitions) + " partitions of " + what;
    throw std::invalid_argument("eikonal: " + std::to_string(cells[d]) + " cells along " + axis[d] +
                                " cannot be split into " + what);
  }
  if (p.band == 0) throw std::invalid_argument("eikonal: the band needs at least 1 cell");
  const Extents<D> source = p.source<D>();
  for (std::size_t d = 0; d < D; ++d)
    if (source[d] >= cells[d])
      throw std::invalid_argument("eikonal: the source (" + join(source, ", ") + ") lies outside the " +
                                  join(cells, "x") + " grid");
}

// Where a host Solver keeps its fields and flags, and how its kernel runs
// (the GPU's is in gpu_solver.cuh).
struct HostPlace {
  static constexpr bool gpu = false;
  template <class C, std::size_t D>
  static Tensor<C, D> field(const Problem& p) {
    if constexpr (D == 2) {
      return Tensor<C, 2>(p.partition_grid<2>(), p.tile_grid<2>(), 1, p.nx, p.ny);
    } else {
      return Tensor<C, 3>(p.partition_grid<3>(), p.tile_grid<3>(), 1, p.nx, p.ny, p.nz);
    }
  }
  static std::shared_ptr<int[]> flags(std::size_t count) { return std::make_shared<int[]>(count); }
  template <class K>
  static K kernel(K k) {
    return k;
  }
  template <class C, std::size_t D>
  static TensorAccess<C, D> input(const Tensor<C, D>& t, bool) {
    return concurrent_padded_access(t);
  }
};

// Sets every cell of a host field, padding included, to +inf with no flag,
// but the source cell: 0, flagged when `flag_source`.
template <class C, std::size_t D>
void fill_field(const Tensor<C, D>& field, const Problem& p, bool flag_source) {
  using T = std::remove_cvref_t<decltype(std::declval<C&>().value())>;
  const Extents<D> source = p.source<D>();
  for (std::size_t b = 0; b < field.block_count(); ++b) {
    const BlockSpace<D>& s = field.block_space(b);
    const BlockPlace<D> place = field.block_place(b);
    Extents<D> at{};  // padded local coordinates, x fastest
    for (;;) {
      bool is_source = true;
      std::size_t offset = 0;
      for (std::size_t d = 0; d < D; ++d) {
        is_source = is_source && place.origin[d] + at[d] == source[d] + s.padding;
        offset += at[d] * s.stride[d];
      }
      auto cell = *BlockIterator<C, D>(s, offset);
      cell.value() = is_source ? T(0) : std::numeric_limits<T>::infinity();
      cell.changed() = is_source && flag_source ? 1 : 0;
      std::size_t d = 0;
      while (d < D && ++at[d] == s.padded[d]) at[d++] = 0;
      if (d == D) break;
    }
  }
}

// Dims: 2 (nz must be 1) or 3; Solver3D below names the second.
template <class T, class Layout, class Place = HostPlace, std::size_t Dims = 2>
class Solver {
 public:
  using CellType = Cell<T, Layout>;
  using Field = Tensor<CellType, Dims>;

  explicit Solver(const Problem& p)
      : problem_((check_problem<Dims>(p), p)),
        a_(Place::template field<CellType, Dims>(p)),
        b_(Place::template field<CellType, Dims>(p)),
        host_(Place::gpu ? HostPlace::field<CellType, Dims>(p) : a_),
        grid_(p.block_grid<Dims>()),
        blocks_(count(grid_)),
        flags_(Place::flags(kFlagArrays * blocks_)),
        counts_(std::make_shared<Counts>()) {
    reset();
    build_graph();
  }
  Solver(const Solver&) = delete;  // the graph refers to its fields
  Solver& operator=(const Solver&) = delete;

  // Whether the next runs skip quiet blocks (from the next reset() on).
  void skip_quiet_blocks(bool skip) noexcept { problem_.skip_quiet_blocks = skip; }

  // Back to the start: the source alone, flagged.
  void reset() {
    // b holds what a pass that changes nothing would write: a's values, no flags.
    fill_field(host_, problem_, false);
    deep_copy(b_, host_);
    fill_field(host_, problem_, true);
    if constexpr (Place::gpu) deep_copy(a_, host_);
    int* f = flags_.get();
    for (std::size_t k = 0; k < kFlagArrays * blocks_; ++k) f[k] = 0;
    // a's padding holds the start (as if pass 1 had copied it), b's the
    // start without the source's flag: "pass -1", before pass 0 set it. No
    // block has changed since, but the source's.
    const std::size_t source_block = block_holding(problem_.source<Dims>());
    for (std::size_t k = 0; k < blocks_; ++k) {
      f[read_at(0) + k] = 1;
      f[read_at(1) + k] = 0;
      f[last_change_at() + k] = kNever;
    }
    // "The pass before the first", pass 0, changed the source's block.
    f[last_change_at() + source_block] = 0;
    f[changed_at() + source_block] = 1;
    plan_next_pass(0);
    *counts_ = Counts{};
  }

  // Runs passes until one changes no cell; returns the passes that did
  // (again: one pass, which changes nothing). On GPUs, sync_host() then
  // brings the field back for distance().
  long run(Executor& executor) {
    executor.run(graph_).get();
    return counts_->changing_passes;
  }
  void sync_host() {
    if constexpr (Place::gpu) deep_copy(host_, a_);
  }

  // k: 0 on a 2D grid.
  T distance(std::size_t i, std::size_t j, std::size_t k = 0) const {
    if constexpr (Dims == 2) {
      return k == 0 ? host_(i, j).value() : throw std::out_of_range("eikonal: a 2D field has no plane k > 0");
    } else {
      return host_(i, j, k).value();
    }
  }
  long changing_passes() const noexcept { return counts_->changing_passes; }
  long passes() const noexcept { return counts_->passes; }
  // Blocks the passes visited (passes times blocks without skipping).
  long visited_blocks() const noexcept { return counts_->visited_blocks; }
  std::size_t blocks() const noexcept { return blocks_; }
  const Graph& graph() const noexcept { return graph_; }
  std::uint64_t checksum() const {
    return field_checksum(problem_.nx, problem_.ny, problem_.nz,
                          [this](std::size_t i, std::size_t j, std::size_t k) { return distance(i, j, k); });
  }

 private:
  struct Counts {
    long passes = 0, changing_passes = 0, visited_blocks = 0;
    int pass_number = 0;  // every pass, those after convergence too
    bool converged = false;
  };

  // flags_ holds [active | changed | last pass that changed it | last pass
  // that read a with it visited | ... b ...], blocks_ each (BlockFlags).
  static constexpr std::size_t kFlagArrays = 5;
  static constexpr int kNever = -2;  // below any pass's number minus 1
  static constexpr std::size_t active_at() noexcept { return 0; }
  std::size_t changed_at() const noexcept { return blocks_; }
  std::size_t last_change_at() const noexcept { return 2 * blocks_; }
  std::size_t read_at(int field) const noexcept { return (3 + static_cast<std::size_t>(field)) * blocks_; }

  static std::size_t count(const Extents<Dims>& grid) noexcept {
    std::size_t n = 1;
    for (std::size_t g : grid) n *= g;
    return n;
  }

  // The flag index of the block that holds global cell `cell`.
  std::size_t block_holding(const Extents<Dims>& cell) const {
    const TensorGeometry<Dims>& g = a_.geometry();
    for (std::size_t b = 0; b < g.block_count(); ++b) {
      const Extents<Dims> o = g.block_origin(b), e = g.block_extent(b);
      bool inside = true;
      for (std::size_t d = 0; d < Dims; ++d) inside = inside && cell[d] >= o[d] && cell[d] < o[d] + e[d];
      if (!inside) continue;
      const Extents<Dims> c = g.block_coords(b);
      std::size_t index = 0;
      for (std::size_t d = Dims; d-- > 0;) index = index * grid_[d] + c[d];
      return index;
    }
    return 0;
  }

  // After pass `pass` (0: the start), whose changes last_change already
  // holds: whether it changed a cell; which blocks the next pass must visit
  // (docs/eikonal.md, "Quiet blocks"); then the changed flags are cleared.
  bool plan_next_pass(int pass) {
    int* f = flags_.get();
    const int* changed = f + changed_at();
    bool any = false;
    for (std::size_t k = 0; k < blocks_; ++k) any = any || changed[k] != 0;
    Extents<Dims> at{};  // block coordinates of block k, x fastest
    for (std::size_t k = 0; k < blocks_; ++k) {
      bool near = changed[k] != 0;
      for (std::size_t d = 0, stride = 1; d < Dims && !near; stride *= grid_[d], ++d)
        near = (at[d] > 0 && changed[k - stride] != 0) || (at[d] + 1 < grid_[d] && changed[k + stride] != 0);
      const bool changed_before = f[last_change_at() + k] >= pass - 1;  // in this pass or the one before
      f[active_at() + k] = !problem_.skip_quiet_blocks || near || changed_before ? 1 : 0;
      for (std::size_t d = 0; d < Dims && ++at[d] == grid_[d]; ++d) at[d] = 0;
    }
    for (std::size_t k = 0; k < blocks_; ++k) f[changed_at() + k] = 0;
    return any;
  }

  // After each pass (which read field 0, a, or 1, b), the bookkeeping node;
  // the graph repeats while the second pass changed a cell.
  void note_pass(int field_read) {
    const int pass = ++counts_->pass_number;
    int* f = flags_.get();
    long visited = 0;
    for (std::size_t k = 0; k < blocks_; ++k) {
      if (f[active_at() + k] != 0) {
        f[read_at(field_read) + k] = pass;
        ++visited;
      }
      if (f[changed_at() + k] != 0) f[last_change_at() + k] = pass;
    }
    const bool changed = plan_next_pass(pass);
    if (counts_->converged) return;  // a pass after one that changed nothing is not counted
    counts_->visited_blocks += visited;
    ++counts_->passes;
    if (!changed)
      counts_->converged = true;
    else
      ++counts_->changing_passes;
  }

  // One run of the graph is two passes (a -> b, b -> a), each followed by
  // the bookkeeping node; the graph repeats while the second changed any.
  void build_graph() {
    const T h = static_cast<T>(problem_.h());
    const T limit = static_cast<T>(static_cast<double>(problem_.band) * problem_.h());
    int* f = flags_.get();
    const BlockFlags reads_a{f + active_at(), f + changed_at(), f + last_change_at(),
                             f + read_at(0),  grid_[0],         grid_[1]};
    BlockFlags reads_b = reads_a;
    reads_b.last_read = f + read_at(1);
    const auto kernel = Place::kernel(UpdateCell<T, Dims>{});
    const bool shared = problem_.in_shared;
    graph_.split(kernel, Place::input(a_, shared), b_, h, limit, reads_a).named("pass_ab");
    graph_.then([this] { note_pass(0); }).named("note_ab");
    graph_.then_split(kernel, Place::input(b_, shared), a_, h, limit, reads_b).named("pass_ba");
    graph_.then([this] { note_pass(1); }).named("note_ba");
    auto counts = counts_;
    graph_.conditional([counts] { return !counts->converged; }).named("again?");
  }

  Problem problem_;
  Field a_, b_, host_;  // host_: a_ itself on the host, its host twin on GPUs
  Extents<Dims> grid_;  // blocks per axis
  std::size_t blocks_;
  std::shared_ptr<int[]> flags_;
  std::shared_ptr<Counts> counts_;
  Graph graph_;
};

template <class T, class Layout, class Place = HostPlace>
using Solver3D = Solver<T, Layout, Place, 3>;

}  // namespace weft::eikonal

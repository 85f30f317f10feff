// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Eikonal workload (examples/eikonal, Ripple section 7.4 and Table 5):
// weft's FIM solver, a graph of Jacobi passes over a tiled Tensor that loops
// until no pass changes a cell, against the same FIM written by hand over
// plain arrays with OpenMP, in the same process.
//
//   eikonal_fim.<layout>       ms per solve (source at the centre, from the
//                              start to the pass that changes nothing) of
//                              Solver<T, layout> against the OpenMP FIM,
//                              float with a band of 5 cells and double with
//                              10 (Table 5's rows), both skipping quiet
//                              blocks. Goal: <= 1.053 (95% of its speed).
//   eikonal_fim_visit_all.<layout>  the same with every pass visiting every
//                              block, against the OpenMP FIM doing the same.
//   eikonal_fim_skip           weft (strided) skipping quiet blocks against
//                              weft visiting all: what skipping gains.
//   *.contiguous_vs_aos        weft's contiguous layout against the same
//                              OpenMP FIM over one array of {value, flag}
//                              cells, as that layout stores them: what the
//                              runtime costs, without the layout's cost.
//
// Sizes 1024^2 to 16384^2 where memory allows (--quick: 256^2; a size
// whose fields would take over half the machine's memory is skipped,
// saying so). The grid is split into `threads` partitions along y and
// 8 x 8 blocks in all (the OpenMP FIM uses the same tiles).
// eikonal_fim_3d.* are the same rows on 128^3 and 256^3 cubes (--quick:
// 32^3) in 4 x 4 x 4 blocks, split along z. Table 5's *_in_shared columns
// stage GPU kernels' inputs in shared memory; on the host they mean
// nothing, so this benchmark has none (eikonal_gpu_fim has them).
//
// Fairness. The Executor has opt.threads CPU workers; the OpenMP loops ask
// for num_threads(opt.threads), static schedule, over rows. Each timing
// starts from a reset field (not timed); contenders take turns within each
// round, the best of the rounds is reported. After the timings every field
// is compared with the OpenMP FIM's bit for bit, and the number of passes
// too; a mismatch prints the first differing cell and exits 1.
#include "bench.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include <weft/runtime/executor.hpp>

#include "eikonal/fim.hpp"

namespace {

using weft::bench::Options;
using weft::bench::Reporter;
using weft::eikonal::Problem;

constexpr std::size_t kBlocksPerSide = 8;

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "eikonal_fim: %s\n", message.c_str());
  std::exit(1);
}

// How the OpenMP FIM stores a field: a value array and a flag array
// (struct of arrays, as weft's strided layout), or one array of {value,
// flag} cells (array of structures, as weft's contiguous layout: 16 bytes a
// double cell against 12).
template <class T>
struct FieldArrays {
  std::vector<T> value_array;
  std::vector<int> flag_array;
  void assign(std::size_t n) {
    value_array.assign(n, T(0));
    flag_array.assign(n, 0);
  }
  struct Cells {
    T* values;
    int* flags;
    T& value(std::size_t at) const { return values[at]; }
    int& flag(std::size_t at) const { return flags[at]; }
  };
  Cells cells() { return {value_array.data(), flag_array.data()}; }
  T value(std::size_t at) const { return value_array[at]; }
};

template <class T>
struct FieldCells {
  struct Cell {
    T value;
    int flag;
  };
  std::vector<Cell> cell_array;
  void assign(std::size_t n) { cell_array.assign(n, Cell{T(0), 0}); }
  struct Cells {
    Cell* at_;
    T& value(std::size_t at) const { return at_[at].value; }
    int& flag(std::size_t at) const { return at_[at].flag; }
  };
  Cells cells() { return {cell_array.data()}; }
  T value(std::size_t at) const { return cell_array[at].value; }
};

// The FIM over plain arrays (two fields), the same passes as
// weft::eikonal::Solver: Jacobi, the same local solver and band, quiet
// tiles skipped by the same rule, until a pass changes nothing. Dims 3 adds
// the z axis; the 2D loops are those of Dims 2 alone.
template <class T, std::size_t Dims = 2, class Field = FieldArrays<T>>
class OpenMpFim {
 public:
  OpenMpFim(const Problem& p, int threads) : p_(p), threads_(threads), n_(p.nx * p.ny * p.nz) {
    const weft::Extents<Dims> grid = p.block_grid<Dims>();
    bx_ = grid[0];
    by_ = grid[1];
    bz_ = Dims == 3 ? grid[Dims - 1] : 1;
    for (Field& f : field_) f.assign(n_);
    for (std::size_t t = 0; t <= bx_; ++t) x_edge_.push_back(t * p.nx / bx_);
    // row_tile_[row]: the tile row (y tile + z tile * by) of row j + k ny.
    std::vector<std::size_t> y_tile, z_tile;
    for (std::size_t t = 0; t < by_; ++t)
      for (std::size_t j = t * p.ny / by_; j < (t + 1) * p.ny / by_; ++j) y_tile.push_back(t);
    for (std::size_t t = 0; t < bz_; ++t)
      for (std::size_t k = t * p.nz / bz_; k < (t + 1) * p.nz / bz_; ++k) z_tile.push_back(t);
    for (std::size_t k = 0; k < p.nz; ++k)
      for (std::size_t j = 0; j < p.ny; ++j) row_tile_.push_back(y_tile[j] + z_tile[k] * by_);
    const std::size_t tiles = bx_ * by_ * bz_;
    active_.assign(tiles, 0);
    tile_changed_.assign(tiles, 0);
    before_.assign(tiles, 0);
  }

  void reset(bool skip) {
    skip_ = skip;
    const T inf = std::numeric_limits<T>::infinity();
    const std::size_t source = (p_.sz() * p_.ny + p_.sy()) * p_.nx + p_.sx();
    const std::size_t rows = p_.ny * p_.nz;
    const auto a = field_[0].cells(), b = field_[1].cells();
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < p_.nx; ++i) {
        const std::size_t at = r * p_.nx + i;
        a.value(at) = b.value(at) = at == source ? T(0) : inf;
        a.flag(at) = at == source ? 1 : 0;
        b.flag(at) = 0;
      }
    }
    std::fill(before_.begin(), before_.end(), 0);
    std::fill(tile_changed_.begin(), tile_changed_.end(), 0);
    tile_changed_[tile_of(p_.sx(), p_.sy() + p_.sz() * p_.ny)] = 1;
    plan();
    current_ = 0;
  }

  // Passes until one changes nothing; returns the passes that changed a cell.
  long run() {
    long changing = 0;
    while (pass()) ++changing;
    return changing;
  }
  // The converged distance of cell `at` (x fastest, then y, then z).
  T value(std::size_t at) const { return field_[current_].value(at); }

 private:
  std::size_t tile_of(std::size_t i, std::size_t row) const {
    std::size_t tx = 0;
    while (x_edge_[tx + 1] <= i) ++tx;
    return tx + row_tile_[row] * bx_;
  }

  // Which tiles the next pass visits: near a tile that changed, or changed
  // the pass before (its flags in the array written next are still set).
  bool plan() {
    bool any = false;
    const std::size_t plane = bx_ * by_;
    for (std::size_t z = 0; z < bz_; ++z) {
      for (std::size_t y = 0; y < by_; ++y) {
        for (std::size_t x = 0; x < bx_; ++x) {
          const std::size_t k = x + y * bx_ + z * plane;
          const bool near =
              tile_changed_[k] != 0 || (x > 0 && tile_changed_[k - 1] != 0) ||
              (x + 1 < bx_ && tile_changed_[k + 1] != 0) || (y > 0 && tile_changed_[k - bx_] != 0) ||
              (y + 1 < by_ && tile_changed_[k + bx_] != 0) || (z > 0 && tile_changed_[k - plane] != 0) ||
              (z + 1 < bz_ && tile_changed_[k + plane] != 0);
          active_[k] = !skip_ || near || before_[k] != 0 ? 1 : 0;
          any = any || tile_changed_[k] != 0;
        }
      }
    }
    before_.swap(tile_changed_);
    std::fill(tile_changed_.begin(), tile_changed_.end(), 0);
    return any;
  }

  bool pass() {
    const T inf = std::numeric_limits<T>::infinity();
    const T h = static_cast<T>(p_.h());
    const T limit = static_cast<T>(static_cast<double>(p_.band) * p_.h());
    const std::size_t nx = p_.nx, ny = p_.ny, nz = p_.nz, plane = nx * ny, rows = ny * nz;
    const auto read = field_[current_].cells(), write = field_[1 - current_].cells();
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t j = Dims == 2 ? r : r % ny, k = Dims == 2 ? 0 : r / ny;
      const auto in = read, out = write;  // the thread's own copies of the pointers
      const std::size_t tile_row = row_tile_[r] * bx_;
      for (std::size_t tx = 0; tx < bx_; ++tx) {
        if (active_[tile_row + tx] == 0) continue;
        int any = 0;
        for (std::size_t i = x_edge_[tx]; i < x_edge_[tx + 1]; ++i) {
          const std::size_t at = r * nx + i;
          const bool w = i > 0, e = i + 1 < nx, s = j > 0, n = j + 1 < ny;
          T v = in.value(at);
          int c = 0;
          if constexpr (Dims == 2) {
            if ((w && in.flag(at - 1)) || (e && in.flag(at + 1)) || (s && in.flag(at - nx)) ||
                (n && in.flag(at + nx))) {
              const T solved = weft::eikonal::godunov_update(
                  std::fmin(w ? in.value(at - 1) : inf, e ? in.value(at + 1) : inf),
                  std::fmin(s ? in.value(at - nx) : inf, n ? in.value(at + nx) : inf), h);
              if (solved < v && solved <= limit) {
                v = solved;
                c = 1;
              }
            }
          } else {
            const bool b = k > 0, a = k + 1 < nz;
            if ((w && in.flag(at - 1)) || (e && in.flag(at + 1)) || (s && in.flag(at - nx)) ||
                (n && in.flag(at + nx)) || (b && in.flag(at - plane)) || (a && in.flag(at + plane))) {
              const T solved = weft::eikonal::godunov_update(
                  std::fmin(w ? in.value(at - 1) : inf, e ? in.value(at + 1) : inf),
                  std::fmin(s ? in.value(at - nx) : inf, n ? in.value(at + nx) : inf),
                  std::fmin(b ? in.value(at - plane) : inf, a ? in.value(at + plane) : inf), h);
              if (solved < v && solved <= limit) {
                v = solved;
                c = 1;
              }
            }
          }
          out.value(at) = v;
          out.flag(at) = c;
          any |= c;
        }
        if (any != 0) std::atomic_ref<int>(tile_changed_[tile_row + tx]).store(1, std::memory_order_relaxed);
      }
    }
    current_ = 1 - current_;
    return plan();
  }

  Problem p_;
  int threads_;
  std::size_t n_, bx_ = 1, by_ = 1, bz_ = 1;
  Field field_[2];
  std::vector<std::size_t> x_edge_, row_tile_;
  std::vector<int> active_, tile_changed_, before_;
  bool skip_ = true;
  int current_ = 0;
};

struct Case {
  const char* precision;
  std::size_t band;
};

void let_threads_settle() { std::this_thread::sleep_for(std::chrono::milliseconds(10)); }

struct Contender {
  std::string name;
  std::function<void()> reset;  // not timed
  std::function<long()> run;    // changing passes
  double best = std::numeric_limits<double>::infinity();
};

template <class T>
std::string first_difference(const Problem& p, const auto& expected, const auto& value_at) {
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  for (std::size_t k = 0; k < p.nz; ++k) {
    for (std::size_t j = 0; j < p.ny; ++j) {
      for (std::size_t i = 0; i < p.nx; ++i) {
        const T got = value_at(i, j, k), want = expected.value((k * p.ny + j) * p.nx + i);
        if (std::bit_cast<Bits>(got) != std::bit_cast<Bits>(want))
          return "cell (" + std::to_string(i) + ", " + std::to_string(j) + ", " + std::to_string(k) +
                 "): " + std::to_string(got) + " against OpenMP's " + std::to_string(want);
      }
    }
  }
  return {};
}

// 2D: n^2 cells in 8 x 8 blocks; 3D: n^3 cells in 4 x 4 x 4. The last axis
// is split into one partition per thread, its blocks shared among them.
template <std::size_t Dims>
Problem problem_for(const Options& opt, const Case& c, std::size_t n) {
  Problem p;
  p.nx = p.ny = n;
  p.nz = Dims == 3 ? n : 1;
  p.band = c.band;
  p.partitions = static_cast<std::size_t>(opt.threads);
  const std::size_t side = Dims == 2 ? kBlocksPerSide : kBlocksPerSide / 2;
  p.tiles_x = side;
  p.tiles_y = Dims == 2 ? std::max<std::size_t>(1, side / p.partitions) : side;
  p.tiles_z = Dims == 2 ? 1 : std::max<std::size_t>(1, side / p.partitions);
  return p;
}

template <class T, std::size_t Dims = 2>
void solve_size(const Options& opt, Reporter& out, const Case& c, std::size_t n) {
  const Problem p = problem_for<Dims>(opt, c, n);
  weft::Executor executor(weft::bench::cpu_only(opt.threads));
  OpenMpFim<T, Dims> omp(p, opt.threads);
  weft::eikonal::Solver<T, weft::StridedView, weft::eikonal::HostPlace, Dims> strided(p);
  weft::eikonal::Solver<T, weft::ContiguousView, weft::eikonal::HostPlace, Dims> contiguous(p);
  OpenMpFim<T, Dims, FieldCells<T>> omp_aos(p, opt.threads);
  // Per mode (skipping, then visiting all): OpenMP, strided, contiguous, OpenMP-AoS.
  constexpr std::size_t kPerMode = 4;
  std::vector<Contender> contenders;
  for (const bool skip : {true, false}) {
    const std::string mode = skip ? "" : " visit-all";
    contenders.push_back({"OpenMP" + mode, [&omp, skip] { omp.reset(skip); }, [&omp] { return omp.run(); }});
    contenders.push_back({"strided" + mode,
                          [&strided, skip] {
                            strided.skip_quiet_blocks(skip);
                            strided.reset();
                          },
                          [&strided, &executor] { return strided.run(executor); }});
    contenders.push_back({"contiguous" + mode,
                          [&contiguous, skip] {
                            contiguous.skip_quiet_blocks(skip);
                            contiguous.reset();
                          },
                          [&contiguous, &executor] { return contiguous.run(executor); }});
    contenders.push_back({"OpenMP-AoS" + mode, [&omp_aos, skip] { omp_aos.reset(skip); },
                          [&omp_aos] { return omp_aos.run(); }});
  }
  const bool large = p.nx * p.ny * p.nz >= std::size_t{4096} * 4096;
  const int rounds = std::max(1, large ? std::min(3, opt.repetitions) : opt.repetitions);
  std::vector<long> passes(contenders.size(), -1);
  for (int round = 0; round <= rounds; ++round) {  // round 0: warm-up (graph lowering, first touch)
    for (std::size_t k = 0; k < contenders.size(); ++k) {
      Contender& ct = contenders[k];
      ct.reset();
      let_threads_settle();
      const double s = weft::bench::seconds([&] { passes[k] = ct.run(); });
      if (round > 0) ct.best = std::min(ct.best, s);
      // Verify while the contender's field is there: each against the OpenMP FIM.
      const std::size_t role = k % kPerMode;
      if (round == rounds && role != 0) {
        omp.reset(true);
        const long omp_passes = omp.run();
        if (passes[k] != omp_passes)
          fail(ct.name + " took " + std::to_string(passes[k]) + " changing passes, OpenMP " +
               std::to_string(omp_passes));
        std::string difference;
        if (role == 1)
          difference =
              first_difference<T>(p, omp, [&](auto i, auto j, auto z) { return strided.distance(i, j, z); });
        if (role == 2)
          difference = first_difference<T>(
              p, omp, [&](auto i, auto j, auto z) { return contiguous.distance(i, j, z); });
        if (role == 3)
          difference = first_difference<T>(
              p, omp, [&](auto i, auto j, auto z) { return omp_aos.value((z * p.ny + j) * p.nx + i); });
        if (!difference.empty())
          fail(ct.name + " " + c.precision + " " + std::to_string(n) + "^2 differs from the OpenMP FIM at " +
               difference);
      }
    }
  }
  if (passes[0] != passes[kPerMode]) fail("the OpenMP FIM took different passes with and without skipping");

  const weft::Extents<Dims> blocks = p.block_grid<Dims>();
  std::string grid = std::to_string(blocks[0]);
  for (std::size_t d = 1; d < Dims; ++d) grid += "x" + std::to_string(blocks[d]);
  const std::string params = std::string(c.precision) + " band=" + std::to_string(c.band) + " " +
                             std::to_string(n) + (Dims == 2 ? "^2" : "^3") +
                             " P=" + std::to_string(p.partitions) + " blocks=" + grid +
                             " passes=" + std::to_string(passes[0] + 1);
  const std::string dims = Dims == 2 ? "" : "_3d";
  const auto ms = [](const Contender& ct) { return ct.best * 1e3; };
  out.compare("eikonal_fim" + dims + ".strided", params + " goal<=1.053", "ms/solve",
              {"weft", ms(contenders[1])}, {"OpenMP", ms(contenders[0])});
  out.compare("eikonal_fim" + dims + ".contiguous", params + " goal<=1.053", "ms/solve",
              {"weft", ms(contenders[2])}, {"OpenMP", ms(contenders[0])});
  out.compare("eikonal_fim" + dims + ".contiguous_vs_aos", params, "ms/solve", {"weft", ms(contenders[2])},
              {"OpenMP-AoS", ms(contenders[3])});
  out.compare("eikonal_fim" + dims + "_visit_all.strided", params + " goal<=1.053", "ms/solve",
              {"weft", ms(contenders[5])}, {"OpenMP", ms(contenders[4])});
  out.compare("eikonal_fim" + dims + "_visit_all.contiguous", params + " goal<=1.053", "ms/solve",
              {"weft", ms(contenders[6])}, {"OpenMP", ms(contenders[4])});
  out.compare("eikonal_fim" + dims + "_visit_all.contiguous_vs_aos", params, "ms/solve",
              {"weft", ms(contenders[6])}, {"OpenMP-AoS", ms(contenders[7])});
  out.compare("eikonal_fim" + dims + "_skip", params + " lower=better", "ms/solve",
              {"skip", ms(contenders[1])}, {"visit-all", ms(contenders[5])});
}

// Table 5 goes up to 16k^2 where memory allows: a size runs when its fields
// (two per weft layout and per OpenMP FIM) take at most half of the
// machine's memory.
template <class T>
bool fits_in_memory(std::size_t cells, const char* what) {
  using weft::eikonal::Cell;
  const double per_cell = 2.0 * (weft::element_storage<Cell<T, weft::StridedView>>::element_bytes +
                                 weft::element_storage<Cell<T, weft::ContiguousView>>::element_bytes +
                                 sizeof(T) + sizeof(int) + sizeof(typename FieldCells<T>::Cell));
  const double need = per_cell * static_cast<double>(cells);
  const double have =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (have > 0 && need <= have / 2) return true;
  std::printf("eikonal_fim: %s needs about %.1f GiB, more than half of this machine's %.1f GiB: skipped\n",
              what, need / (1u << 30), have / (1u << 30));
  return false;
}

void eikonal_fim(const Options& opt, Reporter& out) {
  std::printf(
      "eikonal_fim: Table 5's *_in_shared columns (shared-memory staging) exist on GPUs only: see "
      "eikonal_gpu_fim\n");
  const std::vector<std::size_t> sizes =
      opt.quick ? std::vector<std::size_t>{256} : std::vector<std::size_t>{1024, 2048, 4096, 8192, 16384};
  for (std::size_t n : sizes) {
    const std::string side = std::to_string(n) + "^2 ";
    if (fits_in_memory<float>(n * n, (side + "float").c_str())) solve_size<float>(opt, out, {"float", 5}, n);
    if (fits_in_memory<double>(n * n, (side + "double").c_str()))
      solve_size<double>(opt, out, {"double", 10}, n);
  }
  // 3D (beyond Table 5, which is 2D): the same rows on cubes.
  const std::vector<std::size_t> cubes =
      opt.quick ? std::vector<std::size_t>{32} : std::vector<std::size_t>{128, 256};
  for (std::size_t n : cubes) {
    solve_size<float, 3>(opt, out, {"float", 5}, n);
    solve_size<double, 3>(opt, out, {"double", 10}, n);
  }
}

}  // namespace

WEFT_BENCHMARK(eikonal_fim) { eikonal_fim(opt, out); }

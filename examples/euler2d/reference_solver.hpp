// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The euler2d solver written by hand over plain arrays, with no graph, no
// Tensor and no scheduler: the baseline weft's Solver (solver.hpp) is
// checked against, bitwise, and timed against (tools/bench/euler_bench.cpp).
//
//   weft::euler::SolverConfig config;               // shock-bubble, 800 x 400
//   weft::euler::ReferenceSolver reference(config, 4);  // 4 OpenMP threads
//   reference.run(20, 0.0);                         // 20 steps, as Solver::run
//   weft::euler::Solver<weft::StridedView> solver(config);
//   solver.run(executor, 20, 0.0);
//   assert(weft::euler::first_difference(solver, reference).empty());
//
// The grid is a struct of arrays: one array per conserved variable, each
// (nx + 2) x (ny + 2) with x fastest and one cell of padding all round.
// BasicReferenceSolver<ReferenceLayout::array_of_structs> keeps the same
// grid as one array of cells, the variables of a cell side by side, as
// weft's ContiguousView does: the benchmark times that layout against it
// too, since a struct of arrays vectorises better whoever writes the loop
// (docs/euler2d.md, "Host performance"). A
// step does what the Solver's graph does, in the same order and with the
// same arithmetic, so the fields agree to the last bit:
//   the largest wave speed (max_wave_speed of every cell), the time step
//   cfl * dx / speed (cut so as not to pass the end time), zero-gradient
//   padding of `in` (each edge cell copied outwards, corners left alone: no
//   sweep reads them), the x sweep in -> out, padding of `out`, the y sweep
//   out -> in, and the clock.
// Each cell is loaded into an owned State and goes through euler_physics.hpp's
// force_flux, as the graph's kernel does on Tensor handles. The agreement
// relies on both being compiled with the same floating-point flags: with FMA
// contraction allowed (-ffp-contract=fast and an FMA target) the compiler
// may fuse differently in the two loops.
//
// Each sweep computes both face fluxes of every cell, as the Solver's
// kernel does, although a face's flux is shared by its two cells: the
// baseline does the same work, so that timing the two compares the runtimes
// and not the algorithms.
//
// Built with OpenMP, every loop over rows is a `parallel for` on `threads`
// threads (static schedule); without it `threads` is ignored.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "euler_physics.hpp"
#include "problems.hpp"
#include "solver.hpp"

namespace weft::euler {

// Where a cell's variables lie in the reference's grid.
enum class ReferenceLayout {
  struct_of_arrays,  // one array per variable (as weft's StridedView)
  array_of_structs,  // one array of cells (as weft's ContiguousView)
};

template <ReferenceLayout GridLayout = ReferenceLayout::struct_of_arrays>
class BasicReferenceSolver {
 public:
  using Cell = State<double, ContiguousOwned>;

  // Uses config's problem, grid, cfl and gamma (not its partitions). Throws
  // std::invalid_argument for an empty grid or fewer than one thread.
  explicit BasicReferenceSolver(const SolverConfig& config, int threads = 1)
      : config_(config), threads_(threads), in_(config.nx, config.ny), out_(config.nx, config.ny) {
    if (config.nx == 0 || config.ny == 0) {
      throw std::invalid_argument("ReferenceSolver: grid " + std::to_string(config.nx) + " x " +
                                  std::to_string(config.ny) + " has no cells, expected at least 1 x 1");
    }
    if (threads < 1)
      throw std::invalid_argument("ReferenceSolver: " + std::to_string(threads) + " threads, expected >= 1");
    for (std::size_t j = 0; j < config.ny; ++j) {
      for (std::size_t i = 0; i < config.nx; ++i) {
        const Primitive p = initial_state(config.problem, i, j, config.nx, config.ny, config.gamma);
        Cell cell{};
        cell.set_primitive(p.density, p.velocity_x, p.velocity_y, p.pressure, config.gamma);
        in_.store(in_.at(i, j), cell);
      }
    }
  }

  // Runs steps until `max_steps` more have run or the time reaches
  // `end_time` (either may be 0: no limit; not both), like Solver::run: at
  // least one step unless the end time is already reached.
  void run(long max_steps, double end_time) {
    if (max_steps <= 0 && end_time <= 0.0)
      throw std::invalid_argument("ReferenceSolver::run: give steps or an end time");
    if (end_time > 0.0 && info_.time >= end_time) return;
    info_.end_time = end_time;
    const long last = max_steps > 0 ? info_.step + max_steps : -1;
    do {
      step();
    } while (!((last >= 0 && info_.step >= last) || (end_time > 0.0 && info_.time >= end_time)));
  }

  // One time step (the end time of the last run() still cuts it).
  void step() {
    const double fastest = max_wave_speed_of(in_);
    if (!(fastest > 0.0)) throw std::runtime_error("euler2d: no wave moves (max wave speed 0)");
    double dt = config_.cfl * dx() / fastest;
    if (info_.end_time > 0.0 && info_.time + dt > info_.end_time) dt = info_.end_time - info_.time;
    info_.dt = dt;
    extrapolate_boundary(in_);
    sweep<0>(in_, out_);
    extrapolate_boundary(out_);
    sweep<1>(out_, in_);
    info_.time += info_.dt;
    ++info_.step;
  }

  const StepInfo& info() const noexcept { return info_; }
  const SolverConfig& config() const noexcept { return config_; }
  int threads() const noexcept { return threads_; }
  double dx() const noexcept { return cell_size(config_.problem, config_.nx, config_.ny); }

  // The conserved state of cell (i, j) after the last step.
  Cell cell(std::size_t i, std::size_t j) const {
    if (i >= config_.nx || j >= config_.ny) {
      throw std::out_of_range("ReferenceSolver: cell (" + std::to_string(i) + ", " + std::to_string(j) +
                              ") out of bounds (" + std::to_string(config_.nx) + ", " +
                              std::to_string(config_.ny) + ")");
    }
    return in_.load(in_.at(i, j));
  }
  double density(std::size_t i, std::size_t j) const { return cell(i, j).density(); }

 private:
  static constexpr std::size_t kVariables = Cell::conserved_count;

  // One array per conserved variable, back to back, padding included (or
  // one array of cells: array_of_structs).
  class Grid {
   public:
    Grid(std::size_t nx, std::size_t ny)
        : nx_(nx), ny_(ny), pitch_(nx + 2), cells_((nx + 2) * (ny + 2)), values_(kVariables * cells_) {}

    // Interior cell (i, j); -1 and nx / ny reach into the padding.
    std::size_t at(std::ptrdiff_t i, std::ptrdiff_t j) const noexcept {
      return static_cast<std::size_t>(j + 1) * pitch_ + static_cast<std::size_t>(i + 1);
    }
    std::size_t nx() const noexcept { return nx_; }
    std::size_t ny() const noexcept { return ny_; }
    std::size_t pitch() const noexcept { return pitch_; }

    Cell load(std::size_t k) const noexcept {
      Cell cell;
      for (std::size_t v = 0; v < kVariables; ++v) cell.conserved(v) = values_[index(v, k)];
      return cell;
    }
    void store(std::size_t k, const Cell& cell) noexcept {
      for (std::size_t v = 0; v < kVariables; ++v) values_[index(v, k)] = cell.conserved(v);
    }
    void copy(std::size_t to, std::size_t from) noexcept {
      for (std::size_t v = 0; v < kVariables; ++v) values_[index(v, to)] = values_[index(v, from)];
    }

   private:
    // Variable v of cell k.
    std::size_t index(std::size_t v, std::size_t k) const noexcept {
      if constexpr (GridLayout == ReferenceLayout::struct_of_arrays) {
        return v * cells_ + k;
      } else {
        return k * kVariables + v;
      }
    }

    std::size_t nx_, ny_, pitch_, cells_;
    std::vector<double> values_;
  };

  double max_wave_speed_of(const Grid& grid) const {
    const auto nx = static_cast<std::ptrdiff_t>(grid.nx()), ny = static_cast<std::ptrdiff_t>(grid.ny());
    const double gamma = config_.gamma;
    // The identity of MaxReducer; a maximum does not depend on the order.
    double fastest = -std::numeric_limits<double>::infinity();
#if defined(_OPENMP)
#pragma omp parallel for num_threads(threads_) schedule(static) reduction(max : fastest)
#endif
    for (std::ptrdiff_t j = 0; j < ny; ++j) {
      for (std::ptrdiff_t i = 0; i < nx; ++i) {
        const double speed = max_wave_speed(grid.load(grid.at(i, j)), gamma);
        if (fastest < speed) fastest = speed;
      }
    }
    return fastest;
  }

  // Padding = the nearest edge cell, along each dimension (FirstOrderExtrapolation).
  static void extrapolate_boundary(Grid& grid) {
    const auto nx = static_cast<std::ptrdiff_t>(grid.nx()), ny = static_cast<std::ptrdiff_t>(grid.ny());
    for (std::ptrdiff_t j = 0; j < ny; ++j) {
      grid.copy(grid.at(-1, j), grid.at(0, j));
      grid.copy(grid.at(nx, j), grid.at(nx - 1, j));
    }
    for (std::ptrdiff_t i = 0; i < nx; ++i) {
      grid.copy(grid.at(i, -1), grid.at(i, 0));
      grid.copy(grid.at(i, ny), grid.at(i, ny - 1));
    }
  }

  // next = cell - dt/dx (F(cell, east) - F(west, cell)) along `Dim`.
  template <std::size_t Dim>
  void sweep(const Grid& from, Grid& to) const {
    const auto nx = static_cast<std::ptrdiff_t>(from.nx()), ny = static_cast<std::ptrdiff_t>(from.ny());
    const std::size_t step = Dim == 0 ? 1 : from.pitch();
    const double r = info_.dt / dx();
    const double gamma = config_.gamma;
#if defined(_OPENMP)
#pragma omp parallel for num_threads(threads_) schedule(static)
#endif
    for (std::ptrdiff_t j = 0; j < ny; ++j) {
      for (std::ptrdiff_t i = 0; i < nx; ++i) {
        const std::size_t k = from.at(i, j);
        const Cell here = from.load(k);
        const Cell east = force_flux(here, from.load(k + step), Dim, r, gamma);
        const Cell west = force_flux(from.load(k - step), here, Dim, r, gamma);
        Cell next;
        for (std::size_t v = 0; v < kVariables; ++v)
          next.conserved(v) = here.conserved(v) - r * (east.conserved(v) - west.conserved(v));
        to.store(k, next);
      }
    }
  }

  SolverConfig config_;
  int threads_;
  Grid in_, out_;
  StepInfo info_;
};

using ReferenceSolver = BasicReferenceSolver<>;

// "" when weft's Solver and the reference hold bitwise the same field, the
// same step count and the same time; otherwise the first difference found.
template <class Layout, ReferenceLayout GridLayout>
std::string first_difference(const Solver<Layout>& solver,
                             const BasicReferenceSolver<GridLayout>& reference) {
  const SolverConfig& c = solver.config();
  const SolverConfig& r = reference.config();
  if (c.nx != r.nx || c.ny != r.ny)
    return "grids differ: " + std::to_string(c.nx) + "x" + std::to_string(c.ny) + " and " +
           std::to_string(r.nx) + "x" + std::to_string(r.ny);
  const auto describe = [](double v) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g (0x%016llx)", v,
                  static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(v)));
    return std::string(text);
  };
  if (solver.info().step != reference.info().step)
    return "step counts differ: " + std::to_string(solver.info().step) + " and " +
           std::to_string(reference.info().step);
  if (std::bit_cast<std::uint64_t>(solver.info().time) != std::bit_cast<std::uint64_t>(reference.info().time))
    return "times differ: " + describe(solver.info().time) + " and " + describe(reference.info().time);
  static constexpr const char* kNames[] = {"density", "energy", "momentum x", "momentum y"};
  for (std::size_t j = 0; j < c.ny; ++j) {
    for (std::size_t i = 0; i < c.nx; ++i) {
      const auto weft_cell = solver.field()(i, j);
      const auto reference_cell = reference.cell(i, j);
      for (std::size_t v = 0; v < std::remove_cvref_t<decltype(reference_cell)>::conserved_count; ++v) {
        const double a = weft_cell.conserved(v), b = reference_cell.conserved(v);
        if (std::bit_cast<std::uint64_t>(a) != std::bit_cast<std::uint64_t>(b)) {
          return "cell (" + std::to_string(i) + ", " + std::to_string(j) + ") " + kNames[v] + ": weft " +
                 describe(a) + ", reference " + describe(b);
        }
      }
    }
  }
  return "";
}

}  // namespace weft::euler

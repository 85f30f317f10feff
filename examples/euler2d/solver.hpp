// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The 2D Euler solver as a weft graph (Ripple Listing 12). One run of the
// graph is one time step:
//
//   reduce      the largest wave speed (max |u| + c) of     (one node per partition + finish)
//               the cells of `in`, with WaveSpeed as map
//   then        the time step from the CFL condition
//   then_boundary  padding beyond the edges of `in`        (zero gradient: waves leave)
//   then_split  x sweep in -> out, FORCE fluxes            (concurrent_padded_access(in))
//   then_boundary  padding beyond the edges of `out`
//   then_split  y sweep out -> in, FORCE fluxes            (concurrent_padded_access(out))
//   then        advance the clock, report progress
//
// The domain is split along y into `partitions` device partitions of
// `sub_partitions` blocks each, so the padding exchanged between blocks is
// whole rows. Every cell's update reads only its neighbours and the global
// time step (a maximum, which does not depend on the order it is taken in),
// so the result is bitwise the same for any split.
//
// Given a rank group (SolverConfig::ranks, from weft::mpi::Session::world()
// under mpirun), the fields are spread over its ranks: each rank holds and
// computes the blocks of its partitions, the padding between ranks travels
// as messages and the reduction gives every rank the same maximum, so the
// same graph on every rank computes bitwise the same steps as one process.
//
// On GPUs (Solver<Layout, true>, which only .cu files can instantiate) the
// fields live in GPU memory and the same graph runs its kernels as
// weft::cuda::kernel nodes, its boundaries and reduction on the GPU and its
// padding copies on copy streams; the time step and the clock stay host
// nodes. The kernels below are functors so that both compilers take them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <weft/weft.hpp>

#include "euler_physics.hpp"
#include "problems.hpp"

namespace weft::euler {

struct SolverConfig {
  Problem problem = Problem::shock_bubble;
  std::size_t nx = 800, ny = 400;  // cells (square: see cell_size() in problems.hpp)
  std::size_t partitions = 4;      // device partitions along y (virtual devices on the host)
  std::size_t sub_partitions = 1;  // blocks per device partition along y
  double cfl = 0.9;                // of the stability limit, per sweep
  double gamma = 1.4;
  int gpus = 0;  // Solver<Layout, true>: CUDA devices to use (0: all present)
  ExecutionKind execution = ExecutionKind::Cpu;
  // Given: the fields are spread over these ranks (host memory only).
  std::shared_ptr<RankGroup> ranks;
};

// Where the run is; the last node of each step updates it.
struct StepInfo {
  long step = 0;
  double time = 0.0;
  double dt = 0.0;
  double end_time = 0.0;  // the time step is cut so as not to pass it (0: none)
};

// The step's kernels. WaveSpeed: the fastest signal at a cell, which the
// time step's reduction folds as it goes (Ripple's Listing 12 writes it to
// a tensor first and reduces that: a pass more over the grid).
struct WaveSpeed {
  double gamma;
  template <class Cell>
  WEFT_HOST_DEVICE double operator()(const Cell& cell) const {
    using Owned = typename std::remove_cvref_t<Cell>::Owned;
    return max_wave_speed(read_only<Owned>(cell), gamma);
  }
};

// One FORCE sweep along `Dim`: next = cell - dt/dx (F east - F west).
template <std::size_t Dim>
struct Sweep {
  template <class CellIt, class NextIt>
  WEFT_HOST_DEVICE void operator()(CellIt& cell, NextIt& next, const StepInfo* step, double width,
                                   double gamma) const {
    constexpr auto dim = std::integral_constant<std::size_t, Dim>{};
    const double r = step->dt / width;
    // Cells by value through the read-only path: no node writes `cell`'s
    // tensor while this one runs (weft/views/read_only.hpp).
    using Owned = typename std::remove_cvref_t<decltype(*cell)>::Owned;
    const Owned here = read_only<Owned>(*cell);
    const Owned east = force_flux(here, read_only<Owned>(*cell.offset(dim, 1)), Dim, r, gamma);
    const Owned west = force_flux(read_only<Owned>(*cell.offset(dim, -1)), here, Dim, r, gamma);
    auto updated = *next;
    for (std::size_t k = 0; k < Owned::conserved_count; ++k)
      updated.conserved(k) = here.conserved(k) - r * (east.conserved(k) - west.conserved(k));
  }
};

// A kernel as a split() takes it: itself on the host, weft::cuda::kernel on GPUs.
template <bool Gpu, class Kernel>
auto step_kernel(Kernel kernel) {
  if constexpr (Gpu) {
    return cuda::kernel(kernel);
  } else {
    return kernel;
  }
}

// FNV-1a over the bytes of every conserved variable of every cell of a host
// field (i < nx, j < ny): equal hashes, bitwise equal states. euler2d
// --checksum prints it; the benchmarks compare runs with it.
template <class Field>
std::uint64_t state_checksum(const Field& field, std::size_t nx, std::size_t ny) {
  std::uint64_t hash = 1469598103934665603ull;
  for (std::size_t j = 0; j < ny; ++j) {
    for (std::size_t i = 0; i < nx; ++i) {
      const auto cell = field(i, j);
      for (std::size_t k = 0; k < std::remove_cvref_t<decltype(cell)>::conserved_count; ++k) {
        const double value = cell.conserved(k);
        unsigned char bytes[sizeof value];
        std::memcpy(bytes, &value, sizeof value);
        for (unsigned char b : bytes) hash = (hash ^ b) * 1099511628211ull;
      }
    }
  }
  return hash;
}

template <class Layout, bool Gpu = false>
class Solver {
 public:
  using Cell = State<double, Layout>;
  using Field = Tensor<Cell, 2>;

  // Throws std::invalid_argument when the grid cannot be split as asked
  // (and, on GPUs, std::runtime_error when no CUDA device is usable). Over
  // ranks on GPUs each rank's partitions live on GPU local_rank % gpus.
  explicit Solver(const SolverConfig& config)
      : config_(config),
        in_(make_field<Cell>(config, Gpu, 1)),
        out_(make_field<Cell>(config, Gpu, 1)),
        max_wave_speed_(make_reduction_result<double>(0.0)),
        info_(make_step_info()) {
    // The initial state is set on the host (a host twin of the field on
    // GPUs), in the blocks this rank holds.
    if constexpr (Gpu) host_ = make_field<Cell>(config, false, 1);
    const Field& initial = Gpu ? host_ : in_;
    const TensorGeometry<2>& g = initial.geometry();
    for (std::size_t b = 0; b < initial.block_count(); ++b) {
      if (!initial.is_local(b)) continue;
      const Extents<2> origin = g.block_origin(b), extent = g.block_extent(b);
      for (std::size_t j = origin[1]; j < origin[1] + extent[1]; ++j) {
        for (std::size_t i = origin[0]; i < origin[0] + extent[0]; ++i) {
          const Primitive p = initial_state(config.problem, i, j, config.nx, config.ny, config.gamma);
          initial(i, j).set_primitive(p.density, p.velocity_x, p.velocity_y, p.pressure, config.gamma);
        }
      }
    }
    if constexpr (Gpu) deep_copy(in_, host_);
    build_graph();
  }

  // Its graph refers to this solver: it stays where it was made.
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  // Called at the end of every step, on the worker that ran the step's last
  // node: nothing else of the step runs then, so it may read the field.
  void on_step(std::function<void(const StepInfo&)> callback) { on_step_ = std::move(callback); }

  // Runs steps until `max_steps` more have run or the time reaches
  // `end_time` (either may be 0: no limit; not both).
  void run(Executor& executor, long max_steps, double end_time) {
    if (max_steps <= 0 && end_time <= 0.0)
      throw std::invalid_argument("Solver::run: give steps or an end time");
    if (end_time > 0.0 && info_->time >= end_time) return;
    info_->end_time = end_time;
    const long last = max_steps > 0 ? info_->step + max_steps : -1;
    executor
        .run_until(graph_,
                   [this, last, end_time] {
                     return (last >= 0 && info_->step >= last) || (end_time > 0.0 && info_->time >= end_time);
                   })
        .wait()
        .get();
  }

  const StepInfo& info() const noexcept { return *info_; }
  const SolverConfig& config() const noexcept { return config_; }
  const Graph& graph() const noexcept { return graph_; }
  // The conserved state, after the last completed step (on GPUs in GPU
  // memory: sync_host() copies it to host_field(); over ranks, this rank's
  // blocks only: weft::mpi::gather collects them).
  const Field& field() const noexcept { return in_; }
  // On GPUs: copies the field to its host twin, which density() reads; call
  // it between runs or from on_step. Nothing to do on the host.
  void sync_host() {
    if constexpr (Gpu) deep_copy(host_, in_);
  }
  const Field& host_field() const noexcept { return Gpu ? host_ : in_; }
  double density(std::size_t i, std::size_t j) const { return host_field()(i, j).density(); }
  double dx() const noexcept { return cell_size(config_.problem, config_.nx, config_.ny); }

 private:
  // A field of the grid split as configured: in GPU memory, over the
  // configured ranks, or in this process's host memory.
  template <class T>
  static Tensor<T, 2> make_field(const SolverConfig& c, bool gpu_memory, std::size_t padding) {
    const Extents<2> partitions{1, c.partitions}, sub_partitions{1, c.sub_partitions};
    if (gpu_memory && c.ranks != nullptr) {
      // Over ranks: this rank's partitions on GPU local_rank % gpus.
      return Tensor<T, 2>(distributed(c.ranks), CudaMemory::on_devices(c.gpus), partitions, sub_partitions,
                          padding, c.nx, c.ny);
    }
    if (gpu_memory)
      return Tensor<T, 2>(CudaMemory::on_devices(c.gpus), partitions, sub_partitions, padding, c.nx, c.ny);
    if (c.ranks != nullptr)
      return Tensor<T, 2>(distributed(c.ranks), partitions, sub_partitions, padding, c.nx, c.ny);
    return Tensor<T, 2>(partitions, sub_partitions, padding, c.nx, c.ny);
  }

  // GPU kernels read the time step from it, so on GPUs it lives in
  // page-locked host memory, which they can address directly.
  static std::shared_ptr<StepInfo> make_step_info() {
    if constexpr (Gpu) {
      const HostPinnedSpace pinned;
      void* memory = pinned.allocate(sizeof(StepInfo));
      return std::shared_ptr<StepInfo>(new (memory) StepInfo{}, [pinned](StepInfo* p) {
        p->~StepInfo();
        pinned.deallocate(p, sizeof(StepInfo));
      });
    } else {
      return std::make_shared<StepInfo>();
    }
  }

  void build_graph() {
    const double gamma = config_.gamma;
    const double h = dx();
    const ExecutionKind kind = config_.execution;
    const StepInfo* info = info_.get();

    auto max_speed = max_wave_speed_;
    auto state = info_;
    const double cfl = config_.cfl;

    graph_ = Graph(kind);
    graph_.reduce(in_, max_wave_speed_, MaxReducer(), WaveSpeed{gamma}).named("max_wave_speed");
    graph_
        .then(ExecutionKind::Cpu,
              [max_speed, state, cfl, h]() mutable {
                const double fastest = max_speed.value_and_reset();
                if (!(fastest > 0.0)) throw std::runtime_error("euler2d: no wave moves (max wave speed 0)");
                double dt = cfl * h / fastest;
                if (state->end_time > 0.0 && state->time + dt > state->end_time)
                  dt = state->end_time - state->time;
                state->dt = dt;
              })
        .named("time_step");
    graph_.then_boundary(in_, FirstOrderExtrapolation{}).named("boundary_in");
    graph_.then_split(step_kernel<Gpu>(Sweep<0>{}), concurrent_padded_access(in_), out_, info, h, gamma)
        .named("sweep_x");
    graph_.then_boundary(out_, FirstOrderExtrapolation{}).named("boundary_out");
    graph_.then_split(step_kernel<Gpu>(Sweep<1>{}), concurrent_padded_access(out_), in_, info, h, gamma)
        .named("sweep_y");
    graph_
        .then(ExecutionKind::Cpu,
              [this] {
                info_->time += info_->dt;
                ++info_->step;
                if (on_step_) on_step_(*info_);
              })
        .named("advance");
  }

  SolverConfig config_;
  Field in_, out_;
  Field host_;  // on GPUs: the field's host twin (see sync_host)
  ReductionResult<double> max_wave_speed_;
  std::shared_ptr<StepInfo> info_;
  std::function<void(const StepInfo&)> on_step_;
  Graph graph_;
};

}  // namespace weft::euler

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One run of the solver with euler2d's options, its progress line, images,
// VTK output and summary: the whole program after the arguments are parsed. A template
// on where the kernels run, so that main.cpp instantiates the host run and
// gpu_run.cu (compiled by nvcc) the GPU run from the same source, and on
// the ranks it runs on (../ranks.hpp: one process, or MPI ranks under
// mpirun, which only main.cpp instantiates).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <weft/weft.hpp>

#include <nlohmann/json.hpp>

#include "../output_file.hpp"
#include "../ranks.hpp"
#include "exact_riemann.hpp"
#include "options.hpp"
#include "output_names.hpp"
#include "png_image.hpp"
#include "progress.hpp"
#include "quantity.hpp"
#include "solver.hpp"
#include "vtk_image.hpp"

namespace weft::euler {

// Runs each output's write and keeps its failure (a message naming the
// file), so that one failed output does not stop the others.
class OutputFailures {
 public:
  template <class Write>
  bool attempt(Write&& write) {
    try {
      write();
      return true;
    } catch (const std::exception& e) {
      messages_.emplace_back(e.what());
      return false;
    }
  }
  // Prints every failure on stderr; the exit code: 0 if there was none.
  int report() const {
    for (const std::string& m : messages_) std::fprintf(stderr, "euler2d: %s\n", m.c_str());
    return messages_.empty() ? 0 : 1;
  }

 private:
  std::vector<std::string> messages_;
};

// The image of `quantity` over a host field with every block (--png and its frames).
template <class Field>
void write_quantity_png(const std::string& path, const Field& whole, const SolverConfig& config,
                        Quantity quantity) {
  const std::vector<double> values = quantity_values(quantity, whole, config.nx, config.ny, config.gamma);
  const ColourScale scale = quantity_scale(quantity, values);
  write_png(
      path, config.nx, config.ny, [&](std::size_t i, std::size_t j) { return values[j * config.nx + i]; },
      scale, quantity_title(quantity, scale));
}

// --vtk over ranks: every rank writes the piece of the blocks it owns (a
// rank without blocks writes none); rank 0 also the .pvti that places them.
// Whether this rank's files were written.
template <class Field, class Ranks>
bool write_vtk_pieces(const std::string& path, const Field& field, const VtkGrid& grid, double gamma,
                      const Ranks& ranks, OutputFailures& failures) {
  bool written = true;
  if (const std::optional<RowRange> rows = rows_of_rank(field, ranks.rank())) {
    written = failures.attempt([&] {
      write_vti(vtk_piece_name(path, ranks.rank()), grid, *rows, vtk_arrays(field, grid, *rows, gamma));
    });
  }
  if (ranks.root()) {
    written = failures.attempt([&] {
      write_pvti(pvti_name(path), grid, vtk_pieces(field, ranks.size(), path));
    }) && written;
  }
  return written;
}

// The run, on one process (Ranks: weft::examples::OneProcess) or on the
// ranks of an MPI job (MpiRanks, which only the host run takes): every rank
// runs the same steps on its blocks; rank 0 gathers the field for the
// images, the checksum and the accuracy, and prints.
template <class Layout, bool Gpu, class Ranks = weft::examples::OneProcess>
int run_solver(const Options& o, SolverConfig config, const Ranks& ranks = {}) {
  weft::ExecutorConfig ex;
  if (o.threads > 0) ex.cpu_workers = o.threads;
  if constexpr (!Gpu) {
    ex.gpu_workers = 0;
    ex.use_cuda = false;
  }
  weft::Executor executor(ex);
  config.ranks = ranks.group();
  std::optional<Solver<Layout, Gpu>> made;
  ranks.together([&] { made.emplace(config); });  // every rank, or none, goes on
  Solver<Layout, Gpu>& solver = *made;

  const double end_time = o.end_time >= 0.0 ? o.end_time : (config.problem == Problem::sod ? 0.25 : 0.1);
  const double stop_time = o.steps > 0 && o.end_time < 0.0 ? 0.0 : end_time;  // 0: steps only
  const double cells = static_cast<double>(config.nx * config.ny);
  const Quantity quantity = quantity_from_string(o.field).value_or(Quantity::density);  // main checked it
  using Field = typename Solver<Layout, Gpu>::Field;
  // The whole field on rank 0 (an empty tensor on the others). Collective.
  const auto gather = [&] {
    solver.sync_host();
    return ranks.gather(solver.host_field());
  };
  Progress progress(ranks.root() && !o.quiet && isatty(STDERR_FILENO) != 0, cells, o.steps, stop_time);
  OutputFailures failures;
  bool frames = o.png_every > 0;  // until one fails: the run goes on without them
  const auto write_frame = [&] {
    const Field whole = gather();  // on every rank, even after a failed frame: it is collective
    if (ranks.root() && frames) {
      frames = failures.attempt(
          [&] { write_quantity_png(frame_name(o.png, solver.info().step), whole, config, quantity); });
    }
  };
  solver.on_step([&](const StepInfo& info) { progress.update(info); });
  const auto finished = [&] {
    const StepInfo& info = solver.info();
    return (o.steps > 0 && info.step >= o.steps) || (stop_time > 0.0 && info.time >= stop_time);
  };

  if (o.png_every > 0) write_frame();  // the initial state, an animation's first frame; not timed
  const std::string trace = rank_trace_name(o.trace, config.ranks != nullptr ? ranks.rank() : -1);
  if (!trace.empty()) executor.start_trace();
  const auto start = std::chrono::steady_clock::now();
  // In runs of --png-every steps, between which the field is gathered (a
  // gather cannot run inside a node); a run that fails fails on every rank.
  while (!finished()) {
    const long step = solver.info().step;
    long count = o.steps > 0 ? o.steps - step : 0;
    if (o.png_every > 0) {
      const long to_image = o.png_every - step % o.png_every;
      count = count > 0 ? std::min(count, to_image) : to_image;
    }
    ranks.together([&] { solver.run(executor, count, stop_time); });
    if (o.png_every > 0 && solver.info().step % o.png_every == 0) write_frame();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.finish();

  const StepInfo& info = solver.info();
  const bool sod_accuracy = config.problem == Problem::sod && info.time > 0.0;
  const bool vtk_pieces = !o.vtk.empty() && config.ranks != nullptr;  // else one file from the whole field
  const Field whole =
      !o.png.empty() || o.checksum || sod_accuracy || (!o.vtk.empty() && !vtk_pieces) ? gather() : Field();
  if (!trace.empty()) failures.attempt([&] { executor.write_trace(trace); });  // each rank its own
  const VtkGrid grid{config.nx, config.ny, solver.dx(), info.time};
  bool vtk_written =
      vtk_pieces && write_vtk_pieces(o.vtk, solver.host_field(), grid, config.gamma, ranks, failures);
  if (!ranks.root()) return failures.report();  // rank 0 writes the rest and reports

  if (!o.dump_graph.empty()) {
    failures.attempt(
        [&] { weft::examples::write_file(o.dump_graph, solver.graph().to_json().dump(2) + '\n'); });
  }
  const bool png_written =
      !o.png.empty() && failures.attempt([&] { write_quantity_png(o.png, whole, config, quantity); });
  if (!o.vtk.empty() && !vtk_pieces) {
    vtk_written = failures.attempt([&] {
      write_vti(o.vtk, grid, {0, config.ny}, vtk_arrays(whole, grid, {0, config.ny}, config.gamma));
    });
  }
  std::string outputs;
  if (png_written) outputs += "; " + o.field + " image: " + o.png;
  if (vtk_written) outputs += "; VTK: " + (vtk_pieces ? pvti_name(o.vtk) : o.vtk);
  if (o.checksum) {
    char text[48];
    std::snprintf(text, sizeof text, "; checksum %016llx",
                  static_cast<unsigned long long>(state_checksum(whole, config.nx, config.ny)));
    outputs = text + outputs;
  }
  std::string where =
      Gpu ? std::to_string(o.gpus) + " GPU(s)" : std::to_string(executor.cpu_worker_count()) + " threads";
  if (config.ranks != nullptr)
    where = std::to_string(ranks.size()) + (ranks.size() == 1 ? " rank x " : " ranks x ") + where;
  // Sod's tube has an exact solution: how far the run is from it.
  std::string accuracy;
  if (sod_accuracy) {
    const double error =
        sod_l1_density_error(config.nx, config.ny, info.time, config.gamma,
                             [&](std::size_t i, std::size_t j) { return whole(i, j).density(); });
    char text[96];
    std::snprintf(text, sizeof text, "; L1 density error against the exact solution %.3e", error);
    accuracy = text;
  }
  std::printf(
      "euler2d: %s %zux%zu, %zu partitions x %zu sub-partitions, %s layout, %s: %ld steps to t = %.4f in "
      "%.2f s, %.2f Mcells/s%s%s\n",
      o.problem.c_str(), config.nx, config.ny, config.partitions, config.sub_partitions, o.layout.c_str(),
      where.c_str(), info.step, info.time, seconds, cells * static_cast<double>(info.step) / seconds / 1e6,
      accuracy.c_str(), outputs.c_str());
  return failures.report();
}

}  // namespace weft::euler

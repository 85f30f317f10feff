// One run of the solver with euler2d's options, its progress line, images
// and summary: the whole program after the arguments are parsed. A template
// on where the kernels run, so that main.cpp instantiates the host run and
// gpu_run.cu (compiled by nvcc) the GPU run from the same source, and on
// the ranks it runs on (../ranks.hpp: one process, or MPI ranks under
// mpirun, which only main.cpp instantiates).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <weft/weft.hpp>

#include <nlohmann/json.hpp>

#include "../output_file.hpp"
#include "../ranks.hpp"
#include "exact_riemann.hpp"
#include "options.hpp"
#include "png_image.hpp"
#include "solver.hpp"

namespace weft::euler {

// Progress on a terminal: rewritten in place at most a few times a second.
class Progress {
 public:
  Progress(bool enabled, double cells) : enabled_(enabled), cells_(cells) {}
  void update(const weft::euler::StepInfo& info) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "\rstep %6ld  t %.5f  dt %.3e  %7.2f Mcells/s ", info.step, info.time, info.dt,
                 cells_ * static_cast<double>(info.step) / seconds / 1e6);
    std::fflush(stderr);
  }
  void finish() {
    if (enabled_) std::fputs("\r\033[K", stderr);
  }

 private:
  bool enabled_;
  double cells_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_{};
};

// The image --png-every writes at `step`.
inline std::string periodic_image_name(long step) {
  char name[64];
  std::snprintf(name, sizeof name, "euler2d_density_%06ld.png", step);
  return name;
}

// The trace file of `rank` of a run over ranks: path with ".RANK" before its
// extension (t.json: t.0.json, t.1.json, ..., which weft trace merge
// joins); path itself for one process (rank < 0).
inline std::string rank_trace_name(const std::string& path, int rank) {
  if (rank < 0 || path.empty()) return path;
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  const std::size_t at = has_extension ? dot : path.size();
  return path.substr(0, at) + "." + std::to_string(rank) + path.substr(at);
}

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

// FNV-1a over the bytes of every conserved variable of every cell.
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
  using Field = typename Solver<Layout, Gpu>::Field;
  // The whole field on rank 0 (an empty tensor on the others). Collective.
  const auto gather = [&] {
    solver.sync_host();
    return ranks.gather(solver.host_field());
  };
  const auto density_image = [&](const Field& whole, const std::string& path) {
    // Log scale: the bubble (0.1) and the shocked gas (about 4.5, more where
    // it is compressed further) both stay readable.
    write_png(path, config.nx, config.ny, [&](std::size_t i, std::size_t j) { return whole(i, j).density(); },
              {0.1, 8.0, true});
  };
  Progress progress(ranks.root() && !o.quiet && isatty(STDERR_FILENO) != 0, cells);
  OutputFailures failures;
  bool periodic_images = o.png_every > 0;  // until one fails: the run goes on without them
  solver.on_step([&](const StepInfo& info) { progress.update(info); });
  const auto finished = [&] {
    const StepInfo& info = solver.info();
    return (o.steps > 0 && info.step >= o.steps) || (stop_time > 0.0 && info.time >= stop_time);
  };

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
    if (o.png_every > 0 && solver.info().step % o.png_every == 0) {
      const Field whole = gather();
      if (ranks.root() && periodic_images) {
        periodic_images =
            failures.attempt([&] { density_image(whole, periodic_image_name(solver.info().step)); });
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.finish();

  const StepInfo& info = solver.info();
  const bool sod_accuracy = config.problem == Problem::sod && info.time > 0.0;
  const Field whole = !o.png.empty() || o.checksum || sod_accuracy ? gather() : Field();
  if (!trace.empty()) failures.attempt([&] { executor.write_trace(trace); });  // each rank its own
  if (!ranks.root()) return failures.report();  // rank 0 writes the rest and reports

  if (!o.dump_graph.empty()) {
    failures.attempt(
        [&] { weft::examples::write_file(o.dump_graph, solver.graph().to_json().dump(2) + '\n'); });
  }
  const bool png_written = !o.png.empty() && failures.attempt([&] { density_image(whole, o.png); });
  std::string checksum;
  if (o.checksum) {
    char text[48];
    std::snprintf(text, sizeof text, "; checksum %016llx",
                  static_cast<unsigned long long>(state_checksum(whole, config.nx, config.ny)));
    checksum = text;
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
      "%.2f s, %.2f Mcells/s%s%s%s%s\n",
      o.problem.c_str(), config.nx, config.ny, config.partitions, config.sub_partitions, o.layout.c_str(),
      where.c_str(), info.step, info.time, seconds, cells * static_cast<double>(info.step) / seconds / 1e6,
      accuracy.c_str(), checksum.c_str(), png_written ? "; density image: " : "",
      png_written ? o.png.c_str() : "");
  return failures.report();
}

}  // namespace weft::euler

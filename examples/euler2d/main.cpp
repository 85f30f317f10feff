// euler2d: weft's flagship. The 2D Euler equations (FORCE fluxes, dimensional
// splitting) as a weft graph over partitions of the domain, one per (virtual)
// device; by default Ripple's Mach 3.81 shock hitting a low-density bubble.
//
//   euler2d                                   # 800x400, 4 partitions, up to t = 0.2
//   euler2d --problem sod --size 400x8 --end-time 0.25
//   euler2d --partitions 8 --layout contiguous --steps 100 --dump-graph g.json --trace t.json
//
// Writes the density as a PNG (--png, and every K steps with --png-every),
// shows progress on a terminal and ends with a one-line summary. Bad
// arguments exit with code 2, a failed run with 1.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

#include <weft/weft.hpp>

#include "exact_riemann.hpp"
#include "png_image.hpp"
#include "solver.hpp"

namespace {

constexpr int kExitRunFailed = 1;
constexpr int kExitUsage = 2;

struct Options {
  std::string problem = "shock-bubble";
  std::string size = "800x400";
  std::size_t partitions = 4, sub_partitions = 1;
  long steps = 0;
  double end_time = -1.0;  // < 0: the problem's default
  std::string layout = "strided";
  int threads = 0;  // 0: the machine's cores
  int gpus = 0;
  double cfl = 0.9;
  std::string png = "euler2d_density.png";
  long png_every = 0;
  std::string dump_graph, trace;
  bool quiet = false;
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

weft::euler::SolverConfig solver_config(const Options& o) {
  weft::euler::SolverConfig c;
  const auto problem = weft::euler::problem_from_string(o.problem);
  if (!problem) throw UsageError("--problem: '" + o.problem + "' is not shock-bubble or sod");
  c.problem = *problem;
  unsigned long nx = 0, ny = 0;
  char tail = 0;
  if (std::sscanf(o.size.c_str(), "%lux%lu%c", &nx, &ny, &tail) != 2 || nx == 0 || ny == 0)
    throw UsageError("--size: '" + o.size + "' is not NXxNY with positive NX and NY (e.g. 800x400)");
  c.nx = nx;
  c.ny = ny;
  if (o.partitions == 0) throw UsageError("--partitions: must be at least 1");
  if (o.sub_partitions == 0) throw UsageError("--sub-partitions: must be at least 1");
  if (ny < o.partitions * o.sub_partitions) {
    throw UsageError("--size: " + std::to_string(ny) + " rows cannot be split into " +
                     std::to_string(o.partitions) + " partitions x " + std::to_string(o.sub_partitions) +
                     " sub-partitions (the domain is split along y; need at least one row per block)");
  }
  if (!(o.cfl > 0.0 && o.cfl <= 1.0)) throw UsageError("--cfl: must be in (0, 1]");
  c.partitions = o.partitions;
  c.sub_partitions = o.sub_partitions;
  c.cfl = o.cfl;
  return c;
}

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

template <class Layout>
int run(const Options& o, const weft::euler::SolverConfig& config) {
  weft::ExecutorConfig ex;
  if (o.threads > 0) ex.cpu_workers = o.threads;
  ex.gpu_workers = 0;
  ex.use_cuda = false;
  weft::Executor executor(ex);
  weft::euler::Solver<Layout> solver(config);

  const double end_time =
      o.end_time >= 0.0 ? o.end_time : (config.problem == weft::euler::Problem::sod ? 0.25 : 0.1);
  const double cells = static_cast<double>(config.nx * config.ny);
  const auto density_image = [&](const std::string& path) {
    // Log scale: the bubble (0.1) and the shocked gas (about 4.5, more where
    // it is compressed further) both stay readable.
    weft::euler::write_png(path, config.nx, config.ny,
                           [&](std::size_t i, std::size_t j) { return solver.density(i, j); },
                           {0.1, 8.0, true});
  };
  Progress progress(!o.quiet && isatty(STDERR_FILENO) != 0, cells);
  solver.on_step([&](const weft::euler::StepInfo& info) {
    progress.update(info);
    if (o.png_every > 0 && info.step % o.png_every == 0) {
      char name[64];
      std::snprintf(name, sizeof name, "euler2d_density_%06ld.png", info.step);
      density_image(name);
    }
  });

  if (!o.trace.empty()) executor.start_trace();
  const auto start = std::chrono::steady_clock::now();
  solver.run(executor, o.steps, o.steps > 0 && o.end_time < 0.0 ? 0.0 : end_time);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.finish();
  if (!o.trace.empty()) executor.write_trace(o.trace);
  if (!o.dump_graph.empty()) {
    std::ofstream file(o.dump_graph);
    if (!(file << solver.graph().to_json().dump(2) << '\n'))
      throw std::runtime_error("cannot write '" + o.dump_graph + "'");
  }
  if (!o.png.empty()) density_image(o.png);

  const weft::euler::StepInfo& info = solver.info();
  // Sod's tube has an exact solution: how far the run is from it.
  std::string accuracy;
  if (config.problem == weft::euler::Problem::sod && info.time > 0.0) {
    const double error =
        weft::euler::sod_l1_density_error(config.nx, config.ny, info.time, config.gamma,
                                          [&](std::size_t i, std::size_t j) { return solver.density(i, j); });
    char text[96];
    std::snprintf(text, sizeof text, "; L1 density error against the exact solution %.3e", error);
    accuracy = text;
  }
  std::printf(
      "euler2d: %s %zux%zu, %zu partitions x %zu sub-partitions, %s layout, %d threads: %ld steps to t = "
      "%.4f "
      "in %.2f s, %.2f Mcells/s%s%s%s\n",
      o.problem.c_str(), config.nx, config.ny, config.partitions, config.sub_partitions, o.layout.c_str(),
      executor.cpu_worker_count(), info.step, info.time, seconds,
      cells * static_cast<double>(info.step) / seconds / 1e6, accuracy.c_str(),
      o.png.empty() ? "" : "; density image: ", o.png.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app("euler2d: the 2D Euler equations as a weft graph (Ripple's shock-bubble, or Sod's tube)",
               "euler2d");
  app.add_option("--problem", o.problem, "shock-bubble or sod")->capture_default_str();
  app.add_option("--size", o.size, "cells NXxNY (square cells; shock-bubble: height 1, sod: length 1)")
      ->capture_default_str();
  app.add_option("--partitions", o.partitions, "device partitions along y (virtual devices on the CPU)")
      ->capture_default_str();
  app.add_option("--sub-partitions", o.sub_partitions, "blocks per partition along y")->capture_default_str();
  app.add_option("--steps", o.steps, "stop after this many steps (with no --end-time: only this)");
  app.add_option("--end-time", o.end_time, "stop at this time (default: 0.1 shock-bubble, 0.25 sod)");
  app.add_option("--layout", o.layout, "strided (struct of arrays) or contiguous (array of structs)")
      ->capture_default_str();
  app.add_option("--threads", o.threads, "CPU worker threads (default: the machine's cores)");
  app.add_option("--gpus", o.gpus, "run on this many CUDA GPUs");
  app.add_option("--cfl", o.cfl, "CFL number per sweep, in (0, 1]")->capture_default_str();
  app.add_option("--png", o.png, "density image at the end ('' for none)")->capture_default_str();
  app.add_option("--png-every", o.png_every, "also write euler2d_density_STEP.png every K steps");
  app.add_option("--dump-graph", o.dump_graph, "write the step graph as JSON");
  app.add_option("--trace", o.trace, "write an execution trace (Chrome trace-event JSON)");
  app.add_flag("--quiet", o.quiet, "no progress line");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  try {
    const weft::euler::SolverConfig config = solver_config(o);
    if (o.layout != "strided" && o.layout != "contiguous")
      throw UsageError("--layout: '" + o.layout + "' is not strided or contiguous");
    if (o.steps < 0) throw UsageError("--steps: must not be negative");
    if (o.png_every < 0) throw UsageError("--png-every: must not be negative");
    if (o.steps == 0 && o.end_time == 0.0) throw UsageError("--end-time 0 needs --steps");
    if (o.threads < 0) throw UsageError("--threads: must not be negative");
    if (o.gpus < 0) throw UsageError("--gpus: must not be negative");
    if (o.gpus > 0) {
      const weft::CudaDiscovery found = weft::discover_cuda_devices();
      if (static_cast<std::size_t>(o.gpus) > found.devices.size()) {
        throw UsageError("--gpus " + std::to_string(o.gpus) + ": only " +
                         std::to_string(found.devices.size()) + " CUDA device(s) found" +
                         (found.note.empty() ? "" : " (" + found.note + ")"));
      }
      throw UsageError(
          "--gpus: this build runs tensor kernels on CPU workers only; the CUDA kernel backend "
          "is not part of it yet");
    }
    return o.layout == "strided" ? run<weft::StridedView>(o, config) : run<weft::ContiguousView>(o, config);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "euler2d: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "euler2d: %s\n", e.what());
    return kExitRunFailed;
  }
}

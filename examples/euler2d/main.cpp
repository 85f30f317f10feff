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

#include "gpu_run.hpp"
#include "options.hpp"
#include "run_solver.hpp"

namespace {

using weft::euler::Options;
using weft::euler::run_on_gpus;
using weft::euler::run_solver;
using weft::euler::UsageError;

constexpr int kExitRunFailed = 1;
constexpr int kExitUsage = 2;

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
  app.add_flag("--checksum", o.checksum,
               "end the summary with a hash of the final state (bit-for-bit comparisons)");
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
      return run_on_gpus(o, config);
    }
    return o.layout == "strided" ? run_solver<weft::StridedView, false>(o, config)
                                 : run_solver<weft::ContiguousView, false>(o, config);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "euler2d: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "euler2d: %s\n", e.what());
    return kExitRunFailed;
  }
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// euler2d: weft's flagship. The 2D Euler equations (FORCE fluxes, dimensional
// splitting) as a weft graph over partitions of the domain, one per (virtual)
// device; by default Ripple's Mach 3.81 shock hitting a low-density bubble.
//
//   euler2d                                   # 800x400, 4 partitions, up to t = 0.2
//   euler2d --problem sod --size 400x8 --end-time 0.25
//   euler2d --partitions 8 --layout contiguous --steps 100 --dump-graph g.json --trace t.json
//   WEFT_CUDA_LOGICAL_DEVICES=2 euler2d --gpus 2     # the multi-GPU path on one GPU
//   mpirun -np 2 euler2d --partitions 8 --checksum   # the partitions over 2 ranks
//
// Writes an image of the density, pressure, speed or schlieren (--field)
// with a colour bar that gives its range (--png; with --png-every K also
// frames out/run_000000.png, out/run_000040.png, ... from step 0), the state
// as VTK image data for ParaView (--vtk), shows progress, percent done and
// an ETA on a terminal, and ends with a one-line summary. Bad arguments exit
// with code 2; a failed run, or an output that cannot be written (each one
// is checked before the run starts), with 1.
//
// Under mpirun (in a build with MPI), the partitions are spread over the
// ranks (with --gpus N, each rank's on GPU local_rank % N); rank 0 writes the outputs
// and prints, except the traces: --trace t.json gives t.0.json, t.1.json,
// ... (one a rank, for weft trace merge), and VTK: --vtk run.vti gives
// run_rank0.vti, run_rank1.vti, ... (each rank's blocks) and run.pvti. The
// checksum is bitwise that of one process with the same partitions.
#include <CLI/CLI.hpp>

#include <charconv>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include <weft/weft.hpp>

#include "../cli_support.hpp"
#include "../gpu_count.hpp"
#include "../memory_check.hpp"
#include "../output_file.hpp"
#include "../ranks.hpp"
#if WEFT_EXAMPLES_MPI
#include "../mpi_ranks.hpp"
#endif
#include "gpu_run.hpp"
#include "options.hpp"
#include "quantity.hpp"
#include "run_solver.hpp"
#include "vtk_image.hpp"

namespace {

using weft::euler::Options;
using weft::euler::run_on_gpus;
using weft::euler::run_solver;
using weft::euler::UsageError;
using weft::examples::finite_number;
using weft::examples::whole_number;

constexpr std::size_t kMaxBlocks = 4096;  // partitions, and sub-partitions of each

// NXxNY with positive decimal NX and NY, nothing before, between or after.
bool parse_size(const std::string& text, std::size_t& nx, std::size_t& ny) {
  const std::size_t x = text.find('x');
  if (x == std::string::npos) return false;
  const auto whole = [](const char* first, const char* last, std::size_t& value) {
    const auto [end, error] = std::from_chars(first, last, value);
    return error == std::errc{} && end == last && value > 0;
  };
  return whole(text.data(), text.data() + x, nx) && whole(text.data() + x + 1, text.data() + text.size(), ny);
}

weft::euler::SolverConfig solver_config(const Options& o) {
  weft::euler::SolverConfig c;
  const auto problem = weft::euler::problem_from_string(o.problem);
  if (!problem) throw UsageError("--problem: '" + o.problem + "' is not shock-bubble or sod");
  c.problem = *problem;
  std::size_t nx = 0, ny = 0;
  if (!parse_size(o.size, nx, ny))
    throw UsageError("--size: '" + o.size + "' is not NXxNY with positive whole NX and NY (e.g. 800x400)");
  c.nx = nx;
  c.ny = ny;
  // Both are at most kMaxBlocks (the options' checks): the product cannot wrap.
  if (ny < o.partitions * o.sub_partitions) {
    throw UsageError("--size: " + std::to_string(ny) + " rows cannot be split into " +
                     std::to_string(o.partitions) + " partitions x " + std::to_string(o.sub_partitions) +
                     " sub-partitions (the domain is split along y; need at least one row per block)");
  }
  c.partitions = o.partitions;
  c.sub_partitions = o.sub_partitions;
  c.cfl = o.cfl;
  return c;
}

// What one process holds: its share of the solver's padded fields (two, or
// one host copy when the steps run on GPUs) and, on rank 0 when an output
// needs it, the gathered field and the images or VTK arrays made from it.
double euler2d_bytes(const weft::euler::SolverConfig& c, const Options& o, int ranks, bool root) {
  constexpr double cell = 4 * sizeof(double);  // density, energy, two momenta
  const double nx = static_cast<double>(c.nx), ny = static_cast<double>(c.ny);
  const double blocks = static_cast<double>(c.partitions * c.sub_partitions);
  const double fields = (o.gpus > 0 ? 1.0 : 2.0) * cell * (nx + 2.0) * (ny + 2.0 * blocks) / ranks;
  const bool gathers =
      !o.png.empty() || o.checksum || !o.vtk.empty() || c.problem == weft::euler::Problem::sod;
  return fields + (root && gathers ? (cell + 3 * sizeof(double)) * nx * ny : 0.0);
}

void check_options(const Options& o) {
  if (o.layout != "strided" && o.layout != "contiguous")
    throw UsageError("--layout: '" + o.layout + "' is not strided or contiguous");
  if (o.steps == 0 && o.end_time == 0.0) throw UsageError("--end-time 0 needs --steps");
  if (o.png_every > 0 && o.png.empty())
    throw UsageError("--png-every: the frames are named after --png, which is ''; give --png NAME.png");
  if (!o.vtk.empty() && (o.vtk.size() < 5 || o.vtk.compare(o.vtk.size() - 4, 4, ".vti") != 0)) {
    throw UsageError("--vtk: '" + o.vtk +
                     "' does not end in .vti (VTK image data; ParaView picks its reader by the extension)");
  }
}

// Every output is checked before the run (weft::examples::check_writable
// leaves nothing behind), so that a bad path fails now, not after the run.
// Over ranks, rank 0 writes every output but the traces, one a rank
// (rank_trace_name) and the VTK pieces (vtk_piece_name); rank < 0: one
// process.
void check_outputs(const Options& o, int rank) {
  const std::string trace = weft::euler::rank_trace_name(o.trace, rank);
  std::vector<std::string> paths{trace};
  if (rank <= 0) {
    paths = {o.png, trace, o.dump_graph};
    if (o.png_every > 0) paths.push_back(weft::euler::frame_name(o.png, 0));
  }
  if (!o.vtk.empty()) paths.push_back(rank < 0 ? o.vtk : weft::euler::vtk_piece_name(o.vtk, rank));
  if (rank == 0 && !o.vtk.empty()) paths.push_back(weft::euler::pvti_name(o.vtk));
  weft::examples::check_all_writable(paths);
}

// CLI11's check of --field: one of the quantities quantity.hpp computes.
CLI::Validator quantity_name() {
  return CLI::Validator(
      [](std::string& name) -> std::string {
        if (weft::euler::quantity_from_string(name)) return {};
        return "'" + name + "' is not " + std::string(weft::euler::kQuantityNames);
      },
      "density|pressure|velocity|schlieren");
}

// euler2d's options, into `o`.
void add_options(CLI::App& app, Options& o) {
  app.add_option("--problem", o.problem, "shock-bubble or sod")->capture_default_str();
  app.add_option("--size", o.size, "cells NXxNY (square cells; shock-bubble: height 1, sod: length 1)")
      ->capture_default_str();
  app.add_option("--partitions", o.partitions, "device partitions along y (virtual devices on the CPU)")
      ->transform(whole_number<std::size_t>(1, kMaxBlocks))
      ->capture_default_str();
  app.add_option("--sub-partitions", o.sub_partitions, "blocks per partition along y")
      ->transform(whole_number<std::size_t>(1, kMaxBlocks))
      ->capture_default_str();
  app.add_option("--steps", o.steps, "stop after this many steps (with no --end-time: only this)")
      ->transform(whole_number<long>(0));
  app.add_option("--end-time", o.end_time, "stop at this time (default: 0.1 shock-bubble, 0.25 sod)")
      ->transform(finite_number(0.0, std::numeric_limits<double>::max()));
  app.add_option("--layout", o.layout, "strided (struct of arrays) or contiguous (array of structs)")
      ->capture_default_str();
  app.add_option("--threads", o.threads, "CPU worker threads (default: the machine's cores)")
      ->transform(whole_number<int>(1, weft::examples::kMaxThreads));
  app.add_option("--gpus", o.gpus,
                 "run on this many CUDA GPUs (default: none, run on the CPU); with "
                 "WEFT_CUDA_LOGICAL_DEVICES=N, up to N logical devices on the GPUs present")
      ->transform(whole_number<int>(0, 1024));
  app.add_option("--cfl", o.cfl, "CFL number per sweep")
      ->transform(finite_number(0.0, 1.0, /*low_open=*/true))
      ->capture_default_str();
  char schlieren[64];
  std::snprintf(schlieren, sizeof schlieren, "exp(-%g |grad rho| / max |grad rho|)",
                weft::euler::kSchlierenK);
  app.add_option("--field", o.field,
                 "what the images show: density, pressure, velocity (the speed) or schlieren (" +
                     std::string(schlieren) +
                     ", shocks dark); a colour bar under the field gives the range, on a log scale for "
                     "density and pressure")
      ->check(quantity_name())
      ->capture_default_str();
  app.add_option("--png", o.png, "image at the end (default: euler2d_FIELD.png; '' for none)");
  app.add_option("--png-every", o.png_every,
                 "also write a frame at step 0 and every K steps, named after --png: out/run.png gives "
                 "out/run_000000.png, out/run_000010.png, ... for K = 10")
      ->transform(whole_number<long>(0));
  app.add_option("--vtk", o.vtk,
                 "write the final state as VTK image data, FILE.vti (cells: density, pressure, velocity; for "
                 "ParaView); under mpirun one FILE_rank<r>.vti a rank and FILE.pvti, which opens them all");
  app.add_option("--dump-graph", o.dump_graph, "write the step graph as JSON");
  app.add_option("--trace", o.trace,
                 "write an execution trace (Chrome trace-event JSON; under mpirun one a rank: t.json gives "
                 "t.0.json, t.1.json, ...)");
  weft::examples::add_memory_check_flag(app, o.ignore_memory_limit);
  app.add_flag("--quiet", o.quiet,
               "no progress line (step, time, percent done and ETA, shown on a terminal)");
  app.add_flag("--checksum", o.checksum,
               "end the summary with a hash of the final state (bit-for-bit comparisons)");
  app.footer(
      "Every output file is checked before the run starts. Exit codes: 0 success, 1 the run or an output "
      "failed, 2 usage error.");
}

// Ranks: weft::examples::OneProcess, or MpiRanks under mpirun.
template <class Ranks>
int euler2d(int argc, char** argv, const Ranks& ranks) {
  Options o;
  CLI::App app("euler2d: the 2D Euler equations as a weft graph (Ripple's shock-bubble, or Sod's tube)",
               "euler2d");
  add_options(app, o);
  if (const auto code = weft::examples::parse(app, argc, argv, /*quiet=*/!ranks.root())) return *code;
  if (app.count("--png") == 0) o.png = "euler2d_" + o.field + ".png";
  weft::euler::SolverConfig config;
  ranks.together([&] {  // each rank checks the outputs it writes
    config = solver_config(o);
    check_options(o);
    weft::examples::check_gpu_count(o.gpus);
    check_outputs(o, ranks.group() != nullptr ? ranks.rank() : -1);
    weft::examples::check_fits_in_memory(
        "the fields of " + o.size + " cells" + (ranks.group() != nullptr ? " on this rank" : ""),
        euler2d_bytes(config, o, ranks.size(), ranks.root()), o.ignore_memory_limit);
  });
  if (o.gpus > 0) return run_on_gpus(o, config, ranks);  // over ranks: each on GPU local_rank % --gpus
  return o.layout == "strided" ? run_solver<weft::StridedView, false>(o, config, ranks)
                               : run_solver<weft::ContiguousView, false>(o, config, ranks);
}

}  // namespace

int main(int argc, char** argv) {
#if WEFT_EXAMPLES_MPI
  if (weft::examples::launched_by_mpi()) {
    return weft::examples::run_main_on_ranks("euler2d", argc, argv,
                                             [&](const auto& ranks) { return euler2d(argc, argv, ranks); });
  }
#endif
  return weft::examples::run_main("euler2d",
                                  [&] { return euler2d(argc, argv, weft::examples::OneProcess{}); });
}

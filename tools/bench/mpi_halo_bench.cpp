// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// weft-mpi-bench: the flagship's halo cost over MPI (issue 17). Run it
// through tools/bench/mpi-halo, which starts it under mpiexec as 1 rank x
// 2 workers and 2 ranks x 1 worker, alternately, and prints the ratio.
//
// One process of the job: Ripple's shock bubble stepped by weft's Solver
// (examples/euler2d) over `--partitions` partitions along y, the fields
// distributed over the ranks (or not, with one rank and no --distributed).
// A warm-up step (it lowers the graph and opens the channel), then
// `--steps` timed steps. Rank 0 prints one JSON line: cells per second, and
// the bytes of data messages per step, counted by the session on every rank
// and summed, beside the analytic halo volume:
//
//   per step, 2 padded sweeps x 2 directions x (neighbouring blocks on
//   different ranks) x nx cells x the cell's bytes (one row of padding),
//   plus each block's partial of the wave-speed maximum (8 bytes) to every
//   other rank.
//
// A count that differs from the analytic volume exits 1. Options: --size
// NXxNY (800x400), --partitions (8), --threads (1), --steps (50), --layout
// strided|contiguous, --distributed (distribute over one rank too: the cost
// of the pass hand-off to the progress thread alone).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <mpi.h>

#include <weft/mpi/session.hpp>
#include <weft/weft.hpp>

#include "solver.hpp"

namespace {

struct Options {
  std::size_t nx = 800, ny = 400, partitions = 8;
  int threads = 1;
  long steps = 50;
  bool distributed = false;
  bool strided = true;
};

[[noreturn]] void usage(const std::string& message) {
  std::fprintf(stderr, "weft-mpi-bench: %s\n", message.c_str());
  std::exit(2);
}

long number(const char* text, const char* option) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 1)
    usage(std::string(option) + ": '" + text + "' is not a positive number");
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    const auto value = [&] {
      if (k + 1 >= argc) usage(a + " needs a value");
      return argv[++k];
    };
    if (a == "--size") {
      const std::string v = value();
      const auto x = v.find('x');
      if (x == std::string::npos) usage("--size: expected NXxNY");
      o.nx = static_cast<std::size_t>(number(v.substr(0, x).c_str(), "--size"));
      o.ny = static_cast<std::size_t>(number(v.substr(x + 1).c_str(), "--size"));
    } else if (a == "--partitions") {
      o.partitions = static_cast<std::size_t>(number(value(), "--partitions"));
    } else if (a == "--threads") {
      o.threads = static_cast<int>(number(value(), "--threads"));
    } else if (a == "--steps") {
      o.steps = number(value(), "--steps");
    } else if (a == "--layout") {
      const std::string v = value();
      if (v != "strided" && v != "contiguous") usage("--layout: strided or contiguous");
      o.strided = v == "strided";
    } else if (a == "--distributed") {
      o.distributed = true;
    } else {
      usage("unknown option '" + a + "' (see the comment at the top of tools/bench/mpi_halo_bench.cpp)");
    }
  }
  return o;
}

template <class Layout>
int run(const weft::mpi::Session& mpi, const Options& o) {
  weft::euler::SolverConfig config;
  config.nx = o.nx;
  config.ny = o.ny;
  config.partitions = o.partitions;
  if (o.distributed || mpi.size() > 1) config.ranks = mpi.world();
  weft::Executor executor(weft::ExecutorConfig::cpu_only(o.threads));
  weft::euler::Solver<Layout> solver(config);
  solver.run(executor, 1, 0.0);  // lowers the graph, opens the channel
  const weft::mpi::Session::MessageCounts before = mpi.message_counts();
  const auto start = std::chrono::steady_clock::now();
  solver.run(executor, o.steps, 0.0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const weft::mpi::Session::MessageCounts after = mpi.message_counts();
  unsigned long long bytes = after.bytes_sent - before.bytes_sent;
  double slowest = seconds;
  mpi.call([&] {
    MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  });
  // The analytic volume (see the top).
  const auto& field = solver.field();
  unsigned long long crossings = 0;
  if (config.ranks != nullptr)
    for (std::size_t b = 0; b + 1 < field.block_count(); ++b)
      crossings += field.owner_of(b) != field.owner_of(b + 1);
  const auto cell_bytes = static_cast<unsigned long long>(
      weft::element_storage<typename weft::euler::Solver<Layout>::Cell>::element_bytes);
  const auto ranks = static_cast<unsigned long long>(mpi.size());
  const unsigned long long analytic =
      2 * 2 * crossings * o.nx * cell_bytes + field.block_count() * (ranks - 1) * sizeof(double);
  const unsigned long long measured = bytes / static_cast<unsigned long long>(o.steps);
  if (mpi.rank() == 0) {
    std::printf(
        "{\"ranks\": %d, \"threads\": %d, \"size\": \"%zux%zu\", \"partitions\": %zu, \"layout\": \"%s\", "
        "\"steps\": %ld, \"seconds\": %.4f, \"cells_per_second\": %.4e, \"bytes_per_step\": %llu, "
        "\"analytic_bytes_per_step\": %llu}\n",
        mpi.size(), o.threads, o.nx, o.ny, o.partitions, o.strided ? "strided" : "contiguous", o.steps,
        slowest, static_cast<double>(o.nx * o.ny) * static_cast<double>(o.steps) / slowest, measured,
        analytic);
  }
  if (measured * static_cast<unsigned long long>(o.steps) != bytes || measured != analytic) {
    if (mpi.rank() == 0)
      std::fprintf(stderr,
                   "weft-mpi-bench: %llu bytes of messages per step, the analytic halo volume is %llu\n",
                   measured, analytic);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  weft::mpi::Session mpi(argc, argv);
  const Options o = parse(argc, argv);
  try {
    return o.strided ? run<weft::StridedView>(mpi, o) : run<weft::ContiguousView>(mpi, o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-mpi-bench: rank %d: %s\n", mpi.rank(), e.what());
    return 1;
  }
}

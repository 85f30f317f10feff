// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// 2D heat diffusion as a weft graph over 4 virtual devices.
//
// The square is split along y into one partition per device. Each step
// loads the insulated walls (zero-gradient padding at the edges), copies
// each partition's edge rows into its neighbours' padding, and updates every
// cell from its four neighbours into the other buffer; two steps make one
// run of the graph. The result is checked against the same arithmetic on a
// plain array, and the graph is written as JSON.
//
//   heat2d [cells per side, default 256] [steps, default 200] [graph json, default heat2d_graph.json]
//   mpirun -np 2 heat2d 256 200      # the 4 partitions over 2 ranks; rank 0 checks and prints
//
// Bad arguments exit with code 2; a failed run (no memory for the cells, an
// unwritable graph file) exits with 1.
#include <weft/weft.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "memory_check.hpp"
#include "output_file.hpp"
#include "ranks.hpp"
#if WEFT_EXAMPLES_MPI
#include "mpi_ranks.hpp"
#endif

namespace {

constexpr double kAlpha = 0.2;  // diffusion number: stable below 0.25
constexpr std::size_t kDevices = 4;

// One explicit step at a cell: the same expression the reference uses.
constexpr auto diffuse = [](auto& in, auto& out) {
  *out = *in + kAlpha * (*in.offset(weft::dim_x, -1) + *in.offset(weft::dim_x, 1) +
                         *in.offset(weft::dim_y, -1) + *in.offset(weft::dim_y, 1) - 4.0 * *in);
};

double initial(std::size_t i, std::size_t j, std::size_t n) {
  const bool hot = i > n / 3 && i < n / 2 && j > n / 4 && j < 2 * n / 3;
  return hot ? 100.0 : 0.0;
}

// The reference: a padded plain array, the same steps.
std::vector<double> serial_heat(std::size_t n, int steps) {
  const std::size_t w = n + 2;
  // (n + 2)^2 doubles: beyond 2^29 cells a side the count would wrap around.
  if (n >= (std::size_t{1} << 29))
    throw std::length_error("the serial reference cannot hold " + std::to_string(n) + "^2 cells");
  std::vector<double> a(w * w, 0.0), b(w * w, 0.0);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < n; ++i) a[(j + 1) * w + i + 1] = initial(i, j, n);
  for (int s = 0; s < steps; ++s) {
    for (std::size_t k = 1; k <= n; ++k) {  // insulated walls
      a[k * w] = a[k * w + 1];
      a[k * w + n + 1] = a[k * w + n];
      a[k] = a[w + k];
      a[(n + 1) * w + k] = a[n * w + k];
    }
    for (std::size_t j = 1; j <= n; ++j) {
      for (std::size_t i = 1; i <= n; ++i) {
        const double c = a[j * w + i];
        b[j * w + i] = c + kAlpha * (a[j * w + i - 1] + a[j * w + i + 1] + a[(j - 1) * w + i] +
                                     a[(j + 1) * w + i] - 4.0 * c);
      }
    }
    a.swap(b);
  }
  std::vector<double> out(n * n);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < n; ++i) out[j * n + i] = a[(j + 1) * w + i + 1];
  return out;
}

// What one process holds: its share of the two padded fields and, on the
// rank that checks, the gathered field and the serial reference (two padded
// arrays and its result).
double heat2d_bytes(std::size_t n, int ranks, bool root) {
  const double side = static_cast<double>(n), cell = sizeof(double);
  const double fields = 2.0 * cell * (side + 2.0) * (side + 2.0 * kDevices) / static_cast<double>(ranks);
  return fields + (root ? cell * (2.0 * side * side + 2.0 * (side + 2.0) * (side + 2.0)) : 0.0);
}

// Ranks: weft::examples::OneProcess, or MpiRanks under mpirun.
template <class Ranks>
int example_main(int argc, char** argv, const Ranks& ranks) {
  std::size_t n = 256;
  int steps = 200;
  std::string json_path = "heat2d_graph.json";
  CLI::App app(
      "heat2d: 2D heat diffusion as a weft graph over 4 virtual devices, checked against a serial loop",
      "heat2d");
  app.add_option("cells", n, "cells per side")
      ->transform(weft::examples::whole_number<std::size_t>(kDevices))
      ->capture_default_str();
  app.add_option("steps", steps, "time steps, an even number")
      ->transform(weft::examples::whole_number<int>(2))
      ->capture_default_str();
  app.add_option("graph", json_path, "where to write the graph as JSON")->capture_default_str();
  bool ignore_memory_limit = false;
  weft::examples::add_memory_check_flag(app, ignore_memory_limit);
  if (const auto code = weft::examples::parse(app, argc, argv, /*quiet=*/!ranks.root())) return *code;
  // Split along y: partition boundaries are whole rows, contiguous to copy.
  // Under mpirun, each rank holds its partitions' blocks.
  weft::Tensor<double, 2> a, b;
  ranks.together([&] {  // every rank goes on, or none
    if (steps % 2 != 0)
      throw weft::examples::UsageError("steps: need an even number (two steps a run), got " +
                                       std::to_string(steps));
    if (ranks.root()) weft::examples::check_writable(json_path);  // before the run, not after it
    weft::examples::check_fits_in_memory(
        "two fields of " + std::to_string(n) + "^2 doubles" +
            (ranks.root() ? ", the gathered result and the serial reference" : ""),
        heat2d_bytes(n, ranks.size(), ranks.root()), ignore_memory_limit);
    a = weft::examples::make_tensor<double, 2>(ranks, {1, kDevices}, {1, 1}, 1, n, n);
    b = weft::examples::make_tensor<double, 2>(ranks, {1, kDevices}, {1, 1}, 1, n, n);
  });
  weft::examples::for_each_local_cell(a, [&](std::size_t i, std::size_t j) { a(i, j) = initial(i, j, n); });

  weft::Graph step;
  step.boundary(a, weft::FirstOrderExtrapolation{}).named("walls_a");
  step.then_split(diffuse, weft::concurrent_padded_access(a), b).named("diffuse_ab");
  step.then_boundary(b, weft::FirstOrderExtrapolation{}).named("walls_b");
  step.then_split(diffuse, weft::concurrent_padded_access(b), a).named("diffuse_ba");

  weft::ExecutorConfig config;
  config.virtual_devices = kDevices;
  weft::Executor executor(config);
  ranks.together([&] { executor.run_n(step, steps / 2).get(); });
  const weft::Tensor<double, 2> whole = ranks.gather(a);  // every block, on rank 0
  if (!ranks.root()) return weft::examples::kExitOk;      // rank 0 checks and reports

  const std::vector<double> reference = serial_heat(n, steps);
  double max_difference = 0.0, heat = 0.0, initial_heat = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t i = 0; i < n; ++i) {
      max_difference = std::fmax(max_difference, std::fabs(whole(i, j) - reference[j * n + i]));
      heat += whole(i, j);
      initial_heat += initial(i, j, n);
    }
  }

  weft::examples::write_file(json_path, step.to_json().dump(2) + '\n');
  const std::string over = ranks.group() ? " over " + std::to_string(ranks.size()) + " ranks" : "";
  std::printf("heat2d: %zux%zu cells on %zu virtual devices%s, %d steps, graph of %zu nodes (%s)\n", n, n,
              kDevices, over.c_str(), steps, step.size(), json_path.c_str());
  std::printf("max |weft - serial| = %g, total heat %.6f (started at %.6f)\n", max_difference, heat,
              initial_heat);
  if (max_difference != 0.0) {
    std::fprintf(stderr, "heat2d: the graph's result differs from the serial reference\n");
    return weft::examples::kExitFailed;
  }
  return weft::examples::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
#if WEFT_EXAMPLES_MPI
  if (weft::examples::launched_by_mpi()) {
    return weft::examples::run_main_on_ranks(
        "heat2d", argc, argv, [&](const auto& ranks) { return example_main(argc, argv, ranks); });
  }
#endif
  return weft::examples::run_main("heat2d",
                                  [&] { return example_main(argc, argv, weft::examples::OneProcess{}); });
}

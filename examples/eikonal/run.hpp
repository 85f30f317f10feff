// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// eikonal's options and its run of one solver, shared by main.cpp (host) and
// gpu_run.cu (--gpus, compiled by nvcc).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>

#include <weft/weft.hpp>

#include <nlohmann/json.hpp>

#include "../euler2d/png_image.hpp"
#include "../output_file.hpp"
#include "../usage_error.hpp"
#include "fim.hpp"

namespace weft::eikonal {

struct Options {
  std::string size = "256x256", source, precision = "double", layout = "strided",
              tiles;  // tiles: "" is 1 per axis
  std::size_t partitions = 1, band = 10;
  int gpus = 0;  // 0: on the host
  std::string png, dump_graph;
  bool checksum = false, quiet = false, visit_all = false, in_shared = false;
  bool ignore_memory_limit = false;  // run even when the fields cannot fit in memory
};

// The distance field with a contour every fifth of the band, drawn in the
// colour map's darkest colour; cells beyond the band show as the brightest.
// A 3D field shows its plane through the source (k = source z).
template <class Solver>
void write_image(const std::string& path, const weft::eikonal::Problem& p, const Solver& solver) {
  const double limit = static_cast<double>(p.band) * p.h(), spacing = limit / 5.0;
  const std::size_t k = p.nz > 1 ? p.sz() : 0;
  const auto band_of = [&](std::size_t i, std::size_t j) {
    const double d = static_cast<double>(solver.distance(i, j, k));
    return std::isfinite(d) ? static_cast<long>(d / spacing) : -1;
  };
  const auto value = [&](std::size_t i, std::size_t j) {
    const double d = static_cast<double>(solver.distance(i, j, k));
    if (!std::isfinite(d)) return limit;
    // A contour cell: a neighbour lies in a lower band (one ring of cells on each level's outer side).
    const long here = band_of(i, j);
    const auto lower = [&](std::size_t x, std::size_t y) {
      return band_of(x, y) >= 0 && band_of(x, y) < here;
    };
    if ((i > 0 && lower(i - 1, j)) || (i + 1 < p.nx && lower(i + 1, j)) || (j > 0 && lower(i, j - 1)) ||
        (j + 1 < p.ny && lower(i, j + 1)))
      return 0.0;
    return d;
  };
  weft::euler::write_png(path, p.nx, p.ny, value, {0.0, limit, false}, "distance");
}

template <class T, class Layout, class Place = HostPlace, std::size_t Dims = 2>
int solve(const Options& o, const weft::eikonal::Problem& p) {
  weft::eikonal::Solver<T, Layout, Place, Dims> solver(p);
  weft::Executor executor;
  solver.run(executor);
  solver.sync_host();
  const auto error = weft::eikonal::band_error(
      p, [&](std::size_t i, std::size_t j, std::size_t k) { return solver.distance(i, j, k); });
  if (!o.dump_graph.empty())
    weft::examples::write_file(o.dump_graph, solver.graph().to_json().dump(2) + '\n');
  if (!o.png.empty()) write_image(o.png, p, solver);
  if (!o.quiet) {
    std::printf("eikonal: %s cells, %zu partitions of %s tiles, %s %s%s, source (%s), band %zu cells, %s\n",
                join(p.cells<Dims>(), "x").c_str(), p.partitions, join(p.tile_grid<Dims>(), "x").c_str(),
                o.precision.c_str(), o.layout.c_str(), p.in_shared ? " in shared memory" : "",
                join(p.source<Dims>(), ", ").c_str(), p.band, Place::gpu ? "on GPUs" : "on the host");
  }
  std::printf(
      "converged after %ld passes (%ld lowered some cell); %zu cells in the band, max error %.3g, L1 error "
      "%.3g (h = %.3g)",
      solver.passes(), solver.changing_passes(), error.cells, error.max, error.l1, p.h());
  std::printf("; visited %ld of %ld blocks", solver.visited_blocks(),
              solver.passes() * static_cast<long>(solver.blocks()));
  if (o.checksum) std::printf("; checksum %016llx", static_cast<unsigned long long>(solver.checksum()));
  std::printf("\n");
  return 0;  // weft::examples::kExitOk (cli_support.hpp, which nvcc need not see)
}

}  // namespace weft::eikonal

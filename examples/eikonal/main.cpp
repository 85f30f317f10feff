// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// eikonal: the distance from one source cell (|grad phi| = 1) within a band,
// by the Fast Iterative Method as a weft graph that loops until no pass
// changes a cell (fim.hpp; the method and the checks: docs/eikonal.md).
//
//   eikonal                                        # 256x256, band 10, source at the centre
//   eikonal --size 512x256 --partitions 4 --band 40 --source 100,30 --precision float
//   eikonal --layout contiguous --checksum --png distance.png --dump-graph g.json
//   eikonal --size 4096x4096 --band 5 --tiles 8x4 --partitions 2 --gpus 1 --in-shared
//   eikonal --size 64x64x64 --tiles 2x2x2 --partitions 2 --png slice.png    # 3D, on the host
//
// Prints the passes, the errors against the exact distance in the band and
// (--checksum) a hash of the field. Exit codes: 0 success, 1 the run or an
// output failed, 2 usage error (a bad size, band, source, ...).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include <weft/weft.hpp>

#include <nlohmann/json.hpp>

#include "../cli_support.hpp"
#include "../gpu_count.hpp"
#include "../memory_check.hpp"
#include "../output_file.hpp"
#include "../usage_error.hpp"
#include "fim.hpp"
#include "gpu_run.hpp"
#include "run.hpp"

namespace {

using weft::eikonal::Options;
using weft::eikonal::solve;
using weft::examples::UsageError;
using weft::examples::whole_number;

constexpr std::size_t kMaxPartitions = 4096;
constexpr std::size_t kMaxSide = std::size_t{1} << 16;   // per axis
constexpr std::size_t kMaxCells = std::size_t{1} << 32;  // in all: more than a host run wants

// Two or three whole decimals joined by `sep` ("64x32", "64x32x16"),
// nothing before, between or after; empty when the text is not that.
std::vector<std::size_t> parse_list(const std::string& text, char sep) {
  std::vector<std::size_t> values;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = std::min(text.find(sep, begin), text.size());
    std::size_t value = 0;
    const char* first = text.data() + begin;
    const char* last = text.data() + end;
    const auto [stop, error] = std::from_chars(first, last, value);
    if (first == last || error != std::errc{} || stop != last) return {};
    values.push_back(value);
    if (end == text.size()) break;
    begin = end + 1;
  }
  if (values.size() < 2 || values.size() > 3) return {};
  return values;
}

// Sets `axes` to the grid's dimensions (2 or 3), from --size.
weft::eikonal::Problem problem_from(const Options& o, std::size_t& axes) {
  weft::eikonal::Problem p;
  const std::vector<std::size_t> size = parse_list(o.size, 'x');
  bool fits = !size.empty();
  std::size_t cells = 1;
  for (std::size_t n : size) {
    fits = fits && n > 0 && n <= kMaxSide && cells * n <= kMaxCells;
    cells *= fits ? n : 1;
  }
  if (!fits)
    throw UsageError("--size: '" + o.size + "' is not NXxNY or NXxNYxNZ with whole sides in [1, " +
                     std::to_string(kMaxSide) + "] and at most 2^32 cells (e.g. 256x256 or 64x64x64)");
  axes = size.size();
  p.nx = size[0];
  p.ny = size[1];
  p.nz = axes == 3 ? size[2] : 1;
  const char* const last_axis = axes == 3 ? "z" : "y";
  const std::size_t along_last = size.back();
  if (along_last < o.partitions)
    throw UsageError("--partitions: " + std::to_string(along_last) + " cells along " + last_axis +
                     " cannot be split into " + std::to_string(o.partitions) +
                     " partitions (the grid is split along " + last_axis + ")");
  p.partitions = o.partitions;
  const std::vector<std::size_t> tiles =
      o.tiles.empty() ? std::vector<std::size_t>(axes, 1) : parse_list(o.tiles, 'x');
  bool tiles_fit = tiles.size() == axes;
  for (std::size_t d = 0; tiles_fit && d < axes; ++d)
    tiles_fit = tiles[d] > 0 && tiles[d] * (d + 1 == axes ? p.partitions : 1) <= size[d];
  if (!tiles_fit) {
    std::string ranges;
    for (std::size_t d = 0; d < axes; ++d)
      ranges += (d == 0 ? "in [1, " : " x [1, ") +
                std::to_string(d + 1 == axes ? size[d] / p.partitions : size[d]) + "]";
    throw UsageError("--tiles: '" + o.tiles + "' is not " + (axes == 3 ? "AxBxC" : "AxB") +
                     " (one per axis of --size) with whole counts " + ranges +
                     " (tiles per partition; e.g. " + (axes == 3 ? "2x2x2" : "4x2") + ")");
  }
  p.tiles_x = tiles[0];
  p.tiles_y = tiles[1];
  p.tiles_z = axes == 3 ? tiles[2] : 1;
  p.skip_quiet_blocks = !o.visit_all;
  p.in_shared = o.in_shared;
  p.gpus = o.gpus;
  if (axes == 3 && o.gpus > 0)
    throw UsageError(
        "--gpus: 3D grids run on the host only (GPU runs are 2D); drop --gpus or the third size");
  const std::size_t reach = p.nx + p.ny + (axes == 3 ? p.nz : 0);
  if (o.band > reach)
    throw UsageError("--band: " + std::to_string(o.band) +
                     " cells is beyond any cell of the grid; need at most " + std::to_string(reach));
  p.band = o.band;
  if (!o.source.empty()) {
    const std::vector<std::size_t> source = parse_list(o.source, ',');
    if (source.size() != axes)
      throw UsageError("--source: '" + o.source + "' is not " + (axes == 3 ? "X,Y,Z" : "X,Y") +
                       " with whole numbers (one per axis of --size; e.g. " +
                       (axes == 3 ? "10,20,5" : "10,20") + ")");
    for (std::size_t d = 0; d < axes; ++d)
      if (source[d] >= size[d])
        throw UsageError("--source: (" + o.source + ") lies outside the " + o.size + " grid; need " +
                         std::string(1, "XYZ"[d]) + " < " + std::to_string(size[d]));
    p.source_x = source[0];
    p.source_y = source[1];
    p.source_z = axes == 3 ? source[2] : std::numeric_limits<std::size_t>::max();
  }
  if (o.precision != "float" && o.precision != "double")
    throw UsageError("--precision: '" + o.precision + "' is not float or double");
  if (o.layout != "strided" && o.layout != "contiguous")
    throw UsageError("--layout: '" + o.layout + "' is not strided or contiguous");
  return p;
}

// What the host holds: the solver's two padded fields (one host copy when
// the passes run on GPUs), a cell being a distance and a flag, and the
// image's plane when --png asks for one.
double eikonal_bytes(const Options& o, const weft::eikonal::Problem& p, std::size_t axes) {
  const bool doubles = o.precision == "double";
  const double cell = doubles ? (o.layout == "contiguous" ? 16.0 : 12.0) : 8.0;
  const auto padded = [](std::size_t cells, std::size_t blocks) {
    return static_cast<double>(cells) + 2.0 * static_cast<double>(blocks);
  };
  const bool z_last = axes == 3;
  double cells = padded(p.nx, p.tiles_x) * padded(p.ny, p.tiles_y * (z_last ? 1 : p.partitions));
  if (z_last) cells *= padded(p.nz, p.tiles_z * p.partitions);
  const double plane = static_cast<double>(p.nx) * static_cast<double>(p.ny);
  return (o.gpus > 0 ? 1.0 : 2.0) * cell * cells + (o.png.empty() ? 0.0 : 12.0 * plane);
}

template <std::size_t Dims>
int solve_on_host(const Options& o, const weft::eikonal::Problem& p) {
  using weft::eikonal::HostPlace;
  const bool strided = o.layout == "strided";
  if (o.precision == "float")
    return strided ? solve<float, weft::StridedView, HostPlace, Dims>(o, p)
                   : solve<float, weft::ContiguousView, HostPlace, Dims>(o, p);
  return strided ? solve<double, weft::StridedView, HostPlace, Dims>(o, p)
                 : solve<double, weft::ContiguousView, HostPlace, Dims>(o, p);
}

int eikonal(int argc, char** argv) {
  Options o;
  CLI::App app("eikonal: distances from a source cell by the Fast Iterative Method, as a weft graph",
               "eikonal");
  app.add_option("--size", o.size, "cells NXxNY, or NXxNYxNZ for a 3D grid (cell width 1 / NX)")
      ->capture_default_str();
  app.add_option("--partitions", o.partitions, "partitions along the last axis (y, or z in 3D)")
      ->transform(whole_number<std::size_t>(1, kMaxPartitions))
      ->capture_default_str();
  app.add_option("--band", o.band, "K: cells farther than K cell widths from the source stay at +inf")
      ->transform(whole_number<std::size_t>(1))
      ->capture_default_str();
  app.add_option("--source", o.source,
                 "the source cell X,Y or X,Y,Z (default: the centre, NX/2,NY/2[,NZ/2])");
  app.add_option("--precision", o.precision, "float or double")->capture_default_str();
  app.add_option("--layout", o.layout, "strided (struct of arrays) or contiguous (array of structs)")
      ->capture_default_str();
  app.add_option("--tiles", o.tiles,
                 "blocks per partition AxB (AxBxC in 3D; default 1 per axis): a pass skips the quiet ones");
  app.add_flag("--visit-all", o.visit_all, "every pass visits every block (no skipping; the same result)");
  app.add_option("--gpus", o.gpus, "run the passes on this many CUDA GPUs (partitions spread over them)")
      ->transform(whole_number<int>(1, 64));
  app.add_flag("--in-shared", o.in_shared, "with --gpus: stage each pass's input in shared memory");
  app.add_option("--png", o.png,
                 "write the distance field with contours as a PNG image (3D: the plane through the source)");
  app.add_option("--dump-graph", o.dump_graph, "write the graph as JSON");
  app.add_flag("--checksum", o.checksum,
               "end the summary with a hash of the field (bit-for-bit comparisons)");
  app.add_flag("--quiet", o.quiet, "print only the result line");
  weft::examples::add_memory_check_flag(app, o.ignore_memory_limit);
  if (const auto code = weft::examples::parse(app, argc, argv)) return *code;
  std::size_t axes = 2;
  const weft::eikonal::Problem p = problem_from(o, axes);
  weft::examples::check_all_writable({o.png, o.dump_graph});  // before the run, not after it
  weft::examples::check_fits_in_memory("two fields of " + o.size + " cells", eikonal_bytes(o, p, axes),
                                       o.ignore_memory_limit);
  if (o.gpus > 0) {
    weft::examples::check_gpu_count(o.gpus);  // too many is a usage error, as in euler2d
    return weft::eikonal::run_on_gpus(o, p);
  }
  if (o.in_shared) throw UsageError("--in-shared: only with --gpus (it stages GPU kernels' input)");
  return axes == 3 ? solve_on_host<3>(o, p) : solve_on_host<2>(o, p);
}

}  // namespace

int main(int argc, char** argv) {
  return weft::examples::run_main("eikonal", [&] { return eikonal(argc, argv); });
}

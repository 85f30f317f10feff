// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// eikonal: the distance from one source cell (|grad phi| = 1) within a band,
// by the Fast Iterative Method as a weft graph that loops until no pass
// changes a cell (fim.hpp; the method and the checks: docs/eikonal.md).
//
//   eikonal                                        # 256x256, band 10, source at the centre
//   eikonal --size 512x256 --partitions 4 --band 40 --source 100,30 --precision float
//   eikonal --layout contiguous --checksum --png distance.png --dump-graph g.json
//   eikonal --size 4096x4096 --band 5 --tiles 8x4 --partitions 2 --gpus 1 --in-shared
//
// Prints the passes, the errors against the exact distance in the band and
// (--checksum) a hash of the field. Exit codes: 0 success, 1 the run or an
// output failed, 2 usage error (a bad size, band, source, ...).
#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>
#include <system_error>

#include <weft/weft.hpp>

#include <nlohmann/json.hpp>

#include "../cli_support.hpp"
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
constexpr std::size_t kMaxSide = std::size_t{1} << 16;  // 2^32 cells: more than a host run wants

// "AsepB" with whole decimal A and B, nothing before, between or after.
bool parse_pair(const std::string& text, char sep, std::size_t& a, std::size_t& b) {
  const std::size_t at = text.find(sep);
  if (at == std::string::npos) return false;
  const auto whole = [](const char* first, const char* last, std::size_t& value) {
    const auto [end, error] = std::from_chars(first, last, value);
    return first != last && error == std::errc{} && end == last;
  };
  return whole(text.data(), text.data() + at, a) && whole(text.data() + at + 1, text.data() + text.size(), b);
}

weft::eikonal::Problem problem_from(const Options& o) {
  weft::eikonal::Problem p;
  if (!parse_pair(o.size, 'x', p.nx, p.ny) || p.nx == 0 || p.ny == 0 || p.nx > kMaxSide || p.ny > kMaxSide)
    throw UsageError("--size: '" + o.size + "' is not NXxNY with whole NX and NY in [1, " +
                     std::to_string(kMaxSide) + "] (e.g. 256x256)");
  if (p.ny < o.partitions)
    throw UsageError("--partitions: " + std::to_string(p.ny) + " rows cannot be split into " +
                     std::to_string(o.partitions) + " partitions (the grid is split along y)");
  p.partitions = o.partitions;
  if (!parse_pair(o.tiles, 'x', p.tiles_x, p.tiles_y) || p.tiles_x == 0 || p.tiles_y == 0 ||
      p.tiles_x > p.nx || p.tiles_y * p.partitions > p.ny)
    throw UsageError("--tiles: '" + o.tiles + "' is not AxB with whole A in [1, " + std::to_string(p.nx) +
                     "] and B in [1, " + std::to_string(p.ny / p.partitions) +
                     "] (tiles per partition; e.g. 4x2)");
  p.skip_quiet_blocks = !o.visit_all;
  p.in_shared = o.in_shared;
  p.gpus = o.gpus;
  if (o.band > p.nx + p.ny)
    throw UsageError("--band: " + std::to_string(o.band) +
                     " cells is beyond any cell of the grid; need at most " + std::to_string(p.nx + p.ny));
  p.band = o.band;
  if (!o.source.empty()) {
    if (!parse_pair(o.source, ',', p.source_x, p.source_y))
      throw UsageError("--source: '" + o.source + "' is not X,Y with whole X and Y (e.g. 10,20)");
    if (p.source_x >= p.nx || p.source_y >= p.ny)
      throw UsageError("--source: (" + o.source + ") lies outside the grid; need X < " +
                       std::to_string(p.nx) + " and Y < " + std::to_string(p.ny));
  }
  if (o.precision != "float" && o.precision != "double")
    throw UsageError("--precision: '" + o.precision + "' is not float or double");
  if (o.layout != "strided" && o.layout != "contiguous")
    throw UsageError("--layout: '" + o.layout + "' is not strided or contiguous");
  return p;
}

int eikonal(int argc, char** argv) {
  Options o;
  CLI::App app("eikonal: distances from a source cell by the Fast Iterative Method, as a weft graph",
               "eikonal");
  app.add_option("--size", o.size, "cells NXxNY (cell width 1 / NX)")->capture_default_str();
  app.add_option("--partitions", o.partitions, "partitions along y")
      ->transform(whole_number<std::size_t>(1, kMaxPartitions))
      ->capture_default_str();
  app.add_option("--band", o.band, "K: cells farther than K cell widths from the source stay at +inf")
      ->transform(whole_number<std::size_t>(1))
      ->capture_default_str();
  app.add_option("--source", o.source, "the source cell X,Y (default: the centre, NX/2,NY/2)");
  app.add_option("--precision", o.precision, "float or double")->capture_default_str();
  app.add_option("--layout", o.layout, "strided (struct of arrays) or contiguous (array of structs)")
      ->capture_default_str();
  app.add_option("--tiles", o.tiles, "blocks per partition AxB: a pass skips the quiet ones")
      ->capture_default_str();
  app.add_flag("--visit-all", o.visit_all, "every pass visits every block (no skipping; the same result)");
  app.add_option("--gpus", o.gpus, "run the passes on this many CUDA GPUs (partitions spread over them)")
      ->transform(whole_number<int>(1, 64));
  app.add_flag("--in-shared", o.in_shared, "with --gpus: stage each pass's input in shared memory");
  app.add_option("--png", o.png, "write the distance field with contours as a PNG image");
  app.add_option("--dump-graph", o.dump_graph, "write the graph as JSON");
  app.add_flag("--checksum", o.checksum,
               "end the summary with a hash of the field (bit-for-bit comparisons)");
  app.add_flag("--quiet", o.quiet, "print only the result line");
  if (const auto code = weft::examples::parse(app, argc, argv)) return *code;
  const weft::eikonal::Problem p = problem_from(o);
  weft::examples::check_all_writable({o.png, o.dump_graph});  // before the run, not after it
  if (o.gpus > 0) return weft::eikonal::run_on_gpus(o, p);
  if (o.in_shared) throw UsageError("--in-shared: only with --gpus (it stages GPU kernels' input)");
  const bool strided = o.layout == "strided";
  if (o.precision == "float")
    return strided ? solve<float, weft::StridedView>(o, p) : solve<float, weft::ContiguousView>(o, p);
  return strided ? solve<double, weft::StridedView>(o, p) : solve<double, weft::ContiguousView>(o, p);
}

}  // namespace

int main(int argc, char** argv) {
  return weft::examples::run_main("eikonal", [&] { return eikonal(argc, argv); });
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Eikonal example (examples/eikonal): the Fast Iterative Method as a weft
// graph equals the serial reference bit for bit, gives one field for every
// split and layout, stays within the first-order scheme's error of the exact
// distance in the band (less on a finer grid), and leaves the rest at +inf.
// Passes that skip quiet blocks give the same field as passes that visit all.
#include <weft/weft.hpp>

#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "../test_support.hpp"
#include "error_checks.hpp"
#include "fim.hpp"
#include "reference.hpp"

namespace {

using weft::ContiguousView;
using weft::StridedView;
using weft::eikonal::Problem;
using weft::eikonal::Solver;

Problem problem(std::size_t nx, std::size_t ny, std::size_t band, std::size_t partitions) {
  Problem p;
  p.nx = nx;
  p.ny = ny;
  p.band = band;
  p.partitions = partitions;
  return p;
}

template <class T, class Layout>
std::vector<T> solve(const Problem& p, long* changing_passes = nullptr) {
  Solver<T, Layout> solver(p);
  weft::Executor executor;
  const long passes = solver.run(executor);
  if (changing_passes != nullptr) *changing_passes = passes;
  std::vector<T> field(p.nx * p.ny);
  for (std::size_t j = 0; j < p.ny; ++j)
    for (std::size_t i = 0; i < p.nx; ++i) field[j * p.nx + i] = solver.distance(i, j);
  return field;
}

template <class T>
std::uint64_t checksum(const Problem& p, const std::vector<T>& field) {
  return weft::eikonal::field_checksum(p.nx, p.ny,
                                       [&](std::size_t i, std::size_t j) { return field[j * p.nx + i]; });
}

template <class T>
void check_equals_reference(Problem p) {
  long graph_passes = 0;
  const std::vector<T> graph = solve<T, StridedView>(p, &graph_passes);
  const auto reference = weft::eikonal::solve_serial<T>(p);
  CHECK(graph_passes == reference.changing_passes);
  std::size_t different = 0;
  for (std::size_t k = 0; k < graph.size(); ++k)
    if (std::bit_cast<std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>>(graph[k]) !=
        std::bit_cast<std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>>(reference.values[k]))
      ++different;
  CHECK(different == 0);
}

}  // namespace

TEST_CASE("Eikonal.graph_equals_the_serial_reference_bitwise") {
  Problem p = problem(48, 40, 30, 3);
  p.source_x = 2;  // near a corner: the update must ignore cells beyond the edges
  p.source_y = 37;
  check_equals_reference<double>(p);
  check_equals_reference<float>(p);
  check_equals_reference<double>(problem(33, 17, 6, 4));  // a narrow band around the centre
}

TEST_CASE("Eikonal.checksum_is_the_same_for_1_2_4_partitions_and_both_layouts") {
  Problem one = problem(40, 32, 12, 1);
  one.skip_quiet_blocks = false;
  const std::uint64_t expected = checksum(one, solve<double, StridedView>(one));
  const std::uint64_t expected_float = checksum(one, solve<float, StridedView>(one));
  CHECK(expected != expected_float);  // the hash sees the values
  for (std::size_t partitions : {1, 2, 4}) {
    CAPTURE(partitions);
    const Problem p = problem(40, 32, 12, partitions);
    CHECK(checksum(p, solve<double, StridedView>(p)) == expected);
    CHECK(checksum(p, solve<double, ContiguousView>(p)) == expected);
    CHECK(checksum(p, solve<float, StridedView>(p)) == expected_float);
    CHECK(checksum(p, solve<float, ContiguousView>(p)) == expected_float);
  }
}

// Quiet blocks (docs/eikonal.md): a pass skips a block where no cell or
// neighbour changed in the pass before and no cell in the one before that.
TEST_CASE("Eikonal.skipping_quiet_tiles_changes_no_bit_and_visits_fewer_blocks") {
  for (const auto& split : {std::array<std::size_t, 3>{1, 3, 2}, {2, 4, 4}, {3, 7, 1}, {1, 1, 9}}) {
    const std::size_t partitions = split[0], tiles_x = split[1], tiles_y = split[2];
    CAPTURE(partitions);
    CAPTURE(tiles_x);
    CAPTURE(tiles_y);
    Problem p = problem(70, 54, 9, partitions);
    p.source_x = 13;  // off the block corners
    p.source_y = 40;
    p.tiles_x = tiles_x;
    p.tiles_y = tiles_y;
    p.skip_quiet_blocks = false;
    const std::vector<double> all = solve<double, StridedView>(p);
    p.skip_quiet_blocks = true;
    CHECK(checksum(p, solve<double, ContiguousView>(p)) == checksum(p, all));
    check_equals_reference<double>(p);
    check_equals_reference<float>(p);
  }
  Problem p = problem(96, 96, 6, 2);
  p.tiles_x = 6;
  p.tiles_y = 3;
  Solver<float, StridedView> solver(p);
  weft::Executor executor;
  solver.run(executor);
  MESSAGE("visited " << solver.visited_blocks() << " of " << solver.passes() * 36 << " blocks");
  CHECK(solver.visited_blocks() > 0);
  CHECK(solver.visited_blocks() * 2 < solver.passes() * 36);  // the band lies within four of 36 blocks
}

TEST_CASE("Eikonal.reset_runs_the_same_solve_again") {
  Problem p = problem(50, 44, 15, 2);
  p.tiles_x = 3;
  p.tiles_y = 2;
  Solver<double, ContiguousView> solver(p);
  weft::Executor executor;
  const long passes = solver.run(executor);
  const std::uint64_t first = solver.checksum();
  solver.reset();
  CHECK(solver.distance(25, 22) == 0.0);
  CHECK(solver.distance(0, 0) == std::numeric_limits<double>::infinity());
  CHECK(solver.run(executor) == passes);
  CHECK(solver.checksum() == first);
}

// The bound (docs/eikonal.md): the 1D update is exact along the axes; the
// first diagonal cell is h (1 + sqrt(2)/2 - sqrt(2)) = 0.293 h too far, and
// each doubling of the distance adds at most 0.35 ln 2 h more (measured
// 0.21-0.24 h), the O(h log(1/h)) growth near a point source. So in a band of
// K cells the max error is at most h (0.3 + 0.35 ln K), and the mean (L1 per
// cell) error at most 0.6 of the max. Halving h at the same physical band
// (0.25) must scale both by 1/2 to 3/4: first order, times the log factor.
TEST_CASE("Eikonal.error_in_the_band_is_first_order_and_falls_when_refined") {
  weft::eikonal::BandError coarse;
  for (std::size_t n : {32, 64}) {
    CAPTURE(n);
    const Problem p = problem(n, n, n / 4, 2);
    const std::vector<double> field = solve<double, StridedView>(p);
    const auto error =
        weft::eikonal::band_error(p, [&](std::size_t i, std::size_t j) { return field[j * n + i]; });
    const double bound = p.h() * (0.3 + 0.35 * std::log(static_cast<double>(p.band)));
    MESSAGE("n = " << n << ": max error " << error.max << ", L1 " << error.l1 << ", bound " << bound);
    weft::eikonal::testing::check_band_error(error, bound, 0.6);
    if (n == 32)
      coarse = error;
    else
      weft::eikonal::testing::check_refined(coarse, error);
  }
}

TEST_CASE("Eikonal.cells_beyond_the_band_keep_infinity") {
  const Problem p = problem(40, 40, 9, 2);
  const std::vector<double> field = solve<double, ContiguousView>(p);
  const double limit = 9 * p.h();
  std::size_t inside = 0, beyond = 0;
  for (std::size_t j = 0; j < p.ny; ++j) {
    for (std::size_t i = 0; i < p.nx; ++i) {
      const double v = field[j * p.nx + i], exact = weft::eikonal::exact_distance(p, i, j);
      if (exact > limit) {  // the scheme never underestimates: these stay at the initial value
        CHECK(v == std::numeric_limits<double>::infinity());
        ++beyond;
      } else if (exact < limit - p.h()) {  // well inside: reached
        CHECK(v <= limit);
        ++inside;
      }
    }
  }
  CHECK(inside > 150);
  CHECK(beyond > 1000);
}

// With WEFT_GPU_PLAN=interpret (docs/device_plans.md) each pass runs as the
// device plan's segments: per device, the padding copies and the first
// sweep, then (after the host's note_ab) the second sweep.
TEST_CASE("Eikonal.the_host_interpreter_gives_the_reference_bits_in_two_launches_per_device_a_pass") {
  const Problem p = problem(48, 40, 30, 3);
  {
    const Solver<double, StridedView> solver(p);
    const weft::DevicePlan plan = solver.graph().device_plan();
    REQUIRE(plan.devices().size() == 3);
    for (const int d : plan.devices()) {
      CAPTURE(d);
      CHECK(plan.counts(d).launches == 2);
      CHECK(plan.counts(d).callbacks == 2);
    }
  }
  const weft::test::ScopedVariable interpret("WEFT_GPU_PLAN", "interpret");
  check_equals_reference<double>(p);
  check_equals_reference<float>(p);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Eikonal example on a 3D grid (examples/eikonal, Solver3D): the graph
// equals the serial reference bit for bit, gives one field for every split,
// tiling and layout, stays within the first-order scheme's error of the
// exact distance in the band (less on a finer grid), and leaves the rest at
// +inf.
#include <weft/weft.hpp>

#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "error_checks.hpp"
#include "fim.hpp"
#include "reference.hpp"

namespace {

using weft::ContiguousView;
using weft::StridedView;
using weft::eikonal::Problem;
using weft::eikonal::Solver3D;

Problem cube(std::size_t n, std::size_t band, std::size_t partitions) {
  Problem p;
  p.nx = p.ny = p.nz = n;
  p.band = band;
  p.partitions = partitions;
  return p;
}

std::size_t at(const Problem& p, std::size_t i, std::size_t j, std::size_t k) {
  return (k * p.ny + j) * p.nx + i;
}

template <class T, class Layout>
std::vector<T> solve(const Problem& p, long* changing_passes = nullptr) {
  Solver3D<T, Layout> solver(p);
  weft::Executor executor;
  const long passes = solver.run(executor);
  if (changing_passes != nullptr) *changing_passes = passes;
  std::vector<T> field(p.nx * p.ny * p.nz);
  for (std::size_t k = 0; k < p.nz; ++k)
    for (std::size_t j = 0; j < p.ny; ++j)
      for (std::size_t i = 0; i < p.nx; ++i) field[at(p, i, j, k)] = solver.distance(i, j, k);
  return field;
}

template <class T>
std::size_t cells_differing_in_a_bit(const std::vector<T>& a, const std::vector<T>& b) {
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  std::size_t different = a.size() == b.size() ? 0 : a.size() + b.size();
  for (std::size_t k = 0; k < a.size() && k < b.size(); ++k)
    if (std::bit_cast<Bits>(a[k]) != std::bit_cast<Bits>(b[k])) ++different;
  return different;
}

template <class T, class Layout>
void check_equals_reference(const Problem& p) {
  long graph_passes = 0;
  const std::vector<T> graph = solve<T, Layout>(p, &graph_passes);
  const auto reference = weft::eikonal::solve_serial<T, 3>(p);
  CHECK(graph_passes == reference.changing_passes);
  CHECK(cells_differing_in_a_bit(graph, reference.values) == 0);
}

}  // namespace

// The 3D local solver: exact for a plane front along an axis, on a diagonal
// and for three equal neighbours (u = a + h / sqrt(3)).
TEST_CASE("Eikonal3D.local_solver_reduces_to_the_2d_and_1d_updates") {
  const double h = 0.1, inf = std::numeric_limits<double>::infinity();
  CHECK(weft::eikonal::godunov_update(1.0, inf, inf, h) == doctest::Approx(1.1));
  CHECK(weft::eikonal::godunov_update(inf, 2.0, inf, h) == doctest::Approx(2.1));
  // Two equal neighbours, the third far: the 2D update a + h / sqrt(2), in any order.
  const double two = weft::eikonal::godunov_update(1.0, 1.0, h);
  CHECK(weft::eikonal::godunov_update(1.0, 1.0, 5.0, h) == two);
  CHECK(weft::eikonal::godunov_update(5.0, 1.0, 1.0, h) == two);
  CHECK(weft::eikonal::godunov_update(1.0, 5.0, 1.0, h) == two);
  const double three = weft::eikonal::godunov_update(1.0, 1.0, 1.0, h);
  CHECK(three == doctest::Approx(1.0 + h / std::sqrt(3.0)));
  CHECK(three < two);
  // The argument order never changes a bit.
  const double a = 0.31, b = 0.37, c = 0.35;
  const double u = weft::eikonal::godunov_update(a, b, c, h);
  CHECK(std::bit_cast<std::uint64_t>(u) ==
        std::bit_cast<std::uint64_t>(weft::eikonal::godunov_update(c, a, b, h)));
  CHECK(std::bit_cast<std::uint64_t>(u) ==
        std::bit_cast<std::uint64_t>(weft::eikonal::godunov_update(b, c, a, h)));
  CHECK((u - a) * (u - a) + (u - b) * (u - b) + (u - c) * (u - c) == doctest::Approx(h * h));
}

TEST_CASE("Eikonal3D.graph_equals_the_serial_reference_bitwise") {
  Problem p = cube(20, 14, 2);
  p.ny = 17;
  p.nz = 13;
  p.source_x = 1;  // near a corner: the update must ignore cells beyond the faces
  p.source_y = 15;
  p.source_z = 2;
  check_equals_reference<double, StridedView>(p);
  check_equals_reference<float, ContiguousView>(p);
  check_equals_reference<double, ContiguousView>(cube(15, 5, 3));  // a narrow band around the centre
}

TEST_CASE("Eikonal3D.field_is_the_same_for_every_split_tiling_and_layout") {
  Problem one = cube(18, 9, 1);
  one.skip_quiet_blocks = false;
  const std::vector<double> expected = solve<double, StridedView>(one);
  const std::vector<float> expected_float = solve<float, StridedView>(one);
  for (const auto& split :
       {std::array<std::size_t, 4>{1, 2, 2, 2}, {2, 3, 1, 2}, {3, 1, 4, 1}, {6, 2, 3, 1}}) {
    const std::size_t partitions = split[0], tiles_x = split[1], tiles_y = split[2], tiles_z = split[3];
    CAPTURE(partitions);
    CAPTURE(tiles_x);
    CAPTURE(tiles_y);
    CAPTURE(tiles_z);
    Problem p = cube(18, 9, partitions);
    p.tiles_x = tiles_x;
    p.tiles_y = tiles_y;
    p.tiles_z = tiles_z;
    CHECK(cells_differing_in_a_bit(solve<double, StridedView>(p), expected) == 0);
    CHECK(cells_differing_in_a_bit(solve<double, ContiguousView>(p), expected) == 0);
    CHECK(cells_differing_in_a_bit(solve<float, StridedView>(p), expected_float) == 0);
    CHECK(cells_differing_in_a_bit(solve<float, ContiguousView>(p), expected_float) == 0);
  }
}

TEST_CASE("Eikonal3D.skipping_quiet_blocks_visits_fewer_and_changes_no_bit") {
  Problem p = cube(32, 4, 2);
  p.source_x = 9;
  p.source_y = 20;
  p.source_z = 22;
  p.tiles_x = p.tiles_y = 4;
  p.tiles_z = 2;  // 4 x 4 x 4 blocks of 8^3
  Solver3D<float, StridedView> skipping(p);
  weft::Executor executor;
  skipping.run(executor);
  p.skip_quiet_blocks = false;
  Solver3D<float, StridedView> visiting_all(p);
  visiting_all.run(executor);
  CHECK(skipping.checksum() == visiting_all.checksum());
  CHECK(skipping.passes() == visiting_all.passes());
  MESSAGE("visited " << skipping.visited_blocks() << " of " << visiting_all.visited_blocks() << " blocks");
  CHECK(skipping.visited_blocks() * 4 < visiting_all.visited_blocks());  // the band touches 8 of 64
}

// What a split asks the kernel (a split's kernel sees its padded input as
// the Tensor itself): were this not so, the hint would go unasked.
template <class T, std::size_t D, class Layout>
constexpr bool asks_padding_copies = weft::padding_copy_skipping_kernel<
    weft::eikonal::UpdateCell<T, D>, weft::Tensor<weft::eikonal::Cell<T, Layout>, D>,
    weft::Tensor<weft::eikonal::Cell<T, Layout>, D>, T, T, weft::eikonal::BlockFlags>;
static_assert(asks_padding_copies<double, 3, StridedView> && asks_padding_copies<float, 3, ContiguousView>);
static_assert(asks_padding_copies<double, 2, StridedView> && asks_padding_copies<float, 2, ContiguousView>);

TEST_CASE("Eikonal3D.padding_copies_run_only_from_face_neighbours_that_changed") {
  // 2 x 2 x 2 blocks of 4^3; block index = x + 2 (y + 2 z).
  const weft::Tensor<weft::eikonal::Cell<double, StridedView>, 3> t({1, 1, 1}, {2, 2, 2}, 1, 8, 8, 8);
  std::vector<int> active(8, 1), changed(8, 0), last_change(8, -2), last_read(8, 0);
  const weft::eikonal::BlockFlags flags{
      active.data(), changed.data(), last_change.data(), last_read.data(), 2, 2};
  const weft::eikonal::UpdateCell<double, 3> kernel;
  const auto needless = [&](std::size_t from, std::size_t to) {
    return kernel.skip_padding_copy(from, to, t, t, 0.1, 1.0, flags);
  };
  last_change[1] = 5;  // block (1, 0, 0) changed in pass 5
  last_read[0] = 6;    // block 0's padding holds field 5: block 1 changed in writing it
  CHECK_FALSE(needless(1, 0));
  last_read[0] = 7;  // it holds field 6, written after block 1's last change
  CHECK(needless(1, 0));
  CHECK(needless(3, 0));  // (1, 1, 0): an edge, which the 7-point stencil never reads
  CHECK(needless(7, 0));  // (1, 1, 1): a corner
  last_change[2] = 6;     // (0, 1, 0), a face neighbour, changed in pass 6
  CHECK_FALSE(needless(2, 0));
  last_change[3] = 6;  // an edge neighbour's changes still need no copy
  CHECK(needless(3, 0));
}

TEST_CASE("Eikonal3D.checksum_sees_every_plane") {
  const Problem p = cube(12, 5, 2);
  Solver3D<double, StridedView> solver(p);
  weft::Executor executor;
  solver.run(executor);
  const std::uint64_t whole = solver.checksum();
  const auto checksum_of_planes = [&](std::size_t planes) {
    return weft::eikonal::field_checksum(
        p.nx, p.ny, planes,
        [&](std::size_t i, std::size_t j, std::size_t k) { return solver.distance(i, j, k); });
  };
  CHECK(whole == checksum_of_planes(p.nz));  // every plane, x fastest, then y, then z
  CHECK(whole != checksum_of_planes(p.nz - 1));
  solver.reset();
  CHECK(solver.distance(6, 6, 6) == 0.0);
  CHECK(solver.distance(6, 6, 7) == std::numeric_limits<double>::infinity());
  solver.run(executor);
  CHECK(solver.checksum() == whole);
}

// The bound (docs/eikonal.md, "3D"): the 1D update is exact along the axes,
// the 2D one leaves a face diagonal cell 0.293 h too far, and the first
// body-diagonal cell (1, 1, 1) takes three such neighbours: h (1 + sqrt(2)/2
// + sqrt(3)/3 - sqrt(3)) = 0.552 h too far. Each doubling of the distance
// then adds at most 0.36 h (measured for K = 3 to 32), 0.52 h per factor e.
// So in a band of K cells the max error is at most h (0.56 + 0.55 ln(K /
// 3)), and the mean (L1 per cell) error at most 0.65 of the max (measured
// 0.44-0.61). Halving h at the same physical band (0.25) must scale both by
// 1/2 to 3/4: first order, times the log factor.
TEST_CASE("Eikonal3D.error_in_the_band_is_first_order_and_falls_when_refined") {
  weft::eikonal::BandError coarse;
  for (std::size_t n : {24, 48}) {
    CAPTURE(n);
    const Problem p = cube(n, n / 4, 2);
    const std::vector<double> field = solve<double, ContiguousView>(p);
    const auto error = weft::eikonal::band_error(
        p, [&](std::size_t i, std::size_t j, std::size_t k) { return field[at(p, i, j, k)]; });
    const double bound = p.h() * (0.56 + 0.55 * std::log(static_cast<double>(p.band) / 3.0));
    MESSAGE("n = " << n << ": max error " << error.max / p.h() << " h, L1 " << error.l1 / p.h()
                   << " h, bound " << bound / p.h() << " h");
    weft::eikonal::testing::check_band_error(error, bound, 0.65);
    if (n == 24)
      coarse = error;
    else
      weft::eikonal::testing::check_refined(coarse, error);
  }
}

TEST_CASE("Eikonal3D.cells_beyond_the_band_keep_infinity") {
  const Problem p = cube(24, 7, 3);
  const std::vector<float> field = solve<float, StridedView>(p);
  const double limit = 7 * p.h();
  std::size_t inside = 0, beyond = 0;
  for (std::size_t k = 0; k < p.nz; ++k) {
    for (std::size_t j = 0; j < p.ny; ++j) {
      for (std::size_t i = 0; i < p.nx; ++i) {
        const double v = field[at(p, i, j, k)], exact = weft::eikonal::exact_distance(p, i, j, k);
        if (exact > limit) {  // the scheme never underestimates: these stay at the initial value
          CHECK(v == std::numeric_limits<double>::infinity());
          ++beyond;
        } else if (exact < limit - 1.5 * p.h()) {  // well inside: reached
          CHECK(v <= limit);
          ++inside;
        }
      }
    }
  }
  CHECK(inside > 700);  // about (4/3) pi 5.5^3
  CHECK(beyond > 10000);
}

TEST_CASE("Eikonal3D.a_problem_that_does_not_fit_the_solver_is_refused_by_name") {
  using Flat = weft::eikonal::Solver<double, StridedView>;
  using Cube = Solver3D<double, StridedView>;
  Problem p = cube(8, 3, 1);
  CHECK_THROWS_WITH_AS(Flat{p}, doctest::Contains("nz = 1"), std::invalid_argument);
  p.source_z = 8;
  CHECK_THROWS_WITH_AS(Cube{p}, doctest::Contains("source (4, 4, 8)"), std::invalid_argument);
  p = cube(8, 3, 3);
  p.tiles_z = 3;
  CHECK_THROWS_WITH_AS(Cube{p}, doctest::Contains("along z"), std::invalid_argument);
}

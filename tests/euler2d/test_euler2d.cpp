// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The flagship's numerics (examples/euler2d): the exact Riemann solver,
// Sod's tube against it, and weft's Solver against itself under every split
// and against the hand-written reference solver, bitwise.
#include <weft/weft.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../executor_configs.hpp"
#include "../test_support.hpp"
#include "exact_riemann.hpp"
#include "reference_solver.hpp"
#include "solver.hpp"

namespace {

using weft::ContiguousView;
using weft::StridedView;
using weft::euler::ExactRiemannSolver;
using weft::euler::GasState;
using weft::euler::Problem;
using weft::euler::ReferenceSolver;
using weft::euler::Solver;
using weft::euler::SolverConfig;

constexpr double kGamma = 1.4;
// More workers than the machine may have cores: blocks then run in every
// order and on every worker.
constexpr int kWorkers = 4;

SolverConfig shock_bubble(std::size_t nx, std::size_t ny, std::size_t partitions,
                          std::size_t sub_partitions) {
  SolverConfig c;
  c.problem = Problem::shock_bubble;
  c.nx = nx;
  c.ny = ny;
  c.partitions = partitions;
  c.sub_partitions = sub_partitions;
  return c;
}

SolverConfig sod(std::size_t nx, std::size_t ny, std::size_t partitions) {
  SolverConfig c = shock_bubble(nx, ny, partitions, 1);
  c.problem = Problem::sod;
  return c;
}

bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

// "" when two solvers hold bitwise the same field, else the first difference.
template <class LayoutA, class LayoutB>
std::string field_difference(const Solver<LayoutA>& a, const Solver<LayoutB>& b) {
  const SolverConfig& c = a.config();
  for (std::size_t j = 0; j < c.ny; ++j) {
    for (std::size_t i = 0; i < c.nx; ++i) {
      const auto x = a.field()(i, j);
      const auto y = b.field()(i, j);
      for (std::size_t v = 0; v < x.conserved_count; ++v) {
        if (!same_bits(x.conserved(v), y.conserved(v))) {
          return "cell (" + std::to_string(i) + ", " + std::to_string(j) + ") variable " + std::to_string(v) +
                 ": " + std::to_string(x.conserved(v)) + " and " + std::to_string(y.conserved(v));
        }
      }
    }
  }
  return "";
}

template <class Layout>
double sod_error(const Solver<Layout>& solver) {
  const SolverConfig& c = solver.config();
  return weft::euler::sod_l1_density_error(
      c.nx, c.ny, solver.info().time, c.gamma,
      [&](std::size_t i, std::size_t j) { return solver.density(i, j); });
}

}  // namespace

// ---- the exact Riemann solver ----------------------------------------------------------

TEST_CASE("ExactRiemann.star_region_matches_toro_table_4_3") {
  // Toro, Riemann Solvers and Numerical Methods for Fluid Dynamics, tests
  // 1-5 of chapter 4 (gamma 1.4), printed to 6 significant figures.
  struct Case {
    GasState left, right;
    double pressure, velocity, density_left, density_right;
  };
  const Case cases[] = {
      {{1.0, 0.0, 1.0}, {0.125, 0.0, 0.1}, 0.30313, 0.92745, 0.42632, 0.26557},    // Sod
      {{1.0, -2.0, 0.4}, {1.0, 2.0, 0.4}, 0.00189, 0.0, 0.02185, 0.02185},         // two rarefactions
      {{1.0, 0.0, 1000.0}, {1.0, 0.0, 0.01}, 460.894, 19.5975, 0.57506, 5.99924},  // strong shock right
      {{1.0, 0.0, 0.01}, {1.0, 0.0, 100.0}, 46.0950, -6.19633, 5.99242, 0.57511},  // strong shock left
      {{5.99924, 19.5975, 460.894}, {5.99242, -6.19633, 46.0950}, 1691.64, 8.68975, 14.2823, 31.0426},
  };
  for (const Case& c : cases) {
    CAPTURE(c.pressure);
    const ExactRiemannSolver exact(c.left, c.right, kGamma);
    CHECK(exact.star_pressure() == doctest::Approx(c.pressure).epsilon(2e-4));
    if (c.velocity == 0.0) {
      CHECK(std::abs(exact.star_velocity()) < 1e-12);
    } else {
      CHECK(exact.star_velocity() == doctest::Approx(c.velocity).epsilon(2e-4));
    }
    CHECK(exact.star_density_left() == doctest::Approx(c.density_left).epsilon(2e-4));
    CHECK(exact.star_density_right() == doctest::Approx(c.density_right).epsilon(2e-4));
    CHECK(exact.newton_iterations() <= 10);
  }
}

TEST_CASE("ExactRiemann.sod_solution_has_its_waves_where_expected_and_conserves") {
  const ExactRiemannSolver exact({1.0, 0.0, 1.0}, {0.125, 0.0, 0.1}, kGamma);
  const double t = 0.2, x0 = 0.5;
  const auto at = [&](double x) { return exact.sample((x - x0) / t); };
  // At t = 0.2 the fan spans x = 0.263 .. 0.486, the contact is at 0.685 and
  // the shock at 0.850.
  CHECK(at(0.2).density == 1.0);
  CHECK(at(0.2).pressure == 1.0);
  CHECK(at(0.3).density < 1.0);  // in the fan: expanding, accelerating to the right
  CHECK(at(0.3).density > exact.star_density_left());
  CHECK(at(0.3).velocity > 0.0);
  CHECK(at(0.3).velocity < exact.star_velocity());
  CHECK(at(0.6).density == exact.star_density_left());
  CHECK(at(0.6).velocity == exact.star_velocity());
  CHECK(at(0.6).pressure == exact.star_pressure());
  CHECK(at(0.8).density == exact.star_density_right());
  CHECK(at(0.8).pressure == exact.star_pressure());
  CHECK(at(0.9).density == 0.125);
  CHECK(at(0.9).velocity == 0.0);

  // The states at both ends are at rest, so the mass and energy in [0, 1]
  // stay what they were, and the momentum grows by the pressure difference
  // pushing on the ends: (1 - 0.1) t.
  constexpr int cells = 200000;
  double mass = 0, momentum = 0, energy = 0;
  for (int i = 0; i < cells; ++i) {
    const GasState s = at((i + 0.5) / cells);
    mass += s.density / cells;
    momentum += s.density * s.velocity / cells;
    energy += (s.pressure / (kGamma - 1) + 0.5 * s.density * s.velocity * s.velocity) / cells;
  }
  CHECK(mass == doctest::Approx(0.5 * 1.0 + 0.5 * 0.125).epsilon(1e-5));
  CHECK(momentum == doctest::Approx(0.9 * t).epsilon(1e-5));
  CHECK(energy == doctest::Approx(0.5 * 1.0 / 0.4 + 0.5 * 0.1 / 0.4).epsilon(1e-5));
}

TEST_CASE("ExactRiemann.rejects_states_without_a_solution") {
  using weft::test::invalid_argument_message;
  // Two gases flying apart faster than 2 (c_L + c_R) / (gamma - 1) leave a vacuum.
  CHECK(invalid_argument_message([] {
          ExactRiemannSolver({1.0, -10.0, 0.4}, {1.0, 10.0, 0.4});
        }).find("vacuum") != std::string::npos);
  CHECK(invalid_argument_message([] {
          ExactRiemannSolver({1.0, 0.0, -1.0}, {1.0, 0.0, 1.0});
        }) ==
        "ExactRiemannSolver: left state has density 1.000000 and pressure -1.000000, expected both positive");
  CHECK(invalid_argument_message([] {
          ExactRiemannSolver({1.0, 0.0, 1.0}, {0.0, 0.0, 1.0});
        }).find("right state has density 0.000000") != std::string::npos);
  CHECK(invalid_argument_message([] {
          ExactRiemannSolver({1.0, 0.0, 1.0}, {1.0, 0.0, 1.0}, 1.0);
        }) == "ExactRiemannSolver: gamma must be > 1, got 1.000000");
}

// ---- Sod's tube: weft's Solver against the exact solution ----------------------------------

TEST_CASE("Euler2d.sod_density_error_is_small_and_shrinks_with_the_cells") {
  weft::Executor executor(weft::test::cpu_only(kWorkers));
  // t = 0.2: the shock is at x = 0.85, inside the tube; 4 identical rows.
  const double end_time = 0.2;
  std::vector<double> errors;
  for (std::size_t nx : {100, 200, 400}) {
    Solver<StridedView> solver(sod(nx, 4, 2));
    solver.run(executor, 0, end_time);
    CHECK(solver.info().time == end_time);  // the last step is cut to land on it
    errors.push_back(sod_error(solver));
  }
  CAPTURE(errors[0]);
  CAPTURE(errors[1]);
  CAPTURE(errors[2]);
  // Measured (FORCE, cfl 0.9, t = 0.2): 0.0202 with 100 cells, 0.0134 with
  // 200 and 0.00884 with 400 (kg / m^2; the density jumps by 0.875 across the
  // tube). The bound leaves room for a compiler's rounding, not for a wrong
  // flux or boundary.
  CHECK(errors[1] < 0.0145);
  // Each doubling multiplies the error by 0.66, not 0.5, because a
  // first-order scheme smears the contact over a width that grows like the
  // square root of the number of steps, so its share of the error shrinks
  // like sqrt(dx) while the rest shrinks like dx.
  CHECK(errors[1] < 0.7 * errors[0]);
  CHECK(errors[2] < 0.7 * errors[1]);
}

// ---- the split does not change the result ----------------------------------------------

TEST_CASE("Euler2d.field_is_bitwise_the_same_for_every_split_and_layout") {
  weft::Executor executor(weft::test::cpu_only(kWorkers));
  constexpr long steps = 20;
  constexpr std::size_t nx = 64, ny = 32;
  Solver<StridedView> whole(shock_bubble(nx, ny, 1, 1));
  whole.run(executor, steps, 0.0);
  // The shock has reached the bubble by now: the flow is truly 2D.
  CHECK(whole.info().time > 0.05);

  struct Split {
    std::size_t partitions, sub_partitions;
  };
  // Uneven splits too: 32 rows in 3 partitions are 11, 11 and 10 rows.
  const Split splits[] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {3, 1}, {2, 2}, {4, 2}, {3, 2}};
  for (const Split& s : splits) {
    CAPTURE(s.partitions);
    CAPTURE(s.sub_partitions);
    Solver<StridedView> strided(shock_bubble(nx, ny, s.partitions, s.sub_partitions));
    Solver<ContiguousView> contiguous(shock_bubble(nx, ny, s.partitions, s.sub_partitions));
    strided.run(executor, steps, 0.0);
    contiguous.run(executor, steps, 0.0);
    CHECK(field_difference(strided, whole) == "");
    CHECK(field_difference(contiguous, whole) == "");
    CHECK(same_bits(strided.info().time, whole.info().time));
    CHECK(same_bits(contiguous.info().time, whole.info().time));
  }
}

TEST_CASE("Euler2d.a_step_is_two_launches_per_device_without_neighbours_and_four_with_them") {
  // One step: the wave-speed reduction; two host nodes (its finish and the
  // time step); then boundaries, padding copies and both sweeps; then the
  // host's advance. Each device launches its reduction, and then what
  // follows the time step, split once per halo exchange with a neighbour
  // device (docs/device_plans.md): whatever the blocks per device.
  const std::size_t splits[][2] = {{1, 1}, {1, 4}, {2, 1}, {4, 1}, {8, 1}, {4, 3}};
  for (const auto& s : splits) {
    CAPTURE(s[0]);
    CAPTURE(s[1]);
    const Solver<StridedView> solver(shock_bubble(64, 32, s[0], s[1]));
    const weft::DevicePlan plan = solver.graph().device_plan();
    REQUIRE(plan.devices().size() == s[0]);
    for (const int d : plan.devices()) {
      CAPTURE(d);
      const weft::DevicePlanCounts c = plan.counts(d);
      CHECK(c.launches == (s[0] == 1 ? 2 : 4));
      CHECK(c.callbacks == 2);  // the reduction's finish and the advance wait
      CHECK(c.waits == (s[0] == 1 ? 0 : (d == 0 || d == static_cast<int>(s[0]) - 1 ? 2 : 4)));
    }
  }
}

// Counts the jobs of one graph's runs.
struct JobCounter : weft::Observer {
  const void* graph = nullptr;
  std::atomic<long> jobs{0};
  void on_node_begin(const weft::NodeEvent& e) noexcept override {
    if (e.graph == graph) jobs.fetch_add(1, std::memory_order_relaxed);
  }
};

TEST_CASE("Euler2d.the_host_interpreter_runs_one_job_per_segment_with_the_same_bits") {
  weft::Executor executor(weft::test::cpu_only(kWorkers));
  constexpr long steps = 12;
  const std::size_t splits[][2] = {{1, 1}, {2, 1}, {4, 1}, {3, 2}};
  for (const auto& s : splits) {
    CAPTURE(s[0]);
    CAPTURE(s[1]);
    Solver<StridedView> per_node(shock_bubble(64, 32, s[0], s[1]));
    per_node.run(executor, steps, 0.0);
    const weft::test::ScopedVariable interpret("WEFT_GPU_PLAN", "interpret");
    Solver<StridedView> per_segment(shock_bubble(64, 32, s[0], s[1]));
    auto counter = std::make_shared<JobCounter>();
    counter->graph = &per_segment.graph();
    executor.attach(counter);
    per_segment.run(executor, steps, 0.0);
    executor.detach(counter);
    CHECK(field_difference(per_segment, per_node) == "");
    CHECK(same_bits(per_segment.info().time, per_node.info().time));
    // A step: the segments, and 3 host nodes (finish, time step, advance).
    const weft::DevicePlan plan = per_segment.graph().device_plan();
    CHECK(counter->jobs.load() == steps * static_cast<long>(plan.segments.size() + 3));
  }
}

TEST_CASE("Euler2d.shock_bubble_is_mirror_symmetric_about_its_axis") {
  // The set-up is symmetric about y = 0.5, and FORCE treats mirrored cells
  // with mirrored arithmetic (sums in swapped order, differences negated,
  // both exact in IEEE arithmetic): rows j and ny - 1 - j agree bitwise,
  // with the y momentum negated.
  weft::Executor executor(weft::test::cpu_only(kWorkers));
  constexpr std::size_t nx = 96, ny = 48;
  Solver<StridedView> solver(shock_bubble(nx, ny, 3, 2));  // blocks not symmetric about the axis
  solver.run(executor, 30, 0.0);
  double largest_momentum_y = 0;
  for (std::size_t j = 0; j < ny / 2; ++j) {
    for (std::size_t i = 0; i < nx; ++i) {
      CAPTURE(i);
      CAPTURE(j);
      const auto low = solver.field()(i, j);
      const auto high = solver.field()(i, ny - 1 - j);
      CHECK(same_bits(low.density(), high.density()));
      CHECK(same_bits(low.energy(), high.energy()));
      CHECK(same_bits(low.momentum(0), high.momentum(0)));
      // Opposite as numbers; a zero's sign follows the arithmetic, not the mirror.
      CHECK(same_bits(std::abs(low.momentum(1)), std::abs(high.momentum(1))));
      CHECK(low.momentum(1) == -high.momentum(1));
      largest_momentum_y = std::max(largest_momentum_y, std::abs(low.momentum(1)));
    }
  }
  // The bubble has deflected the flow (a field at rest would pass trivially).
  CHECK(largest_momentum_y > 0.1);
}

// ---- weft's Solver against the hand-written reference ---------------------------------------

TEST_CASE("Euler2d.solver_matches_the_reference_solver_bitwise") {
  weft::Executor executor(weft::test::cpu_only(kWorkers));
  SUBCASE("shock-bubble, both layouts") {
    const SolverConfig config = shock_bubble(96, 48, 4, 2);
    ReferenceSolver reference(config);
    Solver<StridedView> strided(config);
    Solver<ContiguousView> contiguous(config);
    reference.run(25, 0.0);
    strided.run(executor, 25, 0.0);
    contiguous.run(executor, 25, 0.0);
    CHECK(reference.info().step == 25);
    CHECK(weft::euler::first_difference(strided, reference) == "");
    CHECK(weft::euler::first_difference(contiguous, reference) == "");
  }
  SUBCASE("one large block, its rows shared among the workers") {
    // A split node shares the rows of a block this large with the other
    // workers (block_kernel.hpp); each cell is still computed alike.
    const SolverConfig config = shock_bubble(160, 128, 1, 1);
    static_assert(160 * 128 >= weft::kParallelBlockCells);
    ReferenceSolver reference(config);
    Solver<StridedView> solver(config);
    reference.run(6, 0.0);
    solver.run(executor, 6, 0.0);
    CHECK(weft::euler::first_difference(solver, reference) == "");
  }
  SUBCASE("Sod, run to an end time in two calls") {
    const SolverConfig config = sod(120, 3, 3);
    ReferenceSolver reference(config);
    Solver<StridedView> solver(config);
    for (double end_time : {0.1, 0.2}) {
      reference.run(0, end_time);
      solver.run(executor, 0, end_time);
      CHECK(reference.info().time == end_time);
      CHECK(weft::euler::first_difference(solver, reference) == "");
    }
  }
  SUBCASE("a different configuration is caught") {
    SolverConfig config = shock_bubble(32, 16, 2, 1);
    ReferenceSolver reference(config);
    config.cfl = 0.8;
    Solver<StridedView> solver(config);
    reference.run(3, 0.0);
    solver.run(executor, 3, 0.0);
    CHECK(weft::euler::first_difference(solver, reference).find("times differ") == 0);
    reference.run(1, 0.0);
    CHECK(weft::euler::first_difference(solver, reference) == "step counts differ: 3 and 4");
  }
}

// ---- bad configurations ---------------------------------------------------------------

TEST_CASE("Euler2d.bad_configurations_are_rejected_with_a_clear_message") {
  using weft::test::invalid_argument_message;
  // The domain is split along y: every block needs at least one row.
  CHECK(invalid_argument_message([] { Solver<StridedView> s(shock_bubble(16, 3, 4, 1)); }) ==
        "Tensor: dimension 1 has 3 cells, too few for 4 blocks (partitions (1, 4) times sub-partitions (1, "
        "1))");
  CHECK(invalid_argument_message([] { Solver<ContiguousView> s(shock_bubble(16, 7, 4, 2)); }) ==
        "Tensor: dimension 1 has 7 cells, too few for 8 blocks (partitions (1, 4) times sub-partitions (1, "
        "2))");
  CHECK(invalid_argument_message([] {
          Solver<StridedView> s(shock_bubble(16, 8, 0, 1));
        }).find("must all be at least 1") != std::string::npos);

  weft::Executor executor(weft::test::cpu_only(1));
  Solver<StridedView> solver(shock_bubble(16, 8, 2, 1));
  CHECK(invalid_argument_message([&] { solver.run(executor, 0, 0.0); }) ==
        "Solver::run: give steps or an end time");
  CHECK(solver.info().step == 0);  // nothing ran

  CHECK(invalid_argument_message([] { ReferenceSolver r(shock_bubble(0, 8, 1, 1)); }) ==
        "ReferenceSolver: grid 0 x 8 has no cells, expected at least 1 x 1");
  CHECK(invalid_argument_message([] { ReferenceSolver r(shock_bubble(8, 8, 1, 1), 0); }) ==
        "ReferenceSolver: 0 threads, expected >= 1");
}

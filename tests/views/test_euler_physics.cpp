// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Euler physics of the flagship example (examples/euler2d): one state
// type in three layouts, the physical flux and Toro's FORCE flux.
#include "euler_physics.hpp"

#include <weft/views/element_array.hpp>
#include <weft/views/tensor.hpp>
#include <weft/views/unrolled_for.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace {

using weft::ContiguousOwned;
using weft::ContiguousView;
using weft::StridedView;
using weft::euler::State;
using Owned = State<double, ContiguousOwned>;

constexpr double kGamma = 1.4;

// A smooth, non-trivial flow: every variable varies from cell to cell.
Owned sample_state(std::size_t i) {
  const double x = static_cast<double>(i);
  return weft::euler::from_primitive(1.0 + 0.3 * std::sin(0.7 * x), 0.4 * std::cos(1.3 * x),
                                     -0.2 + 0.25 * std::sin(2.1 * x), 1.0 + 0.5 * std::cos(0.9 * x), kGamma);
}

template <class A, class B>
void check_bitwise_equal(const A& a, const B& b) {
  for (std::size_t k = 0; k < Owned::conserved_count; ++k) {
    CAPTURE(k);
    CHECK(a.conserved(k) == b.conserved(k));
  }
}

}  // namespace

TEST_CASE("EulerPhysics.primitive_variables_round_trip") {
  const Owned s = weft::euler::from_primitive(1.25, 2.0, -0.5, 3.0, kGamma);
  CHECK(s.density() == 1.25);
  CHECK(s.momentum(0) == 2.5);
  CHECK(s.momentum(1) == -0.625);
  // E = p / (gamma - 1) + rho |u|^2 / 2
  CHECK(s.energy() == doctest::Approx(3.0 / 0.4 + 0.5 * 1.25 * 4.25));
  CHECK(s.velocity(0) == 2.0);
  CHECK(s.velocity(1) == -0.5);
  CHECK(s.pressure(kGamma) == doctest::Approx(3.0));
  CHECK(s.sound_speed(kGamma) == doctest::Approx(std::sqrt(1.4 * 3.0 / 1.25)));
  CHECK(weft::euler::max_wave_speed(s, kGamma) == doctest::Approx(2.0 + std::sqrt(1.4 * 3.0 / 1.25)));
  // gamma is a parameter: a monatomic gas (gamma 5/3) at rest holds E = p / (5/3 - 1) = 1.5 p.
  const Owned monatomic = weft::euler::from_primitive(1.0, 0.0, 0.0, 2.0, 5.0 / 3.0);
  CHECK(monatomic.energy() == doctest::Approx(3.0));
  CHECK(monatomic.pressure(5.0 / 3.0) == doctest::Approx(2.0));
}

TEST_CASE("EulerPhysics.flux_of_a_state_at_rest_is_pressure_only") {
  const Owned rest = weft::euler::from_primitive(1.2, 0.0, 0.0, 2.5, kGamma);
  for (std::size_t dim = 0; dim < 2; ++dim) {
    CAPTURE(dim);
    const Owned f = weft::euler::flux(rest, dim, kGamma);
    CHECK(f.density() == 0.0);  // no mass crosses the face
    CHECK(f.energy() == 0.0);   // nor energy
    CHECK(f.momentum(dim) == doctest::Approx(2.5));
    CHECK(f.momentum(1 - dim) == 0.0);  // no shear
  }
}

TEST_CASE("EulerPhysics.flux_of_a_moving_state") {
  // rho = 2 kg/m^3, u = (3, -1) m/s, p = 5 Pa: E = 5 / 0.4 + 0.5 * 2 * 10 = 22.5 J/m^3.
  const Owned s = weft::euler::from_primitive(2.0, 3.0, -1.0, 5.0, kGamma);
  const Owned f = weft::euler::flux(s, weft::dim_x, kGamma);
  CHECK(f.density() == doctest::Approx(2.0 * 3.0));                // rho u
  CHECK(f.energy() == doctest::Approx((22.5 + 5.0) * 3.0));        // (E + p) u
  CHECK(f.momentum(0) == doctest::Approx(2.0 * 3.0 * 3.0 + 5.0));  // rho u u + p
  CHECK(f.momentum(1) == doctest::Approx(2.0 * -1.0 * 3.0));       // rho v u
}

TEST_CASE("EulerPhysics.flux_along_y_mirrors_flux_along_x") {
  // Swapping the axes swaps the momenta: the physics has no preferred direction.
  const Owned s = weft::euler::from_primitive(0.8, 1.5, -0.7, 1.9, kGamma);
  const Owned mirrored = weft::euler::from_primitive(0.8, -0.7, 1.5, 1.9, kGamma);
  const Owned g = weft::euler::flux(s, weft::dim_y, kGamma);
  const Owned f = weft::euler::flux(mirrored, weft::dim_x, kGamma);
  CHECK(g.density() == f.density());
  CHECK(g.energy() == f.energy());
  CHECK(g.momentum(0) == f.momentum(1));
  CHECK(g.momentum(1) == f.momentum(0));
  CHECK(g.density() == doctest::Approx(0.8 * -0.7));
}

TEST_CASE("EulerPhysics.force_flux_of_equal_states_is_the_physical_flux") {
  // Consistency: with no jump across the face, every term that averages or
  // differences the two sides vanishes exactly.
  for (std::size_t i = 0; i < 5; ++i) {
    const Owned s = sample_state(i);
    for (std::size_t dim = 0; dim < 2; ++dim) {
      CAPTURE(i);
      CAPTURE(dim);
      check_bitwise_equal(weft::euler::force_flux(s, s, dim, 0.3, kGamma), weft::euler::flux(s, dim, kGamma));
    }
  }
  // ... and differs from it where there is a jump (Sod's left and right states).
  const Owned left = weft::euler::from_primitive(1.0, 0.0, 0.0, 1.0, kGamma);
  const Owned right = weft::euler::from_primitive(0.125, 0.0, 0.0, 0.1, kGamma);
  const Owned f = weft::euler::force_flux(left, right, weft::dim_x, 0.5, kGamma);
  CHECK(f.density() > 0.0);  // mass flows from high to low pressure
  CHECK(f.energy() > 0.0);
}

TEST_CASE("EulerPhysics.force_flux_matches_toros_formula") {
  // Toro writes FORCE as (F_L + 2 F(U_half) + F_R - dx/dt (U_R - U_L)) / 4, with
  // U_half = (U_L + U_R) / 2 - dt/dx (F_R - F_L) / 2; an independent
  // evaluation of that form on a pair with a jump in every variable.
  const Owned left = weft::euler::from_primitive(1.0, 0.75, -0.3, 1.0, kGamma);
  const Owned right = weft::euler::from_primitive(0.125, -0.2, 0.4, 0.1, kGamma);
  const double dt_over_dx = 0.4;
  for (std::size_t dim = 0; dim < 2; ++dim) {
    CAPTURE(dim);
    const Owned fl = weft::euler::flux(left, dim, kGamma), fr = weft::euler::flux(right, dim, kGamma);
    Owned half{};
    for (std::size_t k = 0; k < Owned::conserved_count; ++k) {
      half.conserved(k) =
          (left.conserved(k) + right.conserved(k)) / 2 - dt_over_dx * (fr.conserved(k) - fl.conserved(k)) / 2;
    }
    const Owned fh = weft::euler::flux(half, dim, kGamma);
    const Owned force = weft::euler::force_flux(left, right, dim, dt_over_dx, kGamma);
    for (std::size_t k = 0; k < Owned::conserved_count; ++k) {
      CAPTURE(k);
      const double expected = (fl.conserved(k) + 2 * fh.conserved(k) + fr.conserved(k) -
                               (right.conserved(k) - left.conserved(k)) / dt_over_dx) /
                              4;
      CHECK(force.conserved(k) == doctest::Approx(expected).epsilon(1e-12));
    }
  }
}

TEST_CASE("EulerPhysics.flux_differences_telescope_over_a_periodic_row") {
  // A finite-volume update only moves conserved quantities between cells:
  // summed over a periodic row, the changes cancel to round-off. Each cell
  // computes both its faces itself, as a stencil kernel does, so this also
  // checks that a face's flux comes out the same from either side.
  constexpr std::size_t n = 64;
  constexpr double dt_over_dx = 0.2;
  std::vector<Owned> row;
  for (std::size_t i = 0; i < n; ++i) row.push_back(sample_state(i));
  for (std::size_t dim = 0; dim < 2; ++dim) {
    CAPTURE(dim);
    for (std::size_t k = 0; k < Owned::conserved_count; ++k) {
      double total_change = 0.0, total = 0.0, largest_change = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        const Owned& west_cell = row[(i + n - 1) % n];
        const Owned& east_cell = row[(i + 1) % n];
        const Owned west = weft::euler::force_flux(west_cell, row[i], dim, dt_over_dx, kGamma);
        const Owned east = weft::euler::force_flux(row[i], east_cell, dim, dt_over_dx, kGamma);
        const double change = -dt_over_dx * (east.conserved(k) - west.conserved(k));
        total_change += change;
        total += std::abs(row[i].conserved(k));
        largest_change = std::max(largest_change, std::abs(change));
      }
      CAPTURE(k);
      CHECK(largest_change > 1e-3);  // the flow really changes
      CHECK(std::abs(total_change) <= 1e-14 * total);
    }
  }
}

TEST_CASE_TEMPLATE("EulerPhysics.tensor_handles_give_bitwise_the_fluxes_of_owned_states", Layout, StridedView,
                   ContiguousView) {
  // The same template code runs on a handle into a tensor, so a strided or
  // contiguous solver computes exactly what an owned-state solver does.
  constexpr std::size_t n = 9;
  weft::Tensor<State<double, Layout>, 1> cells({3}, 1, n);
  std::vector<Owned> owned;
  for (std::size_t i = 0; i < n; ++i) {
    owned.push_back(sample_state(i));
    cells(i) = owned.back();
  }
  cells.exchange_padding();
  for (std::size_t block = 0; block < cells.block_count(); ++block) {
    for (std::ptrdiff_t local = 0; local < 3; ++local) {
      const auto it = cells.iterator(block, {local});
      const std::size_t i = block * 3 + static_cast<std::size_t>(local);
      CAPTURE(i);
      const auto here = *it;
      check_bitwise_equal(here, owned[i]);
      CHECK(here.pressure(kGamma) == owned[i].pressure(kGamma));
      CHECK(here.sound_speed(kGamma) == owned[i].sound_speed(kGamma));
      check_bitwise_equal(weft::euler::flux(here, weft::dim_x, kGamma),
                          weft::euler::flux(owned[i], weft::dim_x, kGamma));
      if (i + 1 < n) {  // the neighbour may sit in the padding, copied from the next block
        check_bitwise_equal(
            weft::euler::force_flux(here, *it.offset(weft::dim_x, 1), weft::dim_x, 0.3, kGamma),
            weft::euler::force_flux(owned[i], owned[i + 1], weft::dim_x, 0.3, kGamma));
        // a handle and an owned state mix freely
        check_bitwise_equal(weft::euler::force_flux(here, owned[i + 1], weft::dim_y, 0.3, kGamma),
                            weft::euler::force_flux(owned[i], owned[i + 1], weft::dim_y, 0.3, kGamma));
      }
    }
  }
}

TEST_CASE("EulerPhysics.strided_and_contiguous_arrays_agree_bitwise") {
  constexpr std::size_t n = 17;
  weft::ElementArray<State<float, StridedView>> strided(n);
  weft::ElementArray<State<float, ContiguousView>> contiguous(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float x = static_cast<float>(i);
    strided[i].set_primitive(1.0f + 0.01f * x, 0.1f * x, -0.05f * x, 1.0f + 0.02f * x);  // gamma 1.4
    contiguous[i] = strided[i];
  }
  // The strided layout really is a struct of arrays: density i + 1 follows density i.
  CHECK(&strided[1].density() == &strided[0].density() + 1);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    CAPTURE(i);
    for (std::size_t dim = 0; dim < 2; ++dim) {
      check_bitwise_equal(weft::euler::force_flux(strided[i], strided[i + 1], dim, 0.25),
                          weft::euler::force_flux(contiguous[i], contiguous[i + 1], dim, 0.25));
    }
  }
}

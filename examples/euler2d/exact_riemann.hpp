// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The exact solution of the Riemann problem for the 1D Euler equations of an
// ideal gas (Toro, "Riemann Solvers and Numerical Methods for Fluid
// Dynamics", chapter 4): two constant states meet at x0 at t = 0, and the
// solution at t > 0 depends on (x - x0) / t only.
//
//   weft::euler::ExactRiemannSolver sod({1.0, 0.0, 1.0}, {0.125, 0.0, 0.1});  // rho, u, p
//   sod.star_pressure();                       // 0.30313 (Toro, table 4.3)
//   const weft::euler::GasState at = sod.sample((x - 0.5) / 0.25);
//
//   // L1 density error of a numerical Sod run against it (1 for the unit tube):
//   weft::euler::sod_l1_density_error(nx, ny, time, 1.4,
//                                     [&](std::size_t i, std::size_t j) { return solver.density(i, j); });
//
// The solution has a left wave (a shock or a rarefaction fan), a contact
// discontinuity moving at the star velocity u*, and a right wave. Between
// the two waves lies the star region, of uniform pressure p* and velocity u*
// and of different densities on either side of the contact. p* is the root
// of
//   f(p) = f_L(p) + f_R(p) + (u_R - u_L) = 0,
// where f_K (K = L, R) relates the velocity jump across wave K to the
// pressure behind it: the Rankine-Hugoniot relations for a shock (p > p_K),
// the isentropic Riemann invariant for a rarefaction (p <= p_K). f is
// increasing and concave, so every Newton step lands left of the root (a
// tangent lies above f) and from there the iterates climb to it
// monotonically: the iteration converges from any positive guess. The guess
// comes from a linearised (primitive-variable) solver, or from the
// two-rarefaction or two-shock approximation where that one is the better,
// so that it takes a few steps only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "problems.hpp"

namespace weft::euler {

// Primitive variables of a 1D flow: kg / m^3, m / s, Pa.
struct GasState {
  double density = 0, velocity = 0, pressure = 0;
};

class ExactRiemannSolver {
 public:
  // Throws std::invalid_argument for a non-positive density or pressure or
  // gamma <= 1, and when the two states would pull a vacuum apart between
  // them (no star region: Toro's pressure positivity condition fails).
  ExactRiemannSolver(const GasState& left, const GasState& right, double gamma = 1.4)
      : left_(left), right_(right), gamma_(gamma) {
    if (!(gamma > 1.0))
      throw std::invalid_argument("ExactRiemannSolver: gamma must be > 1, got " + num(gamma));
    check_state("left", left);
    check_state("right", right);
    left_sound_ = std::sqrt(gamma * left.pressure / left.density);
    right_sound_ = std::sqrt(gamma * right.pressure / right.density);
    const double escape = 2.0 / (gamma - 1.0) * (left_sound_ + right_sound_);
    if (escape <= right.velocity - left.velocity) {
      throw std::invalid_argument("ExactRiemannSolver: the states separate into a vacuum (velocity jump " +
                                  num(right.velocity - left.velocity) + " >= " + num(escape) +
                                  "), expected a star region of positive pressure");
    }
    solve_star_pressure();
  }

  double star_pressure() const noexcept { return star_pressure_; }
  double star_velocity() const noexcept { return star_velocity_; }
  // Densities of the star region left and right of the contact.
  double star_density_left() const noexcept { return star_density(left_); }
  double star_density_right() const noexcept { return star_density(right_); }
  int newton_iterations() const noexcept { return iterations_; }

  // The solution along the ray (x - x0) / t = speed.
  GasState sample(double speed) const noexcept {
    if (speed <= star_velocity_) return sample_left(left_, left_sound_, star_velocity_, speed);
    // The right half is the left half of the mirrored problem (x -> -x, u -> -u).
    const GasState mirrored{right_.density, -right_.velocity, right_.pressure};
    GasState s = sample_left(mirrored, right_sound_, -star_velocity_, -speed);
    s.velocity = -s.velocity;
    return s;
  }

 private:
  static std::string num(double v) { return std::to_string(v); }
  static void check_state(const char* side, const GasState& s) {
    if (!(s.density > 0.0) || !(s.pressure > 0.0)) {
      throw std::invalid_argument(std::string("ExactRiemannSolver: ") + side + " state has density " +
                                  num(s.density) + " and pressure " + num(s.pressure) +
                                  ", expected both positive");
    }
  }

  // f_K(p) and its derivative for the wave between state K and the star region.
  struct PressureFunction {
    double value, slope;
  };
  PressureFunction pressure_function(double p, const GasState& k, double sound) const noexcept {
    const double g = gamma_;
    if (p > k.pressure) {  // shock: Rankine-Hugoniot
      const double a = 2.0 / ((g + 1.0) * k.density);
      const double b = (g - 1.0) / (g + 1.0) * k.pressure;
      const double root = std::sqrt(a / (p + b));
      return {(p - k.pressure) * root, root * (1.0 - (p - k.pressure) / (2.0 * (b + p)))};
    }
    // rarefaction: isentropic, along the Riemann invariant
    const double ratio = p / k.pressure;
    return {2.0 * sound / (g - 1.0) * (std::pow(ratio, (g - 1.0) / (2.0 * g)) - 1.0),
            std::pow(ratio, -(g + 1.0) / (2.0 * g)) / (k.density * sound)};
  }

  double initial_guess() const noexcept {
    const double g = gamma_;
    const GasState &l = left_, &r = right_;
    const double du = r.velocity - l.velocity;
    const double p_min = std::min(l.pressure, r.pressure), p_max = std::max(l.pressure, r.pressure);
    // Linearised solver in primitive variables: good for weak waves.
    const double linearised =
        std::max(0.0, 0.5 * (l.pressure + r.pressure) -
                          0.125 * du * (l.density + r.density) * (left_sound_ + right_sound_));
    if (p_max / p_min < 2.0 && p_min <= linearised && linearised <= p_max) return linearised;
    if (linearised < p_min) {
      // Both waves rarefactions (exact then).
      const double z = (g - 1.0) / (2.0 * g);
      const double numerator = left_sound_ + right_sound_ - 0.5 * (g - 1.0) * du;
      const double den = left_sound_ / std::pow(l.pressure, z) + right_sound_ / std::pow(r.pressure, z);
      return std::pow(numerator / den, 1.0 / z);
    }
    // Both waves shocks, linearised about the guess above.
    const auto weight = [g, linearised](const GasState& k) {
      const double a = 2.0 / ((g + 1.0) * k.density), b = (g - 1.0) / (g + 1.0) * k.pressure;
      return std::sqrt(a / (linearised + b));
    };
    const double wl = weight(l), wr = weight(r);
    return (wl * l.pressure + wr * r.pressure - du) / (wl + wr);
  }

  void solve_star_pressure() {
    constexpr double kTolerance = 1e-14;  // relative change of p between iterations
    constexpr int kMaxIterations = 100;
    // A first step from far right of the root can land below zero; a tiny
    // positive pressure is also left of the root, and climbs from there.
    constexpr double kFloor = 1e-12;
    const double du = right_.velocity - left_.velocity;
    double p = std::max(kFloor, initial_guess());
    for (iterations_ = 1; iterations_ <= kMaxIterations; ++iterations_) {
      const PressureFunction fl = pressure_function(p, left_, left_sound_);
      const PressureFunction fr = pressure_function(p, right_, right_sound_);
      const double next = std::max(kFloor, p - (fl.value + fr.value + du) / (fl.slope + fr.slope));
      const double change = 2.0 * std::abs(next - p) / (next + p);
      p = next;
      if (change < kTolerance) break;
    }
    if (iterations_ > kMaxIterations)
      throw std::runtime_error("ExactRiemannSolver: Newton iteration for p* did not converge");
    star_pressure_ = p;
    star_velocity_ =
        0.5 * (left_.velocity + right_.velocity) + 0.5 * (pressure_function(p, right_, right_sound_).value -
                                                          pressure_function(p, left_, left_sound_).value);
  }

  double star_density(const GasState& k) const noexcept {
    const double g = gamma_, ratio = star_pressure_ / k.pressure;
    if (ratio > 1.0) {  // behind a shock
      const double m = (g - 1.0) / (g + 1.0);
      return k.density * (ratio + m) / (m * ratio + 1.0);
    }
    return k.density * std::pow(ratio, 1.0 / g);  // isentropic
  }

  // The solution left of the contact (speed <= star_velocity) when the
  // state there is `k` with sound speed `sound`.
  GasState sample_left(const GasState& k, double sound, double star_velocity, double speed) const noexcept {
    const double g = gamma_;
    const double ratio = star_pressure_ / k.pressure;
    const GasState star{star_density(k), star_velocity, star_pressure_};
    if (ratio > 1.0) {  // a shock, at its Rankine-Hugoniot speed
      const double shock =
          k.velocity - sound * std::sqrt((g + 1.0) / (2.0 * g) * ratio + (g - 1.0) / (2.0 * g));
      return speed <= shock ? k : star;
    }
    const double head = k.velocity - sound;  // of the rarefaction fan
    if (speed <= head) return k;
    const double tail = star_velocity - sound * std::pow(ratio, (g - 1.0) / (2.0 * g));
    if (speed > tail) return star;
    // Inside the fan every characteristic u - c = (x - x0) / t starts at x0;
    // the left Riemann invariant u + 2c / (gamma - 1) is that of `k`.
    const double c = 2.0 / (g + 1.0) * (sound + 0.5 * (g - 1.0) * (k.velocity - speed));
    return {k.density * std::pow(c / sound, 2.0 / (g - 1.0)),
            2.0 / (g + 1.0) * (sound + 0.5 * (g - 1.0) * k.velocity + speed),
            k.pressure * std::pow(c / sound, 2.0 * g / (g - 1.0))};
  }

  GasState left_, right_;
  double gamma_;
  double left_sound_ = 0, right_sound_ = 0;
  double star_pressure_ = 0, star_velocity_ = 0;
  int iterations_ = 0;
};

// Sod's shock tube of problems.hpp as a Riemann problem: its two states, and
// where they meet (the face after the last left cell: x = 0.5 for even nx).
struct SodTube {
  ExactRiemannSolver exact;
  double diaphragm;  // m
  double length;     // m
};

inline SodTube sod_tube(std::size_t nx, std::size_t ny, double gamma) {
  if (nx == 0 || ny == 0) throw std::invalid_argument("sod_tube: the grid has no cells");
  const Primitive l = initial_state(Problem::sod, 0, 0, nx, ny, gamma);
  const Primitive r = initial_state(Problem::sod, nx - 1, 0, nx, ny, gamma);
  const double dx = cell_size(Problem::sod, nx, ny);
  return {
      ExactRiemannSolver({l.density, l.velocity_x, l.pressure}, {r.density, r.velocity_x, r.pressure}, gamma),
      static_cast<double>((nx + 1) / 2) * dx, static_cast<double>(nx) * dx};
}

// The L1 norm of the density error of a Sod run on an nx x ny grid at time
// `time` (> 0): the mean over cells of |density(i, j) - exact|, the exact
// solution sampled at cell centres, times the tube's length (kg / m^2).
// euler2d's first-order scheme gives 0.0134 on 200 cells at t = 0.2, and
// about 0.66 of that per doubling of the cells (tests/euler2d).
template <class DensityAt>
double sod_l1_density_error(std::size_t nx, std::size_t ny, double time, double gamma, DensityAt&& density) {
  if (!(time > 0.0))
    throw std::invalid_argument("sod_l1_density_error: time must be positive, got " + std::to_string(time));
  const SodTube tube = sod_tube(nx, ny, gamma);
  const double dx = cell_size(Problem::sod, nx, ny);
  double sum = 0.0;
  for (std::size_t i = 0; i < nx; ++i) {
    const double x = (static_cast<double>(i) + 0.5) * dx;
    const double exact = tube.exact.sample((x - tube.diaphragm) / time).density;
    for (std::size_t j = 0; j < ny; ++j) sum += std::abs(density(i, j) - exact);
  }
  return sum / static_cast<double>(nx * ny) * tube.length;
}

}  // namespace weft::euler

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The initial conditions euler2d solves. Cells are square; their size is
// cell_size(): the shock-bubble domain is 1 high (nx / ny long), Sod's tube
// is 1 long (ny / nx high, its rows all alike).
//
// shock-bubble  Ripple section 8: a Mach 3.81 shock in air (gamma 1.4, at
//               rest, density 1, pressure 1) moving along +x towards a
//               bubble of density 0.1 in pressure equilibrium. The shock
//               starts at x = 0.2, the bubble is centred at (0.6, 0.5) with
//               radius 0.25; the post-shock state follows from the
//               Rankine-Hugoniot relations. The set-up is symmetric about
//               y = 0.5, the bubble's axis.
// sod           Sod's shock tube along x: (rho, u, p) = (1, 0, 1) left of
//               x = L/2 and (0.125, 0, 0.1) right of it, uniform along y.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string_view>

namespace weft::euler {

enum class Problem { shock_bubble, sod };

inline std::optional<Problem> problem_from_string(std::string_view name) {
  if (name == "shock-bubble") return Problem::shock_bubble;
  if (name == "sod") return Problem::sod;
  return std::nullopt;
}
inline const char* to_string(Problem p) { return p == Problem::sod ? "sod" : "shock-bubble"; }

struct Primitive {
  double density, velocity_x, velocity_y, pressure;
};

// The gas behind a shock of Mach number `mach` running into gas at rest
// (normal-shock Rankine-Hugoniot relations).
inline Primitive post_shock(double mach, double density, double pressure, double gamma) {
  const double m2 = mach * mach;
  const double shocked_density = density * (gamma + 1) * m2 / ((gamma - 1) * m2 + 2);
  const double shocked_pressure = pressure * (2 * gamma * m2 - (gamma - 1)) / (gamma + 1);
  const double shock_speed = mach * std::sqrt(gamma * pressure / density);
  return {shocked_density, shock_speed * (1 - density / shocked_density), 0.0, shocked_pressure};
}

inline double cell_size(Problem problem, std::size_t nx, std::size_t ny) {
  return 1.0 / static_cast<double>(problem == Problem::sod ? nx : ny);
}

// The initial state of cell (i, j) of an nx x ny grid.
inline Primitive initial_state(Problem problem, std::size_t i, std::size_t j, std::size_t nx, std::size_t ny,
                               double gamma) {
  const double dx = cell_size(problem, nx, ny);
  const double x = (static_cast<double>(i) + 0.5) * dx;
  if (problem == Problem::sod) {
    return 2 * i < nx ? Primitive{1.0, 0.0, 0.0, 1.0} : Primitive{0.125, 0.0, 0.0, 0.1};
  }
  if (x < 0.2) return post_shock(3.81, 1.0, 1.0, gamma);
  // Distance from the axis through the mirrored index, so that rows j and
  // ny - 1 - j get bitwise the same state.
  const std::size_t mirrored = std::min(j, ny - 1 - j);
  const double from_axis = 0.5 - (static_cast<double>(mirrored) + 0.5) * dx;
  const double from_centre_x = x - 0.6;
  const bool in_bubble = from_centre_x * from_centre_x + from_axis * from_axis < 0.25 * 0.25;
  return {in_bubble ? 0.1 : 1.0, 0.0, 0.0, 1.0};
}

}  // namespace weft::euler

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What euler2d's images show (--field): one value per cell computed from the
// conserved state of a host field, and the colour scale to draw it with.
//
//   const std::optional<Quantity> q = quantity_from_string("schlieren");  // nullopt if unknown
//   const std::vector<double> v = quantity_values(*q, field, nx, ny, 1.4);  // v[j * nx + i]
//   write_png(path, nx, ny, [&](std::size_t i, std::size_t j) { return v[j * nx + i]; },
//             quantity_scale(*q, v), quantity_title(*q, quantity_scale(*q, v)));
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "png_image.hpp"

namespace weft::euler {

enum class Quantity { density, pressure, velocity, schlieren };

inline constexpr std::string_view kQuantityNames = "density, pressure, velocity or schlieren";

inline std::optional<Quantity> quantity_from_string(std::string_view name) {
  if (name == "density") return Quantity::density;
  if (name == "pressure") return Quantity::pressure;
  if (name == "velocity") return Quantity::velocity;
  if (name == "schlieren") return Quantity::schlieren;
  return std::nullopt;
}

// Numerical schlieren: S = exp(-k |grad rho| / max |grad rho|), so uniform
// gas is white and the steepest density gradient (a shock) is black; k sets
// how faint a gradient still shows.
inline constexpr double kSchlierenK = 15.0;

namespace detail {

// The schlieren of a row-major density field: central differences inside,
// one-sided at the edges (the cell size cancels in the ratio).
inline std::vector<double> schlieren(const std::vector<double>& rho, std::size_t nx, std::size_t ny) {
  const auto at = [&](std::size_t i, std::size_t j) { return rho[j * nx + i]; };
  const auto slope = [](double lo, double hi, std::size_t cells) {
    return cells > 0 ? (hi - lo) / static_cast<double>(cells) : 0.0;
  };
  std::vector<double> gradient(rho.size());
  double steepest = 0.0;
  for (std::size_t j = 0; j < ny; ++j) {
    for (std::size_t i = 0; i < nx; ++i) {
      const std::size_t w = i > 0 ? i - 1 : i, e = i + 1 < nx ? i + 1 : i;
      const std::size_t s = j > 0 ? j - 1 : j, n = j + 1 < ny ? j + 1 : j;
      const double gx = slope(at(w, j), at(e, j), e - w), gy = slope(at(i, s), at(i, n), n - s);
      const double g = std::sqrt(gx * gx + gy * gy);
      gradient[j * nx + i] = g;
      if (std::isfinite(g)) steepest = std::max(steepest, g);
    }
  }
  for (double& g : gradient) g = steepest > 0.0 ? std::exp(-kSchlierenK * g / steepest) : 1.0;
  return gradient;
}

}  // namespace detail

// The quantity at every cell of `field` (a host tensor with every block,
// cells (i, j)), row-major: value (i, j) at j * nx + i. Velocity is the
// speed |u|.
template <class Field>
std::vector<double> quantity_values(Quantity q, const Field& field, std::size_t nx, std::size_t ny,
                                    double gamma) {
  std::vector<double> values(nx * ny);
  for (std::size_t j = 0; j < ny; ++j) {
    for (std::size_t i = 0; i < nx; ++i) {
      const auto cell = field(i, j);
      double v = cell.density();
      if (q == Quantity::pressure) v = cell.pressure(gamma);
      if (q == Quantity::velocity) v = std::hypot(cell.velocity(0), cell.velocity(1));
      values[j * nx + i] = v;
    }
  }
  return q == Quantity::schlieren ? detail::schlieren(values, nx, ny) : values;
}

// The scale an image of `values` uses: the values' own range (so the colour
// bar reads the extremes), logarithmic for density and pressure, which span
// orders of magnitude (a bubble at 0.1, shocked gas near 8); schlieren is in
// (0, 1] by construction and drawn in grey.
inline ColourScale quantity_scale(Quantity q, const std::vector<double>& values) {
  if (q == Quantity::schlieren) return {0.0, 1.0, false, ColourMap::grey};
  double low = std::numeric_limits<double>::infinity(), high = -low;
  for (const double v : values) {
    if (!std::isfinite(v)) continue;
    low = std::min(low, v);
    high = std::max(high, v);
  }
  if (low > high) return {0.0, 1.0, false, ColourMap::ramp};  // nothing finite
  const bool logarithmic = (q == Quantity::density || q == Quantity::pressure) && low > 0.0;
  return {low, high, logarithmic, ColourMap::ramp};
}

// The colour bar's title: the quantity, and "(log)" on a log scale.
inline std::string quantity_title(Quantity q, const ColourScale& scale) {
  const char* name = q == Quantity::density    ? "density"
                     : q == Quantity::pressure ? "pressure"
                     : q == Quantity::velocity ? "speed"
                                               : "schlieren";
  return std::string(name) + (scale.logarithmic ? " (log)" : "");
}

}  // namespace weft::euler

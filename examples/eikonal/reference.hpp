// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The serial reference for fim.hpp: the same Jacobi passes over plain arrays,
// with the same local solver and band, so that the graph's field must equal
// it bit for bit.
//
//   const auto ref = weft::eikonal::solve_serial<double>(problem);
//   ref.values[j * problem.nx + i];   // +inf outside the band
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "fim.hpp"

namespace weft::eikonal {

template <class T>
struct SerialResult {
  std::vector<T> values;     // row-major, nx * ny
  long changing_passes = 0;  // passes that lowered some cell (one more, changing none, ended it)
};

template <class T>
SerialResult<T> solve_serial(const Problem& p) {
  check_problem(p);
  const std::size_t nx = p.nx, ny = p.ny;
  const T inf = std::numeric_limits<T>::infinity();
  const T h = static_cast<T>(p.h());
  const T limit = static_cast<T>(static_cast<double>(p.band) * p.h());
  std::vector<T> value(nx * ny, inf), next_value(nx * ny);
  std::vector<int> changed(nx * ny, 0), next_changed(nx * ny);
  value[p.sy() * nx + p.sx()] = T(0);
  changed[p.sy() * nx + p.sx()] = 1;
  SerialResult<T> result;
  for (bool any = true; any;) {
    any = false;
    for (std::size_t j = 0; j < ny; ++j) {
      for (std::size_t i = 0; i < nx; ++i) {
        const std::size_t at = j * nx + i;
        const T west = i > 0 ? value[at - 1] : inf, east = i + 1 < nx ? value[at + 1] : inf;
        const T south = j > 0 ? value[at - nx] : inf, north = j + 1 < ny ? value[at + nx] : inf;
        const bool near_change = (i > 0 && changed[at - 1]) || (i + 1 < nx && changed[at + 1]) ||
                                 (j > 0 && changed[at - nx]) || (j + 1 < ny && changed[at + nx]);
        next_value[at] = value[at];
        next_changed[at] = 0;
        if (!near_change) continue;
        const T solved = godunov_update(std::fmin(west, east), std::fmin(south, north), h);
        if (solved < value[at] && solved <= limit) {
          next_value[at] = solved;
          next_changed[at] = 1;
          any = true;
        }
      }
    }
    value.swap(next_value);
    changed.swap(next_changed);
    if (any) ++result.changing_passes;
  }
  result.values = std::move(value);
  return result;
}

}  // namespace weft::eikonal

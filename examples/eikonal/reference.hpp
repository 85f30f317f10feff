// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The serial reference for fim.hpp: the same Jacobi passes over plain arrays,
// with the same local solver and band, so that the graph's field must equal
// it bit for bit.
//
//   const auto ref = weft::eikonal::solve_serial<double>(problem);      // 2D
//   ref.values[j * problem.nx + i];   // +inf outside the band
//   const auto cube = weft::eikonal::solve_serial<float, 3>(problem);   // 3D
//   cube.values[(k * problem.ny + j) * problem.nx + i];
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
  std::vector<T> values;     // x fastest, then y, then z: nx * ny * nz
  long changing_passes = 0;  // passes that lowered some cell (one more, changing none, ended it)
};

template <class T, std::size_t Dims = 2>
SerialResult<T> solve_serial(const Problem& p) {
  check_problem<Dims>(p);
  const std::size_t nx = p.nx, ny = p.ny, nz = p.nz, plane = nx * ny;
  const T inf = std::numeric_limits<T>::infinity();
  const T h = static_cast<T>(p.h());
  const T limit = static_cast<T>(static_cast<double>(p.band) * p.h());
  std::vector<T> value(plane * nz, inf), next_value(plane * nz);
  std::vector<int> changed(plane * nz, 0), next_changed(plane * nz);
  const std::size_t source = (p.sz() * ny + p.sy()) * nx + p.sx();
  value[source] = T(0);
  changed[source] = 1;
  SerialResult<T> result;
  for (bool any = true; any;) {
    any = false;
    for (std::size_t k = 0; k < nz; ++k) {
      for (std::size_t j = 0; j < ny; ++j) {
        for (std::size_t i = 0; i < nx; ++i) {
          const std::size_t at = (k * ny + j) * nx + i;
          const T west = i > 0 ? value[at - 1] : inf, east = i + 1 < nx ? value[at + 1] : inf;
          const T south = j > 0 ? value[at - nx] : inf, north = j + 1 < ny ? value[at + nx] : inf;
          const T below = k > 0 ? value[at - plane] : inf, above = k + 1 < nz ? value[at + plane] : inf;
          const bool near_change = (i > 0 && changed[at - 1]) || (i + 1 < nx && changed[at + 1]) ||
                                   (j > 0 && changed[at - nx]) || (j + 1 < ny && changed[at + nx]) ||
                                   (k > 0 && changed[at - plane]) || (k + 1 < nz && changed[at + plane]);
          next_value[at] = value[at];
          next_changed[at] = 0;
          if (!near_change) continue;
          T solved;
          if constexpr (Dims == 2) {
            solved = godunov_update(std::fmin(west, east), std::fmin(south, north), h);
          } else {
            solved =
                godunov_update(std::fmin(west, east), std::fmin(south, north), std::fmin(below, above), h);
          }
          if (solved < value[at] && solved <= limit) {
            next_value[at] = solved;
            next_changed[at] = 1;
            any = true;
          }
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

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How a Tensor walks a box of cells (a padding overlap) for copying: as rows
// along the innermost axis, or as runs of rows whose starts lie a constant
// pitch apart (consecutive along axis 1), so that one 2D copy moves a run.
// A box [begin, end) of D axes, axis 0 innermost; empty boxes yield nothing.
#pragma once

#include <array>
#include <cstddef>

namespace weft::detail {

// Calls f(first, width) for each row of the box: `first` is the row's first
// cell, `width` its number of cells (end[0] - begin[0]); rows in order of
// axis 1, then 2, and so on.
template <std::size_t D, class F>
void walk_rows(const std::array<std::ptrdiff_t, D>& begin, const std::array<std::ptrdiff_t, D>& end,
               const F& f) {
  for (std::size_t d = 0; d < D; ++d)
    if (end[d] <= begin[d]) return;
  std::array<std::ptrdiff_t, D> at = begin;
  const auto width = static_cast<std::size_t>(end[0] - begin[0]);
  while (true) {
    f(at, width);
    std::size_t d = 1;
    for (; d < D; ++d) {
      if (++at[d] < end[d]) break;
      at[d] = begin[d];
    }
    if (d == D) return;
  }
}

// Calls f(first, width, rows) for each run: the rows first, first + e1, ...,
// first + (rows - 1) e1 (e1 the unit step along axis 1) of `width` cells
// each. A 1D box is one run of one row; otherwise a run spans the box along
// axis 1 and runs follow in order of axis 2, then 3. The rows visited, in
// order, are walk_rows's.
template <std::size_t D, class F>
void walk_row_runs(const std::array<std::ptrdiff_t, D>& begin, const std::array<std::ptrdiff_t, D>& end,
                   const F& f) {
  for (std::size_t d = 0; d < D; ++d)
    if (end[d] <= begin[d]) return;
  const auto width = static_cast<std::size_t>(end[0] - begin[0]);
  if constexpr (D == 1) {
    f(begin, width, std::size_t{1});
  } else {
    const auto rows = static_cast<std::size_t>(end[1] - begin[1]);
    std::array<std::ptrdiff_t, D> at = begin;
    while (true) {
      f(at, width, rows);
      std::size_t d = 2;
      for (; d < D; ++d) {
        if (++at[d] < end[d]) break;
        at[d] = begin[d];
      }
      if (d == D) return;
    }
  }
}

}  // namespace weft::detail

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Checks shared by the 2D and 3D Eikonal tests: the error in the band within
// a bound, and its fall when the grid is refined (docs/eikonal.md).
//
//   check_band_error(error, bound, 0.6);   // max <= bound, L1 <= 0.6 max
//   check_refined(coarse, fine);           // h halved, same physical band
#pragma once

#include <doctest/doctest.h>

#include "fim.hpp"

namespace weft::eikonal::testing {

inline void check_band_error(const BandError& error, double bound, double l1_share_of_max) {
  CHECK(error.cells > 0);
  CHECK(error.max <= bound);
  CHECK(error.l1 <= l1_share_of_max * error.max);
}

// First order times the log factor near the point source: halving h at the
// same physical band scales both errors by 1/2 to 3/4.
inline void check_refined(const BandError& coarse, const BandError& fine) {
  CHECK(fine.max / coarse.max > 0.5);
  CHECK(fine.max / coarse.max < 0.75);
  CHECK(fine.l1 / coarse.l1 > 0.5);
  CHECK(fine.l1 / coarse.l1 < 0.75);
}

}  // namespace weft::eikonal::testing

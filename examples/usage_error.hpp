// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Arguments that parse but make no sense together ("odd number of steps"):
// run_main (cli_support.hpp) exits 2 on it. Apart from cli_support.hpp so
// that CUDA sources can throw it without CLI11.
#pragma once

#include <stdexcept>

namespace weft::examples {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace weft::examples

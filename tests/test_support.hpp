// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Small helpers shared by the doctest suites.
#pragma once

#include <stdexcept>
#include <string>

namespace weft::test {

// The message of the `Error` that `f` throws ("" if none).
template <class Error, class F>
std::string thrown_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The message of the std::invalid_argument that `f` throws ("" if none).
template <class F>
std::string invalid_argument_message(F&& f) {
  return thrown_message<std::invalid_argument>(f);
}

}  // namespace weft::test

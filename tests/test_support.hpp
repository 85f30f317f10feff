// Small helpers shared by the doctest suites.
#pragma once

#include <stdexcept>
#include <string>

namespace weft::test {

// The message of the std::invalid_argument that `f` throws ("" if none).
template <class F>
std::string invalid_argument_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace weft::test

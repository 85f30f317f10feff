// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The words of View error messages, so that every message quotes shapes and
// indices the same way: "View 'u' index (5, 3) out of bounds (4, 8)".
// Internal to the views layer; the throwing functions are cold paths kept out
// of the inlined accessors.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace weft::detail {

// "(4, 3)"; "()" for rank 0.
template <class Int, std::size_t N>
std::string format_index_list(const std::array<Int, N>& values) {
  std::string text = "(";
  for (std::size_t i = 0; i < N; ++i) {
    if (i != 0) text += ", ";
    text += std::to_string(values[i]);
  }
  return text + ")";
}

// "View 'a'"
inline std::string view_name(const std::string& label) { return "View '" + label + "'"; }

// Indices of any integral types, kept signed so that -1 prints as -1.
template <class... Indices>
std::array<std::int64_t, sizeof...(Indices)> index_array(Indices... indices) {
  return {static_cast<std::int64_t>(indices)...};
}

}  // namespace weft::detail

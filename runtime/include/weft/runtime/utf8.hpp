// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// UTF-8 well-formedness (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF), for everything that writes user text into JSON: node
// names are checked where they are given, and writers replace what is not
// UTF-8 rather than emit an invalid document.
#pragma once

#include <cstddef>
#include <string_view>

namespace weft {

// The length (1 to 4) of the well-formed sequence `text` starts with, or 0
// when it does not start with one (or is empty).
constexpr std::size_t utf8_sequence_length(std::string_view text) noexcept {
  if (text.empty()) return 0;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) lo = 0xA0;  // overlong
    if (lead == 0xED) hi = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) lo = 0x90;  // overlong
    if (lead == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;  // a continuation byte, C0/C1 (overlong) or F5..FF
  }
  if (text.size() < length || byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t i = 2; i < length; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  return length;
}

// The offset of the first byte that is not part of a well-formed sequence,
// or text.size() when all of it is UTF-8.
constexpr std::size_t first_invalid_utf8(std::string_view text) noexcept {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t length = utf8_sequence_length(text.substr(at));
    if (length == 0) return at;
    at += length;
  }
  return at;
}

constexpr bool is_valid_utf8(std::string_view text) noexcept {
  return first_invalid_utf8(text) == text.size();
}

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reading JSON text the way weft reads its own documents (graph files,
// traces): in one linear pass, refusing what a hand-edited or hostile file
// can hold but a weft document never does.
//
//   nlohmann::json doc = weft::parse_json_document(text, "graph JSON");
//
// Refused, with std::invalid_argument whose message starts with `what`:
//   - a syntax error (with its line and column),
//   - nesting deeper than `max_depth` arrays and objects (before the parser
//     gets deep enough to hurt),
//   - an object that repeats a key (plain nlohmann::json::parse keeps the
//     last one silently), naming the path to it,
//   - a number no double holds (1e400).
// The messages carry no nlohmann exception tags. Memory exhaustion stays
// std::bad_alloc.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace weft {

nlohmann::json parse_json_document(std::string_view text, std::string_view what, int max_depth = 64);

// nlohmann's exception text without its "[json.exception.type.id] " tag.
std::string_view without_json_tag(std::string_view message) noexcept;

}  // namespace weft

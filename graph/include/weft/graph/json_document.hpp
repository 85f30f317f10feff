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
// std::bad_alloc, and never an abort: nlohmann's own teardown of an array or
// object allocates, which while a bad_alloc unwinds calls std::terminate, so
// the parser empties its partial document with release_json_document(), and
// code that converts a document holds it in a JsonDocumentRelease.
//
//   nlohmann::json doc = weft::parse_json_document(text, "trace JSON");
//   weft::JsonDocumentRelease release(doc);  // emptied without allocating
//   return convert(doc);                     // may throw std::bad_alloc
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace weft {

nlohmann::json parse_json_document(std::string_view text, std::string_view what, int max_depth = 64);

// Empties `doc` (to null) without allocating: innermost values first, so
// that nlohmann's teardown meets only empty containers. Recursion as deep as
// the document (parse_json_document bounds it).
void release_json_document(nlohmann::json& doc) noexcept;

// Calls release_json_document on the document it watches when it goes.
class JsonDocumentRelease {
 public:
  explicit JsonDocumentRelease(nlohmann::json& doc) noexcept : doc_(doc) {}
  JsonDocumentRelease(const JsonDocumentRelease&) = delete;
  JsonDocumentRelease& operator=(const JsonDocumentRelease&) = delete;
  ~JsonDocumentRelease() { release_json_document(doc_); }

 private:
  nlohmann::json& doc_;
};

// nlohmann's exception text without its "[json.exception.type.id] " tag.
std::string_view without_json_tag(std::string_view message) noexcept;

}  // namespace weft

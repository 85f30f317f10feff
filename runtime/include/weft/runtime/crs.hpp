// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compressed row storage of a directed graph (Kokkos report 2.4 and 3.3).
// Row i lists the targets of i's edges: entries[row_map[i] .. row_map[i+1]).
// For a WorkGraphPolicy an edge i -> j means "j executes after i".
//
//   weft::Crs<int> dag;                 // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3
//   dag.row_map = {0, 2, 3, 4, 4};
//   dag.entries = {1, 2, 3, 3};
//   weft::Crs<int> preds;
//   weft::transpose_crs(preds, dag);    // row j: the nodes j waits for
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace weft {

template <class Index = std::int32_t>
struct Crs {
  static_assert(std::is_integral_v<Index> && std::is_signed_v<Index>, "Crs indices are signed integers");
  using index_type = Index;

  std::vector<Index> row_map;  // num_rows() + 1 offsets into entries
  std::vector<Index> entries;  // column (target) indices

  Index num_rows() const noexcept { return row_map.empty() ? 0 : static_cast<Index>(row_map.size() - 1); }
  Index row_begin(Index i) const noexcept { return row_map[static_cast<std::size_t>(i)]; }
  Index row_end(Index i) const noexcept { return row_map[static_cast<std::size_t>(i) + 1]; }
};

// Throws std::invalid_argument naming the first broken requirement: row_map
// starts at 0, never decreases, ends at entries.size(); every entry lies in
// [0, num_rows()). `what` prefixes the message (the caller's name).
template <class Index>
void validate_crs(const Crs<Index>& g, const char* what = "Crs") {
  const std::string who(what);
  if (g.row_map.empty()) {
    if (!g.entries.empty()) {
      throw std::invalid_argument(who + ": row_map is empty but entries holds " +
                                  std::to_string(g.entries.size()) +
                                  " values (row_map needs num_rows + 1 offsets)");
    }
    return;
  }
  if (g.row_map.front() != 0) {
    throw std::invalid_argument(who + ": row_map[0] must be 0, got " + std::to_string(g.row_map.front()));
  }
  const Index rows = g.num_rows();
  for (Index i = 0; i < rows; ++i) {
    if (g.row_end(i) < g.row_begin(i)) {
      throw std::invalid_argument(who + ": row_map is not monotone: row_map[" + std::to_string(i + 1) +
                                  "] = " + std::to_string(g.row_end(i)) + " < row_map[" + std::to_string(i) +
                                  "] = " + std::to_string(g.row_begin(i)));
    }
  }
  if (static_cast<std::size_t>(g.row_map.back()) != g.entries.size()) {
    throw std::invalid_argument(who + ": sizes disagree: row_map[" + std::to_string(rows) +
                                "] = " + std::to_string(g.row_map.back()) + " but entries holds " +
                                std::to_string(g.entries.size()) + " values");
  }
  for (Index i = 0; i < rows; ++i) {
    for (Index k = g.row_begin(i); k < g.row_end(i); ++k) {
      const Index j = g.entries[static_cast<std::size_t>(k)];
      if (j < 0 || j >= rows) {
        throw std::invalid_argument(who + ": entry " + std::to_string(k) + " (row " + std::to_string(i) +
                                    ") is " + std::to_string(j) + ", outside [0, " + std::to_string(rows) +
                                    ")");
      }
    }
  }
}

// out = the transpose of in: an edge i -> j in `in` becomes j -> i in `out`.
// Rows of `out` list their entries in increasing source order.
template <class Index>
void transpose_crs(Crs<Index>& out, const Crs<Index>& in) {
  validate_crs(in, "transpose_crs");
  if (in.row_map.empty()) {
    out.row_map.clear();
    out.entries.clear();
    return;
  }
  const Index rows = in.num_rows();
  std::vector<Index> row_map(static_cast<std::size_t>(rows) + 1, 0);
  for (Index j : in.entries) ++row_map[static_cast<std::size_t>(j) + 1];
  for (Index i = 0; i < rows; ++i)
    row_map[static_cast<std::size_t>(i) + 1] += row_map[static_cast<std::size_t>(i)];
  std::vector<Index> entries(in.entries.size());
  std::vector<Index> fill(row_map.begin(), row_map.end() - 1);  // next free slot per row
  for (Index i = 0; i < rows; ++i) {
    for (Index k = in.row_begin(i); k < in.row_end(i); ++k) {
      const auto j = static_cast<std::size_t>(in.entries[static_cast<std::size_t>(k)]);
      entries[static_cast<std::size_t>(fill[j]++)] = i;
    }
  }
  out.row_map = std::move(row_map);
  out.entries = std::move(entries);
}

}  // namespace weft

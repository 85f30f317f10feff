// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DAG shapes shared by the work-DAG tests and stress tests.
#pragma once

#include <weft/runtime/crs.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

namespace weft::test {

// Builds a Crs from an edge list (from -> to) over n nodes.
inline Crs<int> from_edges(int n, const std::vector<std::pair<int, int>>& edges) {
  Crs<int> g;
  g.row_map.assign(static_cast<std::size_t>(n) + 1, 0);
  for (auto [from, to] : edges) ++g.row_map[static_cast<std::size_t>(from) + 1];
  for (int i = 0; i < n; ++i)
    g.row_map[static_cast<std::size_t>(i) + 1] += g.row_map[static_cast<std::size_t>(i)];
  g.entries.resize(edges.size());
  std::vector<int> fill(g.row_map.begin(), g.row_map.end() - 1);
  for (auto [from, to] : edges)
    g.entries[static_cast<std::size_t>(fill[static_cast<std::size_t>(from)]++)] = to;
  return g;
}

inline Crs<int> chain(int n) {
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i + 1 < n; ++i) edges.emplace_back(i, i + 1);
  return from_edges(n, edges);
}

// 0 -> 1..width -> width+1
inline Crs<int> fan_out_fan_in(int width) {
  std::vector<std::pair<int, int>> edges;
  for (int i = 1; i <= width; ++i) {
    edges.emplace_back(0, i);
    edges.emplace_back(i, width + 1);
  }
  return from_edges(width + 2, edges);
}

// (i, j) -> (i+1, j) and (i, j+1); node id i * cols + j.
inline Crs<int> wavefront(int rows, int cols) {
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      if (i + 1 < rows) edges.emplace_back(i * cols + j, (i + 1) * cols + j);
      if (j + 1 < cols) edges.emplace_back(i * cols + j, i * cols + j + 1);
    }
  }
  return from_edges(rows * cols, edges);
}

// Edges only go forward in a random topological order, so it is a DAG;
// node ids are shuffled so the order is not simply 0..n-1.
inline Crs<int> random_dag(int n, int max_out, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::pair<int, int>> edges;
  for (int pos = 0; pos + 1 < n; ++pos) {
    const int out = std::uniform_int_distribution<int>(0, max_out)(rng);
    for (int e = 0; e < out; ++e) {
      const int span = std::min(n - pos - 1, 64);
      const int target = pos + 1 + std::uniform_int_distribution<int>(0, span - 1)(rng);
      edges.emplace_back(order[static_cast<std::size_t>(pos)], order[static_cast<std::size_t>(target)]);
    }
  }
  return from_edges(n, edges);
}

}  // namespace weft::test

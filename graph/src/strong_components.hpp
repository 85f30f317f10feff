// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The strongly connected components of a graph's nodes over all its edges
// (graph_levels.cpp, Tarjan's without recursion): a weak edge inside one
// component closes a loop of condition nodes; one between components
// orders a pass like a strong edge. Internal to graph/.
#pragma once

#include <cstddef>
#include <vector>

#include <weft/graph/graph.hpp>

namespace weft::detail {

// component[i] for every node i of [0, n); linear in nodes plus edges.
std::vector<Graph::NodeId> strong_components(std::size_t n, const std::vector<Graph::Edge>& edges);

}  // namespace weft::detail

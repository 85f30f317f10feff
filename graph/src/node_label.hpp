// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How errors name a node: 'its name', or #id when it has none.
#pragma once

#include <string>

#include <weft/graph/graph.hpp>

namespace weft::detail {

std::string node_label(const Graph& graph, Graph::NodeId id);

}  // namespace weft::detail

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Loading a graph from JSON: Graph::from_json_text (parse, check every field,
// build) against nlohmann::json::parse of the same text alone, in the same
// process. The graph has n named nodes and 2n edges (each node after the
// second waits for the two before it), so a loader that is anything but
// linear shows at once: a depth callback that rescanned the parent array,
// or a name check that scanned every node, made this quadratic.
// Goal: at most 3x the bare parse at 1,000,000 nodes.
#include "bench.hpp"

#include <weft/graph/graph.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

std::string two_back_graph_text(int n) {
  weft::Graph g;
  for (int i = 0; i < n; ++i) g.emplace([] {}).named("node_" + std::to_string(i));
  for (int i = 1; i < n; ++i) {
    g.add_edge(i - 1, i);
    if (i >= 2) g.add_edge(i - 2, i);
  }
  return g.to_json().dump();
}

}  // namespace

WEFT_BENCHMARK(graph_json_load) {
  const int n = opt.quick ? 20'000 : 1'000'000;
  const std::string text = two_back_graph_text(n);
  const int repetitions = opt.quick ? 2 : 3;
  std::size_t loaded_nodes = 0, parsed_items = 0;
  const double parse = weft::bench::best_seconds(repetitions, [&] {
    const nlohmann::json doc = nlohmann::json::parse(text);
    parsed_items = doc["nodes"].size() + doc["edges"].size();
  });
  const double load = weft::bench::best_seconds(repetitions, [&] {
    const weft::Graph g = weft::Graph::from_json_text(text);
    loaded_nodes = g.size();
  });
  if (loaded_nodes != static_cast<std::size_t>(n) || parsed_items != 3 * static_cast<std::size_t>(n) - 3) {
    std::fprintf(stderr, "graph_json_load: loaded %zu nodes, parsed %zu items; expected %d and %d\n",
                 loaded_nodes, parsed_items, n, 3 * n - 3);
    std::exit(1);
  }
  out.compare("graph_json_load",
              "nodes=" + std::to_string(n) + " edges=" + std::to_string(2 * n - 3) +
                  " MB=" + std::to_string(text.size() >> 20),
              "s", {"weft", load}, {"json::parse", parse});
}

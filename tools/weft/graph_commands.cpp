// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// `weft graph summary|dot|validate FILE`: graphs as Graph::to_json() writes
// them (docs/graph-json.md).
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <weft/graph/graph.hpp>

#include <nlohmann/json.hpp>

#include "graph_summary.hpp"
#include "tool.hpp"

namespace weft::tool {

namespace {

// The loader's message (syntax errors carry line and column) after the file name.
Graph load_graph(const std::string& path) {
  return parse_input(path, "graph", [](std::string_view text) { return Graph::from_json_text(text); });
}

int level_count(const Graph& graph) {
  int count = 0;
  for (int level : graph.levels()) count = std::max(count, level + 1);
  return count;
}

constexpr const char* kFileHelp = "a graph JSON file (Graph::to_json(), docs/graph-json.md); - reads stdin";

void add_summary(CLI::App& graph_command) {
  struct Options {
    std::string file;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* summary = graph_command.add_subcommand(
      "summary",
      "Count what a graph holds: nodes by kind and by execution kind, edges by the execution kinds "
      "they join, levels and the width of each, the critical path (the longest chain of nodes), "
      "nodes per device (\"none\" for nodes without a tensor partition).");
  summary->add_option("FILE", options->file, kFileHelp)->required();
  summary->add_flag("--json", options->json, "print the summary as one JSON object");
  add_max_bytes_option(*summary);
  summary->callback([options] {
    const Graph graph = load_graph(options->file);
    const GraphSummary s = summarize(graph);
    if (options->json) {
      std::cout << summary_to_json(display_name(options->file), graph, s)
                       .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << '\n';
    } else {
      print_summary(std::cout, display_name(options->file), graph, s);
    }
  });
}

void add_dot(CLI::App& graph_command) {
  auto file = std::make_shared<std::string>();
  CLI::App* dot = graph_command.add_subcommand(
      "dot",
      "Print the graph in Graphviz DOT (Graph::to_dot()): one box per node, GPU nodes shaded, each "
      "level on one rank. Render with: weft graph dot FILE | dot -Tpng -o graph.png");
  dot->add_option("FILE", *file, kFileHelp)->required();
  add_max_bytes_option(*dot);
  dot->callback([file] { std::cout << load_graph(*file).to_dot(); });
}

void add_validate(CLI::App& graph_command) {
  auto files = std::make_shared<std::vector<std::string>>();
  CLI::App* validate = graph_command.add_subcommand(
      "validate",
      "Check graph files against the schema (docs/graph-json.md): JSON syntax (the message gives line "
      "and column), fields and their types, ids, edges to missing nodes, levels, counts, cycles. "
      "Prints one line per valid file on stdout and one per invalid file on stderr (the file and "
      "the problem); exits 1 if any file is invalid.");
  validate->add_option("FILE", *files, kFileHelp)->required();
  add_max_bytes_option(*validate);
  validate->callback([files] {
    bool all_valid = true;
    for (const std::string& file : *files) {
      try {
        const Graph graph = load_graph(file);
        std::cout << display_name(file) << ": valid weft graph (" << graph.size() << " nodes, "
                  << graph.edges().size() << " edges, " << level_count(graph) << " levels)\n";
      } catch (const InputError& e) {
        std::cout.flush();  // keep the two streams in file order on a terminal
        std::cerr << e.what() << '\n';
        all_valid = false;
      }
    }
    if (!all_valid) throw Reported{kExitInvalidInput};
  });
}

}  // namespace

void add_graph_commands(CLI::App& app) {
  CLI::App* graph = app.add_subcommand("graph", "Inspect a weft graph dumped as JSON (Graph::to_json())");
  graph->require_subcommand(1);
  add_summary(*graph);
  add_dot(*graph);
  add_validate(*graph);
}

}  // namespace weft::tool

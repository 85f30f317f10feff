// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// `weft graph summary|dot|validate|plan FILE`: graphs as Graph::to_json()
// writes them (docs/graph-json.md).
#include <algorithm>
#include <iostream>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <weft/graph/graph.hpp>

#include <nlohmann/json.hpp>

#include "graph_summary.hpp"
#include "table.hpp"
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

nlohmann::json plan_to_json(const std::string& file, const DevicePlan& plan) {
  nlohmann::json devices = nlohmann::json::array();
  for (const int d : plan.devices()) {
    const DevicePlanCounts c = plan.counts(d);
    devices.push_back({{"device", d},
                       {"launches", c.launches},
                       {"records", c.records},
                       {"waits", c.waits},
                       {"callbacks", c.callbacks},
                       {"nodes", c.nodes}});
  }
  nlohmann::json segments = nlohmann::json::array();
  for (const DeviceSegment& s : plan.segments) {
    segments.push_back({{"device", s.device},
                        {"phase", s.phase},
                        {"round", s.round},
                        {"nodes", s.nodes},
                        {"waits_for", s.waits_for},
                        {"previous", s.previous},
                        {"choice", s.choice},
                        {"records", s.records},
                        {"callback", s.callback}});
  }
  return {{"file", file}, {"devices", std::move(devices)}, {"segments", std::move(segments)}};
}

void print_plan(std::ostream& out, const std::string& file, const DevicePlan& plan) {
  const std::vector<int> devices = plan.devices();
  out << file << ": " << plan.segments.size() << " segments on " << devices.size()
      << (devices.size() == 1 ? " device" : " devices") << " a pass (one launch each)\n";
  if (devices.empty()) return;
  Table table({"device", "launches", "records", "waits", "callbacks", "nodes"}, "rrrrrr");
  for (const int d : devices) {
    const DevicePlanCounts c = plan.counts(d);
    table.add_row({std::to_string(d), std::to_string(c.launches), std::to_string(c.records),
                   std::to_string(c.waits), std::to_string(c.callbacks), std::to_string(c.nodes)});
  }
  table.print(out);
  std::string lines = plan.describe();
  std::size_t start = 0;
  while (start < lines.size()) {  // indented like the table
    const std::size_t end = lines.find('\n', start);
    out << "  " << lines.substr(start, end - start + 1);
    start = end + 1;
  }
}

void add_plan(CLI::App& graph_command) {
  struct Options {
    std::string file;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* plan = graph_command.add_subcommand(
      "plan",
      "Print the graph's device plan (docs/device_plans.md): its device nodes grouped into segments, "
      "one launch per device each, with the launches, event records, event waits and host callbacks "
      "of each device a pass, then one line per segment in launch order.");
  plan->add_option("FILE", options->file, kFileHelp)->required();
  plan->add_flag("--json", options->json, "print the plan as one JSON object");
  add_max_bytes_option(*plan);
  plan->callback([options] {
    const Graph graph = load_graph(options->file);
    const DevicePlan p = graph.device_plan();
    if (options->json) {
      std::cout << plan_to_json(display_name(options->file), p)
                       .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << '\n';
    } else {
      print_plan(std::cout, display_name(options->file), p);
    }
  });
}

}  // namespace

void add_graph_commands(CLI::App& app) {
  CLI::App* graph = app.add_subcommand("graph", "Inspect a weft graph dumped as JSON (Graph::to_json())");
  graph->require_subcommand(1);
  add_summary(*graph);
  add_dot(*graph);
  add_validate(*graph);
  add_plan(*graph);
}

}  // namespace weft::tool

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Ripple's Listing 5 as a weft graph: A, then B; C and D (GPU kind) beside
// B; then E after B, C and D. Runs it, then dumps the graph as JSON.
//
//   graph_basics [out.json]        (default: graph_basics.json)
//   weft-style inspection:  dot -Tpng <(...to_dot...)  -- see README
#include <weft/weft.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

#include "cli_support.hpp"
#include "output_file.hpp"

namespace {

int example_main(int argc, char** argv) {
  std::string out = "graph_basics.json";
  CLI::App app("graph_basics: Ripple's Listing 5 as a weft graph; runs it and writes it as JSON",
               "graph_basics");
  app.add_option("out", out, "where to write the graph as JSON")->capture_default_str();
  if (const auto code = weft::examples::parse(app, argc, argv)) return *code;
  weft::examples::check_writable(out);

  weft::Graph g(weft::ExecutionKind::Cpu);
  g.emplace([] { std::puts("A"); }).named("A");
  g.then([] { std::puts("B"); }).named("B");
  g.emplace(weft::ExecutionKind::Gpu,  // runs on GPU-priority workers
            weft::make_node([](const char* s) { std::puts(s); }, "C"),
            weft::make_node([](const char* s) { std::puts(s); }, "D"))
      .named("CD");
  g.then([] { std::puts("E"); }).named("E");

  // One virtual device gives GPU-priority workers on a machine without a GPU.
  weft::ExecutorConfig config;
  config.virtual_devices = 1;
  weft::Executor executor(config);
  executor.run(g).get();

  weft::examples::write_file(out, g.to_json().dump(2) + '\n');
  std::printf("graph: %zu nodes, %zu edges, written to %s\n", g.size(), g.edges().size(), out.c_str());
  return weft::examples::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return weft::examples::run_main("graph_basics", [&] { return example_main(argc, argv); });
}

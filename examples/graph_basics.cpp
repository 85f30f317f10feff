// Ripple's Listing 5 as a weft graph: A, then B; C and D (GPU kind) beside
// B; then E after B, C and D. Runs it, then dumps the graph as JSON.
//
//   graph_basics [out.json]        (default: graph_basics.json)
//   weft-style inspection:  dot -Tpng <(...to_dot...)  -- see README
#include <weft/weft.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : "graph_basics.json";

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

  std::ofstream file(out);
  if (!file) {
    std::fprintf(stderr, "graph_basics: cannot write '%s'\n", out.c_str());
    return 1;
  }
  file << g.to_json().dump(2) << '\n';
  std::printf("graph: %zu nodes, %zu edges, written to %s\n", g.size(), g.edges().size(), out.c_str());
  return 0;
}

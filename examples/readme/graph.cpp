#include <weft/weft.hpp>

#include <nlohmann/json.hpp>  // for to_json()

#include <cstdio>
#include <string>

int main() {
  auto print = [](const char* s) { std::puts(s); };
  weft::Graph g(weft::ExecutionKind::Cpu);
  g.emplace([] { std::puts("A"); }).named("A");
  g.then([] { std::puts("B"); }).named("B");
  g.emplace(weft::ExecutionKind::Gpu, weft::make_node(print, "C"), weft::make_node(print, "D"));
  g.then([] { std::puts("E"); }).named("E");
  weft::Executor executor;                // runs the GPU-kind nodes C and D even without a GPU
  executor.run(g).get();                  // waits; also run_n(g, n), run_until(g, pred)
  std::string json = g.to_json().dump();  // schema: docs/graph-json.md
  std::string dot = g.to_dot();           // dot -Tpng
  std::printf("%zu nodes, %zu edges\n", g.size(), g.edges().size());
  // prints: A; then B, C and D in any order; then E; then "5 nodes, 6 edges"
}

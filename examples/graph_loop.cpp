// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Control flow inside one graph (condition nodes) and runs that queue.
//
// A Collatz walk: "step" halves or triples-plus-one the number, and the
// condition node "more?" sends the run back to "step" until it reaches 1.
// Three runs are submitted at once: they run one after another, in order,
// each with its own future.
//
//   graph_loop          (no arguments)
#include <weft/weft.hpp>

#include <cstdio>
#include <vector>

#include "cli_support.hpp"

namespace {

int example_main(int argc, char** argv) {
  CLI::App app("graph_loop: Collatz walks with a condition node; three runs of one graph queue",
               "graph_loop");
  if (const auto code = weft::examples::parse(app, argc, argv)) return *code;

  long value = 0, steps = 0;
  std::vector<long> starts{27, 97, 871}, lengths;
  std::size_t run = 0;

  weft::Graph g;
  g.emplace([&] {
     value = starts[run++];
     steps = 0;
   }).named("start");
  g.then([&] {
     value = value % 2 == 0 ? value / 2 : 3 * value + 1;
     ++steps;
   }).named("step");
  g.branch([&] { return value != 1 ? 0 : 1; }).named("more?");
  g.add_edge("more?", "step");                                // 0: another step
  g.then([&] { lengths.push_back(steps); }).named("record");  // 1: done

  weft::Executor executor;
  std::vector<weft::Future<>> runs;
  for (std::size_t i = 0; i < starts.size(); ++i) runs.push_back(executor.run(g));  // they queue
  for (const weft::Future<>& r : runs) r.get();

  for (std::size_t i = 0; i < starts.size(); ++i)
    std::printf("%ld reaches 1 in %ld steps\n", starts[i], lengths[i]);
  return lengths == std::vector<long>{111, 118, 178} ? weft::examples::kExitOk : weft::examples::kExitFailed;
}

}  // namespace

int main(int argc, char** argv) {
  return weft::examples::run_main("graph_loop", [&] { return example_main(argc, argv); });
}

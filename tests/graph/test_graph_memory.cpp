// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A graph takes back, when destroyed, everything it took: its nodes, its
// lowering, and the names observers heard (a service that builds graphs
// with names per request must not grow). And a trace keeps the names it
// recorded after their graph is gone.
#include <weft/graph/graph.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/observer.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <malloc.h>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "../executor_configs.hpp"

namespace {

// Sanitizers bring their own allocator, which glibc's counts do not see.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kGlibcCountsTheHeap = false;
#else
constexpr bool kGlibcCountsTheHeap = true;
#endif

// Bytes glibc has handed out and not had back, in every arena.
long long heap_in_use() {
  const struct mallinfo2 heap = mallinfo2();
  return static_cast<long long>(heap.uordblks + heap.hblkhd);
}

// A request's graph: a chain of `nodes` named after the request.
void build_run_and_destroy(weft::Executor& executor, int request, int nodes) {
  weft::Graph graph;
  std::atomic<int> ran{0};
  for (int i = 0; i < nodes; ++i) {
    const std::string name = "request " + std::to_string(request) + " step " + std::to_string(i);
    if (i == 0) {
      graph.emplace([&ran] { ran.fetch_add(1, std::memory_order_relaxed); }).named(name);
    } else {
      graph.then([&ran] { ran.fetch_add(1, std::memory_order_relaxed); }).named(name);
    }
  }
  executor.run(graph).get();
  REQUIRE(ran.load() == nodes);
}

struct NodeCounter : weft::Observer {
  std::atomic<long> nodes{0};
  void on_node_end(const weft::NodeEvent&) noexcept override {
    nodes.fetch_add(1, std::memory_order_relaxed);
  }
};

void check_graphs_leave_nothing_behind(weft::Executor& executor) {
  constexpr int kGraphs = 20, kNodes = 10'000;
  build_run_and_destroy(executor, -1, kNodes);  // the executor's own first-use state
  const long long before = heap_in_use();
  for (int request = 0; request < kGraphs; ++request) build_run_and_destroy(executor, request, kNodes);
  const long long kept = heap_in_use() - before;
  INFO("heap in use grew by " << kept << " bytes over " << kGraphs << " graphs of " << kNodes
                              << " named nodes");
  CHECK(kept < 1024 * 1024);
}

}  // namespace

TEST_CASE("GraphMemory.destroyed_graphs_with_distinct_names_return_their_heap.2threads") {
  if (!kGlibcCountsTheHeap) {
    MESSAGE("skipped: a sanitizer's allocator holds the heap, and glibc's counts do not see it");
    return;
  }
  weft::Executor executor(weft::test::cpu_only(2));
  check_graphs_leave_nothing_behind(executor);
}

TEST_CASE("GraphMemory.observed_graphs_return_the_names_their_observers_heard.2threads") {
  if (!kGlibcCountsTheHeap) {
    MESSAGE("skipped: a sanitizer's allocator holds the heap, and glibc's counts do not see it");
    return;
  }
  weft::Executor executor(weft::test::cpu_only(2));
  auto counter = std::make_shared<NodeCounter>();
  executor.attach(counter);
  check_graphs_leave_nothing_behind(executor);
  executor.detach(counter);
  CHECK(counter->nodes.load() == 21L * 10'000);
}

TEST_CASE("GraphMemory.a_trace_keeps_the_names_of_a_graph_destroyed_before_it_is_written.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  executor.start_trace();
  {
    weft::Graph graph;
    graph.emplace([] {}).named("first");
    graph.then([] {});
    graph.then([] {}).named(std::string(100, 'x'));  // longer than any small-string buffer
    executor.run(graph).get();
  }  // its names go with it; the trace has its own
  const std::string path =
      (std::filesystem::temp_directory_path() / "weft_trace_names_after_graph.json").string();
  executor.write_trace(path);
  std::ifstream in(path);
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::set<std::string> names;
  for (const nlohmann::json& e : doc["traceEvents"])
    if (e["ph"] == "X" && e["args"].contains("node")) names.insert(e["name"].get<std::string>());
  CHECK(names == std::set<std::string>{"first", "compute 1", std::string(100, 'x')});
  std::remove(path.c_str());
}

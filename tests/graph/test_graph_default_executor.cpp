// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GPU-kind nodes on a default Executor without a GPU (README's Graph
// snippet as written), and the error that names the graph and the fix where
// a config leaves the executor without GPU-priority workers.
#include <weft/graph/graph.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "../executor_configs.hpp"
#include "../test_support.hpp"

namespace {

std::string run_error(weft::Executor& executor, weft::Graph& g) {
  return weft::test::thrown_message<std::logic_error>([&] { executor.run(g).get(); });
}

}  // namespace

TEST_CASE("GraphDefaultExecutor.readme_graph_snippet_runs_on_a_default_executor") {
  std::vector<std::string> log;
  std::mutex m;
  auto say = [&](const char* s) {
    std::lock_guard<std::mutex> lock(m);
    log.emplace_back(s);
  };
  weft::Graph g(weft::ExecutionKind::Cpu);
  g.emplace([&] { say("A"); }).named("A");
  g.then([&] { say("B"); }).named("B");
  g.emplace(weft::ExecutionKind::Gpu, weft::make_node(say, "C"), weft::make_node(say, "D"));
  g.then([&] { say("E"); }).named("E");
  weft::Executor executor;
  executor.run(g).get();
  REQUIRE(log.size() == 5);
  CHECK(log.front() == "A");
  CHECK(log.back() == "E");
  CHECK(std::count(log.begin(), log.end(), "C") == 1);
  CHECK(std::count(log.begin(), log.end(), "D") == 1);
}

TEST_CASE("GraphDefaultExecutor.a_gpu_kind_graph_runs_on_a_default_executor") {
  int ran = 0;
  weft::Graph g(weft::ExecutionKind::Gpu);
  g.emplace([&] { ++ran; });
  g.then([&] { ++ran; });
  weft::Executor executor;
  executor.run_n(g, 3).get();
  CHECK(ran == 6);
}

TEST_CASE("GraphDefaultExecutor.without_gpu_workers_the_error_names_the_first_gpu_kind_node_and_the_fix") {
  weft::Graph g;
  g.emplace([] {}).named("load");
  g.then(weft::ExecutionKind::Gpu, weft::make_node([] {})).named("stencil");
  g.then([] {}).named("store");
  weft::Executor executor(weft::test::cpu_only(2));
  const std::string message = run_error(executor, g);
  CHECK(message.find("Executor::run: GPU-kind node 'stencil' (the graph's first)") != std::string::npos);
  CHECK(message.find("GPU-priority workers") != std::string::npos);
  CHECK(message.find("ExecutorConfig::virtual_devices = 1") != std::string::npos);
  CHECK(message.find("ExecutionKind::Cpu") != std::string::npos);
  CHECK(message.find("WorkGraphPolicy") == std::string::npos);
}

TEST_CASE("GraphDefaultExecutor.an_unnamed_gpu_kind_node_is_named_by_its_id") {
  weft::Graph g;
  g.emplace([] {});
  g.then(weft::ExecutionKind::Gpu, weft::make_node([] {}));
  weft::ExecutorConfig config;
  config.cpu_workers = 2;  // a worker count set: no virtual device by itself
  weft::Executor executor(config);
  if (executor.gpu_worker_count() > 0) return;  // a CUDA machine
  const std::string message = run_error(executor, g);
  CHECK(message.find("GPU-kind node #1 (the graph's first)") != std::string::npos);
  CHECK(message.find("both worker counts automatic") != std::string::npos);
}

TEST_CASE("GraphDefaultExecutor.a_gpu_kind_node_in_a_subgraph_is_named_with_its_subgraph_node") {
  weft::Graph inner;
  inner.emplace([] {}).named("prepare");
  inner.then(weft::ExecutionKind::Gpu, weft::make_node([] {})).named("kernel");
  inner.conditional([] { return false; });  // a loop: a subgraph node, not inlined
  weft::Graph outer;
  outer.emplace([] {}).named("start");
  outer.then(inner).named("body");
  weft::Executor executor(weft::test::cpu_only(1));
  const std::string message = run_error(executor, outer);
  CHECK(message.find("GPU-kind node 'kernel' in subgraph node 'body' (the graph's first)") !=
        std::string::npos);
}

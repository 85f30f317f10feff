// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Execution traces: Chrome trace-event JSON with one span per node, task or
// job, on the worker that ran it; WEFT_TRACE writes one at exit.
#include <weft/graph/graph.hpp>
#include <weft/runtime/task_group.hpp>
#include <weft/runtime/trace.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

std::string temp_path(const char* name) { return (std::filesystem::temp_directory_path() / name).string(); }

}  // namespace

TEST_CASE("Trace.graph_nodes_appear_by_name_worker_and_order.virtual_devices") {
  weft::ExecutorConfig cfg;
  cfg.cpu_workers = 2;
  cfg.virtual_devices = 1;
  cfg.use_cuda = false;
  weft::Executor executor(cfg);
  weft::Graph g;
  g.emplace([] {}).named("A");
  g.then([] {}).named("B");
  g.emplace(weft::ExecutionKind::Gpu, weft::make_node([] {}), weft::make_node([] {})).named("CD");
  g.then([] {}).named("E");
  executor.run(g).wait().get();  // lowered before tracing: names are kept anyway
  executor.start_trace();
  executor.run(g).wait().get();
  const std::string path = temp_path("weft_trace_test.json");
  executor.write_trace(path);
  CHECK_FALSE(executor.tracing());

  const nlohmann::json trace = read_json(path);
  CHECK(trace["otherData"]["weft_trace_version"] == 1);
  std::map<std::string, nlohmann::json> spans;
  int thread_names = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M") {
      thread_names += e["name"] == "thread_name" && e["tid"].get<int>() < executor.worker_count();
    } else if (e["ph"] == "X" && e["name"] != "task" && e["cat"] != "run") {  // the run's driver is a task
      spans[e["name"].get<std::string>()] = e;
    }
  }
  CHECK(thread_names == executor.worker_count());
  REQUIRE(spans.size() == 5);
  for (const char* gpu_node : {"CD.0", "CD.1"}) {
    CHECK(spans[gpu_node]["cat"] == "gpu");
    CHECK(spans[gpu_node]["tid"].get<int>() >= executor.cpu_worker_count());  // a GPU-priority worker
  }
  const auto end = [&](const char* n) {
    return spans[n]["ts"].get<double>() + spans[n]["dur"].get<double>();
  };
  CHECK(end("A") <= spans["B"]["ts"].get<double>());
  CHECK(end("B") <= spans["E"]["ts"].get<double>());
  CHECK(end("CD.0") <= spans["E"]["ts"].get<double>());
  std::remove(path.c_str());
}

TEST_CASE("Trace.weft_trace_environment_variable_writes_at_exit") {
  const std::string path = temp_path("weft_env_trace.json");
  std::remove(path.c_str());
  ::setenv("WEFT_TRACE", path.c_str(), 1);
  {
    weft::ExecutorConfig cfg;
    cfg.cpu_workers = 1;
    cfg.gpu_workers = 0;
    weft::Executor executor(cfg);
    ::unsetenv("WEFT_TRACE");
    CHECK(executor.tracing());
    weft::TaskGroup group(executor);
    for (int i = 0; i < 10; ++i) group.run([] {});
    group.wait();
  }
  const nlohmann::json trace = read_json(path);
  int jobs = 0;
  for (const auto& e : trace["traceEvents"]) jobs += e["ph"] == "X" && e["name"] == "job";
  CHECK(jobs == 10);
  std::remove(path.c_str());
}

TEST_CASE("Trace.unwritable_path_is_reported") {
  weft::ExecutorConfig cfg;
  cfg.cpu_workers = 1;
  cfg.gpu_workers = 0;
  weft::Executor executor(cfg);
  executor.start_trace();
  CHECK_THROWS_WITH_AS(executor.write_trace("/nonexistent-dir/trace.json"), doctest::Contains("cannot write"),
                       std::runtime_error);
}

TEST_CASE("Trace.names_that_are_not_utf8_still_make_a_valid_file") {
  // Names reach the tracer from anywhere (C strings it copies); the file must
  // stay JSON a strict reader accepts whatever bytes they hold.
  weft::Tracer tracer(1);
  tracer.start();
  tracer.record(0, "ok \"quoted\" \x01", weft::Domain::Cpu, 0);
  tracer.record(0, "bad \xff\xc3 end", weft::Domain::Cpu, 0);
  tracer.record(0, "\xf0\x9f\x8c\x8a wave", weft::Domain::Cpu, 0);
  const std::string path = temp_path("weft_trace_utf8.json");
  tracer.write_chrome_json(path, {weft::Domain::Cpu});
  const nlohmann::json doc = read_json(path);  // throws on invalid UTF-8
  std::vector<std::string> names;
  for (const nlohmann::json& event : doc["traceEvents"])
    if (event["ph"] == "X") names.push_back(event["name"]);
  CHECK(names == std::vector<std::string>{"ok \"quoted\" \x01", "bad \xef\xbf\xbd\xef\xbf\xbd end",
                                          "\xf0\x9f\x8c\x8a wave"});
  std::remove(path.c_str());
}

TEST_CASE("Trace.unnamed_nodes_are_named_by_kind_and_id_and_loop_helpers_after_their_node.2threads") {
  weft::ExecutorConfig cfg;
  cfg.cpu_workers = 2;
  cfg.gpu_workers = 0;
  weft::Executor executor(cfg);
  weft::Tensor<double, 2> x({1, 1}, 256, 256);  // big enough for the kernel to split its rows
  weft::Graph g;
  g.emplace([] {});
  g.then_split([](auto& it) { *it = 1.0; }, x);
  g.then([] {}).named("last");
  executor.start_trace();
  executor.run_n(g, 2).wait().get();
  const std::string path = temp_path("weft_trace_names.json");
  executor.write_trace(path);
  const nlohmann::json trace = read_json(path);
  std::map<std::string, int> nodes;  // graph node spans by name
  int runs = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    CHECK(e["name"] != "parallel_for");  // the row chunks' helpers take their node's name
    if (e["cat"] == "run") ++runs;
    if (e["args"].contains("node")) ++nodes[e["name"].get<std::string>()];
  }
  CHECK(nodes == std::map<std::string, int>{{"compute 0", 2}, {"split 1", 2}, {"last", 2}});
  CHECK(runs == 2);
  std::remove(path.c_str());
}

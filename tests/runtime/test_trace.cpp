// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The trace file a Tracer writes for a work-DAG: each node's span with its
// id, level, partition, device and run; a flow for each edge of a run; a
// span per run on a track of its own; process and thread names.
#include <weft/runtime/trace.hpp>
#include <weft/runtime/work_graph_policy.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

std::string temp_path(const char* name) { return (std::filesystem::temp_directory_path() / name).string(); }

nlohmann::json write_and_read(weft::Executor& executor, const char* name) {
  const std::string path = temp_path(name);
  executor.write_trace(path);
  std::ifstream in(path);
  REQUIRE(in.good());
  nlohmann::json doc = nlohmann::json::parse(in);  // throws on invalid JSON
  std::remove(path.c_str());
  return doc;
}

// 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3.
weft::Crs<int> diamond() {
  weft::Crs<int> g;
  g.row_map = {0, 2, 3, 4, 4};
  g.entries = {1, 2, 3, 3};
  return g;
}

weft::Executor make_executor(int workers) {
  weft::ExecutorConfig cfg;
  cfg.cpu_workers = workers;
  cfg.gpu_workers = 0;
  return weft::Executor(cfg);
}

}  // namespace

TEST_CASE("Trace.spans_carry_node_level_partition_device_and_run.2threads") {
  weft::Executor executor = make_executor(2);
  weft::WorkGraphPolicy<int> policy(diamond());
  int graph_identity = 0;
  policy.set_node_labels(&graph_identity, {{"top", "node", -1, -1, 0},
                                           {"left", "node", 0, 3, 1},
                                           {"right", "node", 1, -1, 1},
                                           {"bottom", "node", -1, -1, 2}});
  executor.start_trace();
  for (int pass = 0; pass < 2; ++pass) weft::parallel_for(executor, policy, [](int) {});
  const nlohmann::json doc = write_and_read(executor, "weft_runtime_trace_args.json");

  std::map<std::pair<std::string, int>, nlohmann::json> args;  // by (name, run)
  for (const nlohmann::json& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] != "run")
      args[{e["name"].get<std::string>(), e["args"]["run"].get<int>()}] = e["args"];
  }
  REQUIRE(args.size() == 8);
  const nlohmann::json& left = args[{"left", 1}];
  CHECK(left["node"] == 1);
  CHECK(left["level"] == 1);
  CHECK(left["partition"] == 0);
  CHECK(left["device"] == 3);
  CHECK(left["run"] == 1);
  CHECK(left["domain"] == "cpu");
  const nlohmann::json& right = args[{"right", 0}];
  CHECK(right["partition"] == 1);
  CHECK_FALSE(right.contains("device"));  // -1: left out
  const nlohmann::json& top = args[{"top", 0}];
  CHECK(top["node"] == 0);
  CHECK(top["level"] == 0);
  CHECK_FALSE(top.contains("partition"));
  CHECK(args[{"bottom", 1}]["level"] == 2);
}

TEST_CASE("Trace.flow_events_pair_the_edges_of_each_run.3threads") {
  weft::Executor executor = make_executor(3);
  weft::WorkGraphPolicy<int> policy(diamond());
  executor.start_trace();
  for (int pass = 0; pass < 3; ++pass) weft::parallel_for(executor, policy, [](int) {});
  const nlohmann::json doc = write_and_read(executor, "weft_runtime_trace_flows.json");

  // Spans by track; each flow end binds to the span around its ts on its track.
  std::map<int, std::vector<nlohmann::json>> spans;
  std::map<long long, std::map<std::string, nlohmann::json>> flows;  // by id: "s" and "f"
  for (const nlohmann::json& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] != "run") spans[e["tid"].get<int>()].push_back(e);
    if (e["ph"] == "s" || e["ph"] == "f") {
      CHECK(e["cat"] == "edge");
      flows[e["id"].get<long long>()][e["ph"].get<std::string>()] = e;
    }
  }
  const auto bound = [&](const nlohmann::json& flow) {
    const double ts = flow["ts"];
    const nlohmann::json* found = nullptr;
    for (const nlohmann::json& span : spans[flow["tid"].get<int>()]) {
      const double start = span["ts"], end = start + span["dur"].get<double>();
      if (start < ts && ts <= end) found = &span;
    }
    REQUIRE(found != nullptr);
    return *found;
  };
  std::set<std::tuple<int, int, int>> edges;  // (run, from, to)
  for (const auto& [id, ends] : flows) {
    REQUIRE(ends.size() == 2);
    CHECK(ends.at("f")["bp"] == "e");
    const nlohmann::json from = bound(ends.at("s")), to = bound(ends.at("f"));
    CHECK(from["args"]["run"] == to["args"]["run"]);
    edges.emplace(from["args"]["run"].get<int>(), from["args"]["node"].get<int>(),
                  to["args"]["node"].get<int>());
  }
  CHECK(edges.size() == flows.size());  // no edge twice
  std::set<std::tuple<int, int, int>> expected;
  for (int run = 0; run < 3; ++run) {
    for (auto [from, to] : {std::pair{0, 1}, {0, 2}, {1, 3}, {2, 3}}) expected.emplace(run, from, to);
  }
  CHECK(edges == expected);
}

TEST_CASE("Trace.runs_have_spans_on_a_track_of_their_own.2threads") {
  weft::Executor executor = make_executor(2);
  weft::WorkGraphPolicy<int> policy(diamond());
  executor.start_trace();
  for (int pass = 0; pass < 2; ++pass) weft::parallel_for(executor, policy, [](int) {});
  CHECK(executor.tracer().runs().size() == 2);
  const nlohmann::json doc = write_and_read(executor, "weft_runtime_trace_runs.json");

  std::string process;
  std::map<int, std::string> threads;
  std::vector<nlohmann::json> runs, nodes;
  for (const nlohmann::json& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") process = e["args"]["name"].get<std::string>();
    if (e["ph"] == "M" && e["name"] == "thread_name")
      threads[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
    if (e["ph"] == "X") (e["cat"] == "run" ? runs : nodes).push_back(e);
  }
  CHECK(process == "weft");
  CHECK(threads == std::map<int, std::string>{{0, "worker 0 (cpu)"}, {1, "worker 1 (cpu)"}, {2, "runs"}});
  REQUIRE(runs.size() == 2);
  for (int r = 0; r < 2; ++r) {
    const nlohmann::json& run = runs[static_cast<std::size_t>(r)];
    CHECK(run["name"] == "run " + std::to_string(r));
    CHECK(run["tid"] == 2);
    CHECK(run["args"]["run"] == r);
    CHECK(run["args"]["nodes"] == 4);
    const double start = run["ts"], end = start + run["dur"].get<double>();
    for (const nlohmann::json& node : nodes) {
      if (node["args"]["run"] != r) continue;
      CHECK(node["ts"].get<double>() >= start);
      CHECK(node["ts"].get<double>() + node["dur"].get<double>() <= end);
    }
  }
}

TEST_CASE("Trace.jobs_that_are_not_graph_nodes_have_no_node_args") {
  weft::Tracer tracer(1);
  tracer.start();
  tracer.record(0, "job", weft::Domain::Cpu, 0);
  const std::string path = temp_path("weft_runtime_trace_jobs.json");
  tracer.write_chrome_json(path, {weft::Domain::Cpu});
  std::ifstream in(path);
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::remove(path.c_str());
  int jobs = 0;
  for (const nlohmann::json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++jobs;
    CHECK(e["args"] == nlohmann::json{{"domain", "cpu"}});
  }
  CHECK(jobs == 1);
}

TEST_CASE("Trace.a_second_executor_keeps_the_file_extension") {
  CHECK(weft::numbered_trace_path("run.json", 0) == "run.json");
  CHECK(weft::numbered_trace_path("run.json", 1) == "run.1.json");
  CHECK(weft::numbered_trace_path("out/run.trace.json", 2) == "out/run.trace.2.json");
  CHECK(weft::numbered_trace_path("out.d/run", 1) == "out.d/run.1");
  CHECK(weft::numbered_trace_path(".hidden", 1) == ".hidden.1");
}

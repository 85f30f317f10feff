// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Graph builder: Ripple's listings, levels, subgraphs, conditionals,
// running, cancelling, errors, and JSON / DOT.
#include <weft/graph/graph.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../executor_configs.hpp"
#include "../test_support.hpp"

namespace {

std::set<std::pair<int, int>> edge_set(const nlohmann::json& doc) {
  std::set<std::pair<int, int>> out;
  for (const auto& e : doc["edges"]) out.emplace(e["from"].get<int>(), e["to"].get<int>());
  return out;
}

// Ripple's Listing 5, with a log instead of printing.
weft::Graph listing5(std::vector<std::string>& log, std::mutex& m) {
  auto say = [&log, &m](const char* s) {
    std::lock_guard<std::mutex> lock(m);
    log.emplace_back(s);
  };
  weft::Graph g(weft::ExecutionKind::Cpu);
  g.emplace([=] { say("A"); }).named("A");
  g.then([=] { say("B"); }).named("B");
  g.emplace(weft::ExecutionKind::Gpu, weft::make_node([=](const char* s) { say(s); }, "C"),
            weft::make_node([=](const char* s) { say(s); }, "D"))
      .named("CD");
  g.then([=] { say("E"); }).named("E");
  return g;
}

}  // namespace

TEST_CASE("Graph.listing5_builds_figure2") {
  std::vector<std::string> log;
  std::mutex m;
  const weft::Graph g = listing5(log, m);
  const nlohmann::json doc = g.to_json();
  CHECK(doc["format"] == "weft-graph");
  CHECK(doc["version"] == 2);
  REQUIRE(doc["nodes"].size() == 5);
  // A on level 0; B, C, D on level 1 (all after A); E on level 2 after all three.
  const std::vector<std::string> names{"A", "B", "CD.0", "CD.1", "E"};
  const std::vector<int> levels{0, 1, 1, 1, 2};
  for (int i = 0; i < 5; ++i) {
    CHECK(doc["nodes"][i]["name"] == names[static_cast<std::size_t>(i)]);
    CHECK(doc["nodes"][i]["level"] == levels[static_cast<std::size_t>(i)]);
  }
  CHECK(doc["nodes"][2]["execution_kind"] == "gpu");
  CHECK(doc["nodes"][1]["execution_kind"] == "cpu");
  CHECK(edge_set(doc) == std::set<std::pair<int, int>>{{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}, {3, 4}});
  CHECK(doc["graph"]["level_count"] == 3);
}

TEST_CASE("Graph.listing5_runs_in_dependence_order.virtual_devices") {
  std::vector<std::string> log;
  std::mutex m;
  weft::Graph g = listing5(log, m);
  weft::Executor executor(weft::test::with_virtual_devices(2, /*virtual_devices=*/1));
  for (int run = 0; run < 3; ++run) {
    log.clear();
    executor.run(g).wait().get();
    REQUIRE(log.size() == 5);
    CHECK(log.front() == "A");
    CHECK(log.back() == "E");
  }
  executor.run_n(g, 4).wait().get();
  CHECK(log.size() == 5 * 5);
}

TEST_CASE("Graph.runs_on_several_executors_one_after_another") {
  std::atomic<int> ran{0};
  weft::Graph g;
  for (int i = 0; i < 20; ++i) g.emplace([&] { ran.fetch_add(1); });
  g.then([&] { ran.fetch_add(1); });
  for (int workers : {1, 3, 2}) {
    weft::Executor executor(weft::test::cpu_only(workers));
    executor.run_n(g, 2).wait().get();
  }
  CHECK(ran.load() == 3 * 2 * 21);
}

TEST_CASE("Graph.gpu_nodes_need_gpu_workers") {
  std::vector<std::string> log;
  std::mutex m;
  weft::Graph g = listing5(log, m);
  weft::Executor executor(weft::test::cpu_only(2));
  CHECK_THROWS_WITH_AS(executor.run(g).wait().get(), doctest::Contains("GPU-priority workers"),
                       std::logic_error);
}

TEST_CASE("Graph.listing9_conditional_loop_runs_until_the_predicate_stops") {
  // x starts at 4; each loop subtracts 1 and "reduces"; stop when the sum is 0.
  int x = 0, sum = -1, iterations = 0;
  weft::Graph init;
  init.emplace([&] { x = 4; }).named("init");
  weft::Graph map_reduce;
  map_reduce.emplace([&] { x -= 1; }).named("map");
  map_reduce
      .then([&] {
        sum = x;
        ++iterations;
      })
      .named("reduce");
  map_reduce.conditional([&] { return sum != 0; });
  init.then(map_reduce);
  const nlohmann::json doc = init.to_json();
  REQUIRE(doc["nodes"].size() == 2);
  CHECK(doc["nodes"][1]["kind"] == "subgraph");
  CHECK(map_reduce.to_json()["nodes"][2]["kind"] == "conditional");
  CHECK(map_reduce.to_json()["graph"]["conditional"] == true);
  weft::Executor executor(weft::test::cpu_only(2));
  executor.run(init).wait().get();
  CHECK(iterations == 4);
  CHECK(x == 0);
}

TEST_CASE("Graph.subgraphs_connect_as_in_section_5_3_5") {
  auto nop = [] {};
  weft::Graph sub;
  sub.emplace(nop).named("s1");
  sub.emplace(nop).named("s2");
  sub.then(nop).named("s3");
  weft::Graph g;
  g.emplace(nop).named("a");
  g.then(nop).named("b");
  g.then(sub);             // s1, s2 after b; s3 after s1 and s2
  g.then(nop).named("c");  // after the subgraph's last level (s3)
  const auto id = [&](const char* n) { return *g.find(n); };
  const auto edges = g.edges();
  const std::set<std::pair<int, int>> got(edges.begin(), edges.end());
  CHECK(got == std::set<std::pair<int, int>>{{id("a"), id("b")},
                                             {id("b"), id("s1")},
                                             {id("b"), id("s2")},
                                             {id("s1"), id("s3")},
                                             {id("s2"), id("s3")},
                                             {id("s3"), id("c")}});
  weft::Graph beside;
  beside.emplace(nop).named("x");
  beside.then(nop).named("y");
  weft::Graph side;
  side.emplace(nop).named("z");
  beside.emplace(side);  // z beside y: after x
  CHECK(beside.levels() == std::vector<int>{0, 1, 1});
  CHECK_THROWS_AS(beside.emplace(side), std::invalid_argument);  // "z" again
}

TEST_CASE("Graph.sync_waits_for_everything") {
  std::atomic<int> done{0};
  int seen = -1;
  weft::Graph g;
  for (int i = 0; i < 8; ++i) g.emplace([&] { done.fetch_add(1); });
  g.then([&] { done.fetch_add(1); });
  g.sync([&] { seen = done.load(); }).named("sync");
  CHECK(g.node(*g.find("sync")).kind == weft::NodeKind::Sync);
  weft::Executor executor(weft::test::cpu_only(2));
  executor.run(g).wait().get();
  CHECK(seen == 9);
}

TEST_CASE("Graph.extra_edges_and_cycles_by_name") {
  auto nop = [] {};
  weft::Graph g;
  g.emplace(nop).named("load");
  g.then(nop).named("solve");
  g.then(nop).named("store");
  g.emplace(nop).named("log");  // beside store: after solve
  g.add_edge("store", "log");   // now after store too
  CHECK(g.levels()[static_cast<std::size_t>(*g.find("log"))] == 3);
  CHECK_THROWS_WITH_AS(g.add_edge("store", "nowhere"), doctest::Contains("no node named 'nowhere'"),
                       std::invalid_argument);
  g.add_edge("log", "solve");
  bool ran = false;
  g.then([&] { ran = true; });
  weft::Executor executor(weft::test::cpu_only(1));
  CHECK_THROWS_WITH_AS(executor.run(g), doctest::Contains("cycle"), std::invalid_argument);
  try {
    g.validate();
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    CHECK(msg.find("'solve'") != std::string::npos);
    CHECK(msg.find("'log'") != std::string::npos);
  }
  CHECK_FALSE(ran);
}

TEST_CASE("Graph.exception_in_a_node_reaches_the_future_and_skips_the_rest") {
  std::atomic<int> after{0};
  weft::Graph g;
  g.emplace([] { throw std::runtime_error("node failed"); });
  g.then([&] { after.fetch_add(1); });
  weft::Executor executor(weft::test::cpu_only(2));
  weft::Future<> f = executor.run(g);
  CHECK_THROWS_WITH_AS(f.wait().get(), "node failed", std::runtime_error);
  CHECK(after.load() == 0);
  // The graph is reusable.
  weft::Graph ok;
  ok.emplace([&] { after.fetch_add(1); });
  executor.run(ok).wait().get();
  CHECK(after.load() == 1);
}

TEST_CASE("Graph.run_until_and_cancel") {
  std::atomic<int> runs{0};
  weft::Graph g;
  g.emplace([&] { runs.fetch_add(1); });
  weft::Executor executor(weft::test::cpu_only(2));
  executor.run_until(g, [&] { return runs.load() >= 5; }).wait().get();
  CHECK(runs.load() == 5);

  // A long chain, cancelled while it runs: nodes not yet started never start.
  std::atomic<int> started{0};
  std::atomic<bool> go{false};
  weft::Graph chain;
  chain.emplace([&] {
    while (!go.load()) std::this_thread::yield();
    started.fetch_add(1);
  });
  for (int i = 0; i < 100; ++i) chain.then([&] { started.fetch_add(1); });
  weft::Future<> f = executor.run(chain);
  f.cancel();
  go = true;
  f.wait();
  CHECK(f.is_cancelled());
  CHECK_THROWS_AS(f.get(), weft::Cancelled);
  CHECK(started.load() < 101);
}

TEST_CASE("Graph.running_a_graph_inside_a_node_never_deadlocks.1thread") {
  std::atomic<int> inner_runs{0};
  weft::Graph inner;
  for (int i = 0; i < 10; ++i) inner.emplace([&] { inner_runs.fetch_add(1); });
  weft::Executor executor(weft::test::cpu_only(1));
  weft::Graph outer;
  outer.emplace([&] { executor.run(inner).wait().get(); });  // the only worker waits here and runs inner
  outer.then([&] { executor.run_n(inner, 2).wait().get(); });
  executor.run(outer).wait().get();
  CHECK(inner_runs.load() == 30);
}

TEST_CASE("Graph.json_round_trip_of_random_graphs") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    weft::Graph g(trial % 2 ? weft::ExecutionKind::Gpu : weft::ExecutionKind::Cpu);
    const int ops = 1 + static_cast<int>(rng() % 30);
    for (int k = 0; k < ops; ++k) {
      auto kind = rng() % 2 ? weft::ExecutionKind::Gpu : weft::ExecutionKind::Cpu;
      switch (rng() % 4) {
        case 0:
          g.emplace(kind, [] {});
          break;
        case 1:
          g.then(kind, [] {});
          break;
        case 2:
          g.emplace(weft::make_node([] {}), weft::make_node([] {}));
          break;
        default:
          g.sync([] {});
      }
      if (rng() % 3 == 0) g.named("op" + std::to_string(k));
    }
    const nlohmann::json doc = g.to_json();
    const weft::Graph back = weft::Graph::from_json(doc);
    CHECK(back.to_json() == doc);
    CHECK(weft::Graph::from_json_text(doc.dump()).to_json() == doc);
    CHECK(back.to_dot() == g.to_dot());
  }
}

TEST_CASE("Graph.loaded_graphs_can_be_inspected_not_run") {
  weft::Graph g;
  g.emplace([] {}).named("only");
  const weft::Graph back = weft::Graph::from_json(g.to_json());
  CHECK(back.find("only") == 0);
  weft::Executor executor(weft::test::cpu_only(1));
  weft::Graph copy = back;
  CHECK_THROWS_WITH_AS(executor.run(copy), doctest::Contains("no callable"), std::logic_error);
}

TEST_CASE("Graph.malformed_and_hostile_json_is_rejected_clearly") {
  weft::Graph g;
  g.emplace([] {}).named("a");
  g.then([] {}).named("b");
  const nlohmann::json good = g.to_json();
  const auto rejects = [](const std::string& text, const char* expected) {
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(weft::Graph::from_json_text(text), doctest::Contains(expected),
                         std::invalid_argument);
  };
  rejects("{\"format\": \"weft-graph\", ", "syntax error");
  rejects("[1, 2]", "expected an object");
  rejects(std::string(100000, '[') + std::string(100000, ']'), "nesting deeper");
  auto broken = [&](auto edit) {
    nlohmann::json doc = good;
    edit(doc);
    return doc.dump();
  };
  rejects(broken([](auto& d) { d["format"] = "other"; }), "document.format");
  rejects(broken([](auto& d) { d["version"] = 99; }), "not supported");
  rejects(broken([](auto& d) { d.erase("nodes"); }), "missing field 'nodes'");
  rejects(broken([](auto& d) { d["nodes"][0]["kind"] = "teleport"; }), "unknown kind \"teleport\"");
  rejects(broken([](auto& d) { d["nodes"][0]["id"] = "zero"; }), "nodes[0].id: expected an integer");
  rejects(broken([](auto& d) { d["nodes"][1]["id"] = 123456789012345LL; }), "outside");
  rejects(broken([](auto& d) { d["nodes"][1]["id"] = 0; }), "appears twice");
  // The largest unsigned 64-bit number does not fit the signed range (found by the fuzzer).
  rejects(broken([](auto& d) { d["edges"][0]["from"] = 18446744073709551615ULL; }),
          "value 18446744073709551615 outside");
  rejects(broken([](auto& d) { d["edges"][0]["to"] = 7; }),
          "edges[0]: refers to node 7, which does not exist");
  rejects(broken([](auto& d) {
            d["edges"].push_back({{"from", 1}, {"to", 0}, {"kind", "strong"}});
            d["graph"]["edge_count"] = 2;
          }),
          "-> 'a' ->");
  rejects(broken([](auto& d) { d["nodes"][1]["level"] = 0; }), "says 0 but its edges put it on level 1");
  rejects(broken([](auto& d) { d["nodes"][1]["level"] = 5; }), "outside");
  rejects(broken([](auto& d) { d["graph"]["node_count"] = 3; }), "graph.node_count");
  rejects(broken([](auto& d) { d["nodes"][1]["name"] = "a"; }), "is used by nodes 0 and 1");
}

TEST_CASE("Graph.json_with_a_repeated_key_is_rejected_naming_where") {
  // Plain JSON parsers keep the last of two keys silently; a graph file that
  // says a thing twice is refused.
  const auto message = [](const std::string& text) {
    return weft::test::invalid_argument_message([&] { weft::Graph::from_json_text(text); });
  };
  CHECK(message(R"({"format": "weft-graph", "format": "weft-graph"})") ==
        "graph JSON: document: the key \"format\" appears twice");
  weft::Graph g;
  g.emplace([] {}).named("a");
  std::string text = g.to_json().dump();
  const std::string name_field = "\"name\":\"a\"";
  text.replace(text.find(name_field), name_field.size(), name_field + ",\"name\":\"b\"");
  CHECK(message(text) == "graph JSON: nodes[0]: the key \"name\" appears twice");
  // Messages are weft's own, without the JSON library's exception tags.
  CHECK(message("{\"format\": 1e400}").find("[json.exception") == std::string::npos);
  CHECK(message("{\"format\": ").find("syntax error") != std::string::npos);
  CHECK(message("{\"format\": ").find("[json.exception") == std::string::npos);
}

TEST_CASE("Graph.a_large_graph_round_trips_through_json") {
  // 100,000 named nodes in one array through the SAX loader; whether loading
  // stays linear is measured by weft-bench's graph_json_load, not here.
  weft::Graph g;
  g.emplace([] {}).named("root");
  for (int i = 0; i < 100000; ++i) g.then([] {}).named("n" + std::to_string(i));
  const weft::Graph back = weft::Graph::from_json_text(g.to_json().dump());
  CHECK(back.size() == g.size());
  CHECK(back.find("n99999") == 100000);
}

TEST_CASE("Graph.names_must_be_utf8") {
  weft::Graph g;
  g.emplace([] {});
  CHECK(weft::test::invalid_argument_message([&] { g.named("caf\xe9"); }) ==
        "Graph::named: the name is not valid UTF-8 (byte 3 of 4)");
  CHECK(weft::test::invalid_argument_message([&] { g.named("\xed\xa0\x80"); })  // a surrogate
            .find("not valid UTF-8") != std::string::npos);
  g.named("caf\xc3\xa9 \xf0\x9f\x8c\x8a");  // café 🌊
  CHECK(weft::Graph::from_json_text(g.to_json().dump()).find("caf\xc3\xa9 \xf0\x9f\x8c\x8a") == 0);
}

TEST_CASE("Graph.dot_labels_carry_no_control_characters") {
  weft::Graph g;
  g.emplace([] {}).named("a\x1b[31m\"red\"\nnext\xc2\x9b");
  const std::string dot = g.to_dot();
  CHECK(dot.find("a?[31m\\\"red\\\"\\nnext?") != std::string::npos);
  CHECK(std::none_of(dot.begin(), dot.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 && c != '\n'; }));
}

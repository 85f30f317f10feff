// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Condition nodes in the Graph builder (branch, make_branch): a node that
// returns which one of its successors runs, so that branches, loops and
// state machines fit in one graph. Scenarios re-expressed from Taskflow's
// test_control_flow (FlipCoinCond, CyclicCond, BTreeCondition, Cond2Cond,
// HierCondition, CancelInfiniteLoop) plus a do-while loop, nested
// branches, branches across CPU and GPU-kind nodes, and how such graphs
// look in levels, JSON and DOT.
#include <weft/graph/graph.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../executor_configs.hpp"

namespace {

using NodeId = weft::Graph::NodeId;

// What ran, in order: say("x") is a node callable that logs "x".
struct Log {
  auto say(const char* what) {
    return [this, what] {
      std::lock_guard<std::mutex> lock(m);
      ran.emplace_back(what);
    };
  }
  std::mutex m;
  std::vector<std::string> ran;
};

// A do-while loop: init, body, "while i < 5" choosing body (0) or done (1).
weft::Graph do_while(int& i, int& body, bool& done) {
  weft::Graph g;
  g.emplace([&] { i = 0; }).named("init");
  g.then([&] {
     ++i;
     ++body;
   }).named("body");
  g.branch([&] { return i < 5 ? 0 : 1; }).named("while");
  g.add_edge("while", "body");                 // choice 0: again
  g.then([&] { done = true; }).named("done");  // choice 1: the node then() adds after it
  return g;
}

}  // namespace

TEST_CASE("GraphConditions.branch_chooses_one_of_the_nodes_after_it.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  int choice = 0;
  Log log;
  weft::Graph g;
  g.emplace(log.say("init")).named("init");
  g.branch([&] { return choice; }).named("which");
  g.then(log.say("zero")).named("zero");   // choice 0
  g.emplace(log.say("one")).named("one");  // choice 1: beside it, also after the branch
  g.emplace(log.say("two")).named("two");  // choice 2
  CHECK(g.node(*g.find("which")).kind == weft::NodeKind::Condition);
  const std::vector<std::vector<std::string>> expected{
      {"init", "zero"}, {"init", "one"}, {"init", "two"}, {"init"}};
  for (choice = -1; choice < 4; ++choice) {
    log.ran.clear();
    executor.run(g).get();
    CHECK(log.ran == expected[static_cast<std::size_t>(choice < 0 ? 3 : choice)]);  // out of range: nothing
  }
}

TEST_CASE("GraphConditions.a_do_while_loop_in_one_graph.3threads") {
  weft::Executor executor(weft::test::cpu_only(3));
  int i = 0, body = 0;
  bool done = false;
  weft::Graph g = do_while(i, body, done);
  CHECK(g.is_weak({*g.find("while"), *g.find("body")}));
  CHECK_FALSE(g.is_weak({*g.find("init"), *g.find("body")}));
  executor.run_n(g, 3).get();
  CHECK(body == 15);
  CHECK(done);
  // Levels leave out the edge that closes the loop.
  CHECK(g.levels() == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("GraphConditions.flip_coins_until_five_heads.2threads") {
  // Taskflow's FlipCoinCond: five flips in a row, back to the first on
  // tails; the expected number of flips for five heads is 32.
  weft::Executor executor(weft::test::cpu_only(2));
  std::mt19937 rng(2024);
  long steps = 0, total = 0;
  weft::Graph g;
  g.emplace([&] { steps = 0; });
  for (int k = 0; k < 5; ++k) {
    g.branch([&rng, &steps, k] {
       if (k == 0) ++steps;
       return static_cast<int>(rng() % 2);
     }).named("flip" + std::to_string(k));
  }
  g.then([&] { total += steps; });  // heads after the fifth flip
  // Each flip's choice 0 (heads) is the node the builder put after it;
  // choice 1 (tails) goes back to the first flip.
  for (int k = 0; k < 5; ++k) g.add_edge("flip" + std::to_string(k), "flip0");
  const int rounds = 2000;
  executor.run_n(g, rounds).get();
  const double average = static_cast<double>(total) / rounds;
  CHECK(average > 29.0);
  CHECK(average < 35.0);
}

TEST_CASE("GraphConditions.a_cycle_passes_through_each_branch_once.2threads") {
  // Taskflow's CyclicCond, built Taskflow's way: nodes, then edges. S -> A
  // -> branch -> one of t_i, each back to A (0) or on to T (1, the last time).
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    weft::Executor executor(weft::test::cpu_only(threads));
    const int iterations = 200;
    int done_iterations = 0, selector = 0;
    bool reached = false;
    std::vector<int> visits(iterations, 0);
    weft::Graph g;
    const NodeId s = g.emplace([] {}).last();
    const NodeId a = g.emplace([&] { ++done_iterations; }).last();
    const NodeId target = g.emplace([&] { reached = done_iterations == iterations; }).last();
    const NodeId branch = g.emplace(weft::make_branch([&] { return selector++; })).last();
    g.add_edge(s, a);
    g.add_edge(a, branch);
    for (int i = 0; i < iterations; ++i) {
      const NodeId t = g.emplace(weft::make_branch([&, i] {
                          ++visits[static_cast<std::size_t>(i)];
                          return done_iterations < iterations ? 0 : 1;
                        })).last();
      g.add_edge(branch, t);
      g.add_edge(t, a);
      g.add_edge(t, target);
    }
    executor.run(g).get();
    CHECK(reached);
    for (int v : visits) REQUIRE(v == 1);
  }
}

TEST_CASE("GraphConditions.a_binary_tree_of_choices.3threads") {
  // Taskflow's BTreeCondition: levels alternate between counting nodes and
  // condition nodes that choose one of their two children.
  weft::Executor executor(weft::test::cpu_only(3));
  for (int levels = 1; levels < 12; ++levels) {
    CAPTURE(levels);
    std::atomic<int> counter{0};
    weft::Graph g;
    std::vector<NodeId> previous, current;
    for (int level = 0; level < levels; ++level) {
      current.clear();
      for (int j = 0; j < (1 << level); ++j) {
        if (level % 2 == 0) {
          current.push_back(g.emplace([&] { counter.fetch_add(1); }).last());
        } else {
          current.push_back(g.emplace(weft::make_branch([j] { return j % 2; })).last());
        }
      }
      for (std::size_t j = 0; j < previous.size(); ++j) {
        g.add_edge(previous[j], current[2 * j]);
        g.add_edge(previous[j], current[2 * j + 1]);
      }
      previous.swap(current);
    }
    executor.run(g).get();
    CHECK(counter.load() == (1 << ((levels + 1) / 2)) - 1);
  }
}

TEST_CASE("GraphConditions.conditions_choosing_conditions.2threads") {
  // Taskflow's Cond2Cond: two condition nodes that choose each other and A.
  weft::Executor executor(weft::test::cpu_only(2));
  int visits_a = 0, visits_c1 = 0, visits_c2 = 0, iteration_c1 = 0, iteration_c2 = 0;
  bool b_ran = false;
  weft::Graph g;
  const NodeId s = g.emplace([] {}).last();
  const NodeId a = g.emplace([&] { ++visits_a; }).last();
  const NodeId c1 = g.emplace(weft::make_branch([&] {
                       ++visits_c1;
                       return ++iteration_c1 == 1 ? 0 : 1;
                     })).last();
  const NodeId c2 = g.emplace(weft::make_branch([&] {
                       ++visits_c2;
                       return iteration_c2++;
                     })).last();
  const NodeId b = g.emplace([&] { b_ran = true; }).last();
  const NodeId d = g.emplace([&] { iteration_c1 = iteration_c2 = 0; }).last();
  g.add_edge(s, a);
  g.add_edge(a, c1);
  g.add_edge(c1, a);   // c1: 0 -> A
  g.add_edge(c1, c2);  //     1 -> c2
  g.add_edge(c2, c1);  // c2: 0 -> c1
  g.add_edge(c2, a);   //     1 -> A
  g.add_edge(c1, b);   // c1: 2 -> B, never chosen
  g.add_edge(c2, d);   // c2: 2 -> D
  executor.run_n(g, 10).get();
  CHECK(visits_a == 30);
  CHECK(visits_c1 == 40);
  CHECK(visits_c2 == 30);
  CHECK_FALSE(b_ran);
}

TEST_CASE("GraphConditions.loops_inside_subgraphs_that_a_branch_chooses.2threads") {
  // Taskflow's HierCondition: modules with loops of their own, composed
  // into a graph with loops. An inlined module's loop becomes part of the
  // graph; a module a branch chooses runs as one node.
  weft::Executor executor(weft::test::cpu_only(2));
  int c1 = 0, c2 = 0, repeats = 0;
  std::atomic<bool> in_order{true};
  const auto looping = [&](int& counter) {
    weft::Graph module;  // reset, then 100 times the middle node
    module.emplace([&] { counter = 0; });
    module.then([&, state = 0]() mutable {
      if (state++ % 100 != counter % 100) in_order = false;
    });
    module.branch([&] { return ++counter < 100 ? 0 : 1; });
    module.add_edge(2, 1);  // choice 0: the middle node again; choice 1: whatever follows
    return module;
  };
  const weft::Graph m1 = looping(c1), m2 = looping(c2);
  weft::Graph top;
  top.emplace([&] { c1 = c2 = repeats = 0; }).named("init");
  top.then(m1);                              // inlined
  top.branch([] { return 0; }).named("go");  // m1's exit (its choice 1)
  top.then(m2).named("module2");             // go's choice: one subgraph node
  top.branch([&] { return ++repeats < 10 ? 0 : 1; }).named("again");
  top.add_edge("again", "module2");  // choice 0: the module once more
  top.then([&] { in_order = in_order && c1 == 100 && c2 == 100 && repeats == 10; })
      .named("check");  // choice 1
  CHECK(top.node(*top.find("module2")).kind == weft::NodeKind::Subgraph);
  CHECK(top.size() == 1 + 3 + 4);
  executor.run(top).get();
  CHECK(in_order.load());
  executor.run_n(top, 3).get();
  CHECK(in_order.load());
  CHECK(repeats == 10);
}

TEST_CASE("GraphConditions.branches_across_cpu_and_gpu_kind_nodes.virtual_devices") {
  weft::Executor executor(weft::test::with_virtual_devices(2, 1));
  std::atomic<int> on_gpu_workers{0}, on_cpu{0};
  int pick = 0;
  const auto where = [&] {
    const weft::WorkerContext* worker = weft::Executor::current_worker();
    (worker != nullptr && worker->domain() == weft::Domain::Gpu ? on_gpu_workers : on_cpu).fetch_add(1);
  };
  weft::Graph g;
  g.emplace([] {});
  g.branch(weft::ExecutionKind::Gpu, [&] {  // the condition itself on a GPU-priority worker
    where();
    return pick;
  });
  g.then(weft::ExecutionKind::Cpu, [&] { on_cpu.fetch_add(100); });  // 0
  g.emplace(weft::ExecutionKind::Gpu, [&] { where(); });             // 1
  for (pick = 0; pick < 2; ++pick) executor.run(g).get();
  CHECK(on_gpu_workers.load() == 3);  // the condition twice, the GPU-kind node once
  CHECK(on_cpu.load() == 100);
}

TEST_CASE("GraphConditions.strong_cycles_are_errors_and_loops_are_not") {
  weft::Graph g;
  g.emplace([] {}).named("a");
  g.then([] {}).named("b");
  g.then([] {}).named("c");
  g.add_edge("c", "b");  // b -> c -> b, no condition node: an error
  CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("cycle"), std::invalid_argument);
  try {
    g.validate();
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    CHECK(message.find("'b'") != std::string::npos);
    CHECK(message.find("'c'") != std::string::npos);
    CHECK(message.find("'a'") == std::string::npos);
  }
  weft::Executor executor(weft::test::cpu_only(1));
  CHECK_THROWS_WITH_AS(executor.run(g), doctest::Contains("condition node"), std::invalid_argument);
  int i = 0, body = 0;
  bool done = false;
  const weft::Graph loop = do_while(i, body, done);
  CHECK_NOTHROW(loop.validate());
}

TEST_CASE("GraphConditions.an_infinite_loop_stops_when_cancelled.4threads") {
  // Taskflow's CancelInfiniteLoop.
  weft::Executor executor(weft::test::cpu_only(4));
  std::atomic<long> turns{0};
  weft::Graph g;
  for (int i = 0; i < 100; ++i) {
    const NodeId a = g.emplace([] {}).last();
    const NodeId b = g.emplace(weft::make_branch([&] {
                        turns.fetch_add(1, std::memory_order_relaxed);
                        return 0;
                      })).last();
    g.add_edge(a, b);
    g.add_edge(b, b);
  }
  weft::Future<> f = executor.run(g);
  while (turns.load() < 10000) std::this_thread::yield();
  f.cancel();
  CHECK_THROWS_AS(f.get(), weft::Cancelled);
}

TEST_CASE("GraphConditions.an_exception_in_a_loop_ends_the_run.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  int turns = 0;
  weft::Graph g;
  g.emplace([&] { turns = 0; });
  g.then([&] {
    if (++turns == 7) throw std::runtime_error("turn 7 failed");
  });
  g.branch([] { return 0; });  // forever, but for the failure
  g.add_edge(2, 1);
  CHECK_THROWS_WITH_AS(executor.run(g).get(), "turn 7 failed", std::runtime_error);
  CHECK(turns == 7);
  CHECK_THROWS_WITH_AS(executor.run(g).get(), "turn 7 failed", std::runtime_error);  // and again
}

TEST_CASE("GraphConditions.sync_follows_the_paths_not_the_branch") {
  weft::Executor executor(weft::test::cpu_only(2));
  Log log;
  weft::Graph g;
  g.emplace(log.say("a"));
  g.branch([] { return 5; });  // chooses nothing; it is a sink sync() does not wait for
  g.emplace(log.say("side"));  // beside the branch: after a
  g.sync(log.say("sync"));
  executor.run(g).get();
  CHECK(log.ran == std::vector<std::string>{"a", "side", "sync"});
}

TEST_CASE("GraphConditions.json_and_dot_show_conditions_and_weak_edges") {
  int i = 0, body = 0;
  bool done = false;
  const weft::Graph g = do_while(i, body, done);
  const nlohmann::json doc = g.to_json();
  CHECK(doc["version"] == 2);
  CHECK(doc["nodes"][2]["kind"] == "condition");
  CHECK(doc["nodes"][3]["level"] == 3);
  REQUIRE(doc["edges"].size() == 4);
  CHECK(doc["edges"][0]["kind"] == "strong");
  CHECK(doc["edges"][2] == nlohmann::json({{"from", 2}, {"to", 1}, {"kind", "weak"}}));
  const weft::Graph back = weft::Graph::from_json(doc);
  CHECK(back.to_json() == doc);
  CHECK(back.is_weak({2, 3}));
  const std::string dot = g.to_dot();
  CHECK(dot.find("shape=diamond") != std::string::npos);
  CHECK(dot.find("n2 -> n1 [style=dashed, label=\"0\"]") != std::string::npos);
  CHECK(dot.find("n2 -> n3 [style=dashed, label=\"1\"]") != std::string::npos);

  nlohmann::json wrong = doc;
  wrong["edges"][2]["kind"] = "strong";
  CHECK_THROWS_WITH_AS(weft::Graph::from_json(wrong), doctest::Contains("edges[2].kind"),
                       std::invalid_argument);
  wrong = doc;
  wrong["edges"][0]["kind"] = "sideways";
  CHECK_THROWS_WITH_AS(weft::Graph::from_json(wrong), doctest::Contains("expected \"strong\" or \"weak\""),
                       std::invalid_argument);
  wrong = doc;
  wrong["version"] = 1;  // version 1 has no condition nodes
  CHECK_THROWS_WITH_AS(weft::Graph::from_json(wrong), doctest::Contains("condition: version 2"),
                       std::invalid_argument);
  nlohmann::json old = weft::Graph::from_json(doc).to_json();  // version 1 documents still load
  old["version"] = 1;
  old["nodes"][2]["kind"] = "compute";
  old["edges"].erase(2);
  for (auto& e : old["edges"]) e.erase("kind");
  old["graph"]["edge_count"] = 3;
  CHECK(weft::Graph::from_json(old).size() == 4);
}

TEST_CASE("GraphConditions.a_tensor_operation_right_after_a_condition_node_is_refused") {
  // Each block's node would be a choice of its own: choice 0 would run block
  // 0 only and the reduction's finishing node would wait for the others.
  weft::Tensor<int, 1> population({4}, 1024);
  auto count = weft::make_reduction_result<long>(0);
  weft::Graph g;
  g.branch([] { return 0; }).named("which");
  try {
    g.then_reduce(population, count, weft::SumReducer());
    FAIL("then_reduce after a condition node was accepted");
  } catch (const std::logic_error& e) {
    const std::string what = e.what();
    CHECK(what.find("Graph::then_reduce") != std::string::npos);
    CHECK(what.find("'which'") != std::string::npos);
    CHECK(what.find("subgraph") != std::string::npos);
  }
  CHECK_THROWS_AS(g.then_split([](auto& it) { *it = 1; }, population), std::logic_error);
  CHECK(g.size() == 1);  // nothing was added

  // The ways out: the operation in a subgraph (one choice), or a node between.
  weft::Graph fill_and_count;
  fill_and_count.split([](auto& it) { *it = 1; }, population)
      .then_reduce(population, count, weft::SumReducer());
  int choice = 0;
  weft::Graph chosen;
  chosen.branch([&] { return choice; }).named("which");
  chosen.then(fill_and_count);
  weft::Executor executor(weft::test::cpu_only(2));
  executor.run(chosen).get();
  CHECK(count.value_and_reset() == 1024);
  choice = 1;  // out of range: nothing runs
  executor.run(chosen).get();
  CHECK(count.value() == 0);

  weft::Graph between;
  between.branch([] { return 0; });
  between.then([] {}).then_reduce(population, count, weft::SumReducer());
  executor.run(between).get();
  CHECK(count.value_and_reset() == 1024);
}

TEST_CASE("GraphConditions.a_node_waiting_for_two_choices_of_one_condition_node_is_reported") {
  // Built Taskflow's way: a join after both choices of one condition node
  // never runs (only one choice runs a pass). Refused when it first runs,
  // by validate(), and in JSON, naming the join and the condition node.
  weft::Graph g;
  const NodeId which = g.emplace(weft::make_branch([] { return 0; })).named("which").last();
  const NodeId left = g.emplace([] {}).named("left").last();
  const NodeId right = g.emplace([] {}).named("right").last();
  const NodeId join = g.emplace([] {}).named("join").last();
  g.add_edge(which, left).add_edge(which, right).add_edge(left, join).add_edge(right, join);
  const auto names_all = [](const std::exception& e) {
    const std::string what = e.what();
    return what.find("'join' can never run") != std::string::npos &&
           what.find("'which'") != std::string::npos && what.find("'left'") != std::string::npos &&
           what.find("'right'") != std::string::npos;
  };
  try {
    g.validate();
    FAIL("validate() accepted a node that can never run");
  } catch (const std::invalid_argument& e) {
    CHECK(names_all(e));
  }
  weft::Executor executor(weft::test::cpu_only(2));
  CHECK_THROWS_AS(executor.run(g).get(), std::invalid_argument);
  CHECK_THROWS_AS(weft::Graph::from_json(g.to_json()), std::invalid_argument);

  // After a node of their own (a path that needs a choice), too.
  weft::Graph deeper;
  deeper.emplace(weft::make_branch([] { return 1; })).named("which");
  deeper.then([] {}).named("a");
  deeper.emplace([] {}).named("b");
  deeper.then([] {}).named("join");  // after a and b, choices 0 and 1
  CHECK_THROWS_AS(deeper.validate(), std::invalid_argument);
}

TEST_CASE("GraphConditions.a_join_of_choices_made_in_different_rounds_of_a_loop_runs.2threads") {
  // A condition node in a loop may choose both in one pass: no error, and
  // the join runs once both ran.
  weft::Executor executor(weft::test::cpu_only(2));
  int round = 0;
  Log log;
  weft::Graph g;
  const NodeId init = g.emplace([&] { round = 0; }).named("init").last();
  const NodeId which = g.emplace(weft::make_branch([&] { return round++; })).named("which").last();
  const NodeId a = g.emplace(log.say("a")).named("a").last();
  const NodeId b = g.emplace(log.say("b")).named("b").last();
  const NodeId back_a = g.emplace(weft::make_branch([] { return 0; })).named("back_a").last();
  const NodeId back_b = g.emplace(weft::make_branch([] { return 0; })).named("back_b").last();
  const NodeId join = g.emplace(log.say("join")).named("join").last();
  g.add_edge(init, which).add_edge(which, a).add_edge(which, b);  // choices 0, 1; 2 ends the loop
  g.add_edge(a, back_a).add_edge(back_a, which).add_edge(b, back_b).add_edge(back_b, which);
  g.add_edge(a, join).add_edge(b, join);
  CHECK_NOTHROW(g.validate());
  executor.run(g).get();
  CHECK(log.ran == std::vector<std::string>{"a", "b", "join"});
}

TEST_CASE("GraphConditions.a_choice_no_int_holds_chooses_nothing.2threads") {
  // Before, the result was cut to int: 1LL << 32 chose successor 0.
  weft::Executor executor(weft::test::cpu_only(2));
  long long wide = 1LL << 32;
  Log log;
  weft::Graph g;
  g.branch([&] { return wide; }).named("which");
  g.then(log.say("zero"));
  g.emplace(log.say("one"));
  for (const long long choice : {1LL << 32, (1LL << 32) + 1, -1LL, 1LL, 0LL}) {
    wide = choice;
    log.ran.clear();
    executor.run(g).get();
    const std::vector<std::string> expected = choice == 0   ? std::vector<std::string>{"zero"}
                                              : choice == 1 ? std::vector<std::string>{"one"}
                                                            : std::vector<std::string>{};
    CHECK(log.ran == expected);
  }
  weft::Graph unsigned_choice;
  unsigned_choice.branch([] { return std::uint64_t{1} << 33; });
  unsigned_choice.then(log.say("never"));
  log.ran.clear();
  executor.run(unsigned_choice).get();
  CHECK(log.ran.empty());
  static_assert(weft::detail::to_choice(std::uint64_t{7}) == 7);
  static_assert(weft::detail::to_choice(static_cast<char>(2)) == 2);
  static_assert(weft::detail::to_choice(-5) == -1);
}

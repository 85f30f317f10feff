// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Condition nodes of the work-DAG (Taskflow's condition tasks): a node whose
// call returns k runs only its k-th successor next; its edges are weak, so
// loops through it are allowed, and a pass ends when nothing is in flight.
// Scenarios re-expressed from Taskflow's test_control_flow (LoopCond,
// FlipCoinCond, CyclicCond, BTreeCondition) in the engine's own terms.
#include <weft/runtime/work_graph_policy.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../executor_configs.hpp"
#include "dag_shapes.hpp"

namespace {

// A graph under construction: one callable per node (a void one, or an int
// one for a condition node) and the edges in the order they were added,
// which is the order of each row (a condition's choices).
class CallGraph {
 public:
  int node(std::function<void()> f) {
    work_.push_back(std::move(f));
    choose_.emplace_back();
    return static_cast<int>(work_.size()) - 1;
  }
  int condition(std::function<int()> f) {
    work_.emplace_back();
    choose_.push_back(std::move(f));
    return static_cast<int>(work_.size()) - 1;
  }
  void edge(int from, int to) { edges_.emplace_back(from, to); }

  weft::WorkGraphPolicy<int> policy() const {
    std::vector<std::uint8_t> conditions;
    for (const auto& c : choose_) conditions.push_back(c ? 1 : 0);
    return weft::WorkGraphPolicy<int>(weft::test::from_edges(size(), edges_), {}, std::move(conditions));
  }
  std::vector<weft::WorkGraphNodeCall> calls() {
    std::vector<weft::WorkGraphNodeCall> out;
    for (int i = 0; i < size(); ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (choose_[k]) {
        out.push_back(weft::WorkGraphNodeCall::condition(
            [](void* f) { return (*static_cast<std::function<int()>*>(f))(); }, &choose_[k]));
      } else {
        out.push_back(weft::WorkGraphNodeCall::of(
            [](void* f) { (*static_cast<std::function<void()>*>(f))(); }, &work_[k]));
      }
    }
    return out;
  }
  int size() const { return static_cast<int>(work_.size()); }

 private:
  std::vector<std::function<void()>> work_;
  std::vector<std::function<int()>> choose_;
  std::vector<std::pair<int, int>> edges_;
};

void run(weft::Executor& executor, CallGraph& g, const std::atomic<bool>* cancel = nullptr) {
  const weft::WorkGraphPolicy<int> policy = g.policy();
  const std::vector<weft::WorkGraphNodeCall> calls = g.calls();
  policy.run(executor, calls.data(), cancel);
}

}  // namespace

TEST_CASE("WorkGraph.condition.do_while_loop_runs_the_body_until_the_condition_exits") {
  for (int threads : {1, 2, 3}) {
    CAPTURE(threads);
    weft::Executor executor(weft::test::cpu_only(threads));
    int i = -1, body_runs = 0;
    bool done = false;
    CallGraph g;
    const int init = g.node([&] { i = 0; });
    const int body = g.node([&] {
      ++i;
      ++body_runs;
    });
    const int cond = g.condition([&] { return i < 5 ? 0 : 1; });
    const int exit = g.node([&] { done = true; });
    g.edge(init, body);
    g.edge(body, cond);
    g.edge(cond, body);  // choice 0: again
    g.edge(cond, exit);  // choice 1: out
    const weft::WorkGraphPolicy<int> policy = g.policy();
    CHECK(policy.num_roots() == 1);
    const auto calls = g.calls();
    for (int pass = 0; pass < 3; ++pass) {
      done = false;
      body_runs = 0;
      policy.run(executor, calls.data());
      CHECK(body_runs == 5);
      CHECK(done);
    }
  }
}

TEST_CASE("WorkGraph.condition.a_self_loop_counts_to_100_as_taskflow_loop_cond") {
  weft::Executor executor(weft::test::cpu_only(2));
  int counter = -1, state = 0;
  CallGraph g;
  const int a = g.node([&] { counter = 0; });
  const int b = g.condition([&] {
    ++counter;
    ++state;
    return counter < 100 ? 0 : 1;
  });
  const int c = g.node([&] { counter = 0; });
  g.edge(a, b);
  g.edge(b, b);
  g.edge(b, c);
  run(executor, g);
  CHECK(counter == 0);
  CHECK(state == 100);
}

TEST_CASE("WorkGraph.condition.flip_coins_until_five_heads_averages_32_flips") {
  // Taskflow's FlipCoinCond: five condition nodes in a row, each going back
  // to the first on tails; the expected number of flips for five heads is 32.
  weft::Executor executor(weft::test::cpu_only(2));
  std::mt19937 rng(12345);
  long steps = 0, total = 0;
  CallGraph g;
  const int init = g.node([&] { steps = 0; });
  std::vector<int> flips;
  for (int k = 0; k < 5; ++k) {
    flips.push_back(g.condition([&rng, &steps, k] {
      if (k == 0) ++steps;
      return static_cast<int>(rng() % 2);
    }));
  }
  const int tally = g.node([&] { total += steps; });
  g.edge(init, flips[0]);
  for (int k = 0; k < 5; ++k) {
    g.edge(flips[static_cast<std::size_t>(k)],
           k + 1 < 5 ? flips[static_cast<std::size_t>(k + 1)] : tally);  // heads
    g.edge(flips[static_cast<std::size_t>(k)], flips[0]);                // tails
  }
  const weft::WorkGraphPolicy<int> policy = g.policy();
  const auto calls = g.calls();
  const int rounds = 3000;
  for (int r = 0; r < rounds; ++r) policy.run(executor, calls.data());
  const double average = static_cast<double>(total) / rounds;
  CHECK(average > 30.0);
  CHECK(average < 34.0);
}

TEST_CASE("WorkGraph.condition.a_cycle_through_branches_visits_each_branch_once") {
  // Taskflow's CyclicCond: S -> A -> branch -> one of many t_i, each of
  // which goes back to A (0) or to the target T (1, the last time).
  for (int threads : {1, 2, 4}) {
    CAPTURE(threads);
    weft::Executor executor(weft::test::cpu_only(threads));
    const int iterations = 200;
    int done_iterations = 0, selector = 0;
    bool reached_target = false;
    std::vector<int> visits(iterations, 0);
    CallGraph g;
    const int s = g.node([] {});
    const int a = g.node([&] { ++done_iterations; });
    const int target = g.node([&] { reached_target = done_iterations == iterations; });
    const int branch = g.condition([&] { return selector++; });
    g.edge(s, a);
    g.edge(a, branch);
    for (int i = 0; i < iterations; ++i) {
      const int t = g.condition([&, i] {
        ++visits[static_cast<std::size_t>(i)];
        return done_iterations < iterations ? 0 : 1;
      });
      g.edge(branch, t);
      g.edge(t, a);
      g.edge(t, target);
    }
    run(executor, g);
    CHECK(reached_target);
    for (int v : visits) REQUIRE(v == 1);
  }
}

TEST_CASE("WorkGraph.condition.a_binary_tree_of_choices_runs_one_path_per_choice") {
  // Taskflow's BTreeCondition: levels alternate between plain nodes (which
  // count) and condition nodes choosing one of their two children.
  for (int threads : {1, 3}) {
    for (int levels = 1; levels < 11; ++levels) {
      CAPTURE(threads);
      CAPTURE(levels);
      weft::Executor executor(weft::test::cpu_only(threads));
      std::atomic<int> counter{0};
      CallGraph g;
      std::vector<int> previous, current;
      for (int level = 0; level < levels; ++level) {
        current.clear();
        for (int j = 0; j < (1 << level); ++j) {
          if (level % 2 == 0) {
            current.push_back(g.node([&] { counter.fetch_add(1); }));
          } else {
            current.push_back(g.condition([j] { return j % 2; }));
          }
        }
        for (std::size_t j = 0; j < previous.size(); ++j) {
          g.edge(previous[j], current[2 * j]);
          g.edge(previous[j], current[2 * j + 1]);
        }
        previous.swap(current);
      }
      run(executor, g);
      CHECK(counter.load() == (1 << ((levels + 1) / 2)) - 1);
    }
  }
}

TEST_CASE("WorkGraph.condition.an_out_of_range_choice_ends_that_path") {
  weft::Executor executor(weft::test::cpu_only(2));
  std::atomic<int> ran{0};
  for (int choice : {-1, 2, 1000}) {
    CallGraph g;
    const int c = g.condition([choice] { return choice; });
    const int x = g.node([&] { ran.fetch_add(1); });
    const int y = g.node([&] { ran.fetch_add(1); });
    g.edge(c, x);
    g.edge(c, y);
    run(executor, g);
  }
  CHECK(ran.load() == 0);
}

TEST_CASE("WorkGraph.condition.strong_cycles_are_still_errors_and_weak_ones_loops") {
  // 0 -> 1 -> 2 -> 0 with node 2 plain: a cycle; with node 2 a condition: a loop.
  const weft::Crs<int> ring = weft::test::from_edges(3, {{0, 1}, {1, 2}, {2, 0}});
  CHECK_THROWS_WITH_AS(weft::WorkGraphPolicy<int>(ring, {}, {0, 0, 0}), doctest::Contains("cycle"),
                       std::invalid_argument);
  const weft::WorkGraphPolicy<int> loop(ring, {}, {0, 0, 1});
  CHECK(loop.num_roots() == 0);  // every node has a predecessor: nothing starts
  const weft::Crs<int> entered = weft::test::from_edges(4, {{3, 0}, {0, 1}, {1, 2}, {2, 0}});
  CHECK(weft::WorkGraphPolicy<int>(entered, {}, {0, 0, 1, 0}).num_roots() == 1);
  CHECK_THROWS_WITH_AS(weft::WorkGraphPolicy<int>(entered, {}, {1, 0}), doctest::Contains("condition flags"),
                       std::invalid_argument);
  weft::Executor executor(weft::test::cpu_only(1));
  std::vector<weft::WorkGraphNodeCall> calls(3);
  CHECK_NOTHROW(loop.run(executor, calls.data()));  // no root: the pass is empty
  CHECK_THROWS_WITH_AS(weft::parallel_for(executor, loop, [](int) {}), doctest::Contains("condition nodes"),
                       std::logic_error);
  CHECK_THROWS_WITH_AS(loop.set_deferred({-1, -1, 0}), doctest::Contains("cannot be deferred"),
                       std::invalid_argument);
}

TEST_CASE("WorkGraph.condition.an_exception_in_a_loop_stops_it_and_the_policy_stays_usable") {
  weft::Executor executor(weft::test::cpu_only(2));
  int turns = 0;
  CallGraph g;
  const int start = g.node([&] { turns = 0; });
  const int body = g.node([&] {
    if (++turns == 10) throw std::runtime_error("turn 10 failed");
  });
  const int again = g.condition([] { return 0; });  // forever, but for the failure
  g.edge(start, body);
  g.edge(body, again);
  g.edge(again, body);
  const weft::WorkGraphPolicy<int> policy = g.policy();
  const auto calls = g.calls();
  for (int pass = 0; pass < 3; ++pass) {
    CHECK_THROWS_WITH_AS(policy.run(executor, calls.data()), "turn 10 failed", std::runtime_error);
    CHECK(turns == 10);
  }
}

TEST_CASE("WorkGraph.condition.an_infinite_loop_ends_when_cancelled.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  std::atomic<bool> cancel{false};
  std::atomic<long> spins{0};
  CallGraph g;
  for (int k = 0; k < 10; ++k) {
    const int a = g.node([] {});
    const int b = g.condition([&] {
      spins.fetch_add(1);
      return 0;
    });
    g.edge(a, b);
    g.edge(b, b);
  }
  std::thread canceller([&] {
    while (spins.load() < 10000) std::this_thread::yield();
    cancel = true;
  });
  CHECK_THROWS_AS(run(executor, g, &cancel), weft::Cancelled);
  canceller.join();
}

TEST_CASE("WorkGraph.condition.nodes_only_a_condition_reaches_run_only_when_chosen.3threads") {
  // A fan of 64 plain nodes under one condition node that chooses node k:
  // exactly one runs, then its chain of three.
  weft::Executor executor(weft::test::cpu_only(3));
  for (int k = 0; k < 64; k += 9) {
    std::vector<std::atomic<int>> ran(64 * 4);
    CallGraph g;
    const int pick = g.condition([k] { return k; });
    for (int j = 0; j < 64; ++j) {
      int previous = g.node([&ran, j] { ran[static_cast<std::size_t>(4 * j)].fetch_add(1); });
      g.edge(pick, previous);
      for (int step = 1; step < 4; ++step) {
        const int next =
            g.node([&ran, j, step] { ran[static_cast<std::size_t>(4 * j + step)].fetch_add(1); });
        g.edge(previous, next);
        previous = next;
      }
    }
    run(executor, g);
    for (int j = 0; j < 64 * 4; ++j) REQUIRE(ran[static_cast<std::size_t>(j)].load() == (j / 4 == k ? 1 : 0));
  }
}

TEST_CASE("WorkGraph.condition.every_pass_starts_with_full_join_counts") {
  // A join after exclusive branches waits for both, so it never runs; a
  // count left half done by the branch of one pass must not let the other
  // branch of the next pass complete it.
  weft::Executor executor(weft::test::cpu_only(2));
  int pass = 0;
  std::atomic<int> joined{0}, branches{0};
  CallGraph g;
  const int init = g.node([] {});
  const int pick = g.condition([&] { return pass % 2; });
  const int a = g.node([&] { branches.fetch_add(1); });
  const int b = g.node([&] { branches.fetch_add(1); });
  const int join = g.node([&] { joined.fetch_add(1); });
  g.edge(init, pick);
  g.edge(pick, a);
  g.edge(pick, b);
  g.edge(a, join);
  g.edge(b, join);
  const weft::WorkGraphPolicy<int> policy = g.policy();
  const auto calls = g.calls();
  for (pass = 0; pass < 6; ++pass) policy.run(executor, calls.data());
  CHECK(branches.load() == 6);
  CHECK(joined.load() == 0);
}

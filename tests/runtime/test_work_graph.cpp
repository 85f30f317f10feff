// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The static work-DAG: parallel_for(WorkGraphPolicy(crs), f) calls f(j) only
// after every f(i) with an edge i -> j returned, exactly once per node.
#include <weft/runtime/work_graph_policy.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dag_shapes.hpp"

namespace {

// Runs `dag` `runs` times and checks the guarantee for every node.
void check_order(weft::Executor& executor, const weft::Crs<int>& dag, int runs = 3) {
  weft::WorkGraphPolicy<int> policy(dag);
  weft::Crs<int> preds;
  weft::transpose_crs(preds, dag);
  const int n = dag.num_rows();
  for (int run = 1; run <= runs; ++run) {
    auto done = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(n));
    std::atomic<long> violations{0};
    weft::parallel_for(executor, policy, [&](int j) {
      for (int k = preds.row_begin(j); k < preds.row_end(j); ++k) {
        if (done[static_cast<std::size_t>(preds.entries[static_cast<std::size_t>(k)])].load(
                std::memory_order_relaxed) != 1) {
          violations.fetch_add(1, std::memory_order_relaxed);
        }
      }
      done[static_cast<std::size_t>(j)].fetch_add(1, std::memory_order_relaxed);
    });
    CHECK(violations.load() == 0);
    int once = 0;
    for (int i = 0; i < n; ++i) once += done[static_cast<std::size_t>(i)].load() == 1;
    CHECK(once == n);
  }
}

weft::ExecutorConfig workers(int n) {
  weft::ExecutorConfig cfg;
  cfg.cpu_workers = n;
  return cfg;
}

}  // namespace

TEST_CASE("WorkGraph.shapes.1-2-4threads") {
  for (int threads : {1, 2, 4}) {
    CAPTURE(threads);
    weft::Executor executor(workers(threads));
    check_order(executor, weft::test::chain(2000));
    check_order(executor, weft::test::fan_out_fan_in(3000));
    check_order(executor, weft::test::wavefront(40, 50));
    for (std::uint32_t seed = 1; seed <= 5; ++seed)
      check_order(executor, weft::test::random_dag(3000, 4, seed), 2);
  }
}

TEST_CASE("WorkGraph.naive_fibonacci_figure_3_6") {
  // One item per call of fib(k); item i executes after the items for its
  // two inputs. Built as "who runs after whom" and transposed, as in the report.
  for (long n : {0L, 1L, 2L, 10L, 20L}) {
    CAPTURE(n);
    std::vector<long> input{n};
    std::vector<int> parent{-1};
    for (std::size_t i = 0; i < input.size(); ++i) {
      if (input[i] < 2) continue;
      for (long child : {input[i] - 1, input[i] - 2}) {
        input.push_back(child);
        parent.push_back(static_cast<int>(i));
      }
    }
    std::vector<std::pair<int, int>> edges;
    for (std::size_t i = 1; i < parent.size(); ++i) edges.emplace_back(static_cast<int>(i), parent[i]);
    const weft::Crs<int> after = weft::test::from_edges(static_cast<int>(input.size()), edges);
    weft::Crs<int> inputs;
    weft::transpose_crs(inputs, after);
    std::vector<long> value(input.size());
    weft::Executor executor(workers(2));
    weft::parallel_for(executor, weft::WorkGraphPolicy<int>(after), [&](int i) {
      const int k = inputs.row_begin(i);
      value[static_cast<std::size_t>(i)] =
          inputs.row_end(i) == k
              ? input[static_cast<std::size_t>(i)]
              : value[static_cast<std::size_t>(inputs.entries[static_cast<std::size_t>(k)])] +
                    value[static_cast<std::size_t>(inputs.entries[static_cast<std::size_t>(k) + 1])];
    });
    long fa = 0, fb = 1;
    for (long k = 0; k < n; ++k) {
      const long next = fa + fb;
      fa = fb;
      fb = next;
    }
    CHECK(value[0] == fa);
  }
}

TEST_CASE("WorkGraph.cycle_is_named_and_nothing_runs") {
  // 0 -> 1 -> 2 -> 3 -> 1, and 3 -> 4
  const weft::Crs<int> dag = weft::test::from_edges(5, {{0, 1}, {1, 2}, {2, 3}, {3, 1}, {3, 4}});
  std::string message;
  try {
    weft::WorkGraphPolicy<int> policy(dag);
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  CHECK(message.find("cycle") != std::string::npos);
  // The cycle may be printed from any of its nodes.
  const bool named = message.find("1 -> 2 -> 3 -> 1") != std::string::npos ||
                     message.find("2 -> 3 -> 1 -> 2") != std::string::npos ||
                     message.find("3 -> 1 -> 2 -> 3") != std::string::npos;
  CHECK_MESSAGE(named, message);

  const weft::Crs<int> self_loop = weft::test::from_edges(2, {{0, 1}, {1, 1}});
  CHECK_THROWS_WITH_AS(weft::WorkGraphPolicy<int>{self_loop}, doctest::Contains("1 -> 1"),
                       std::invalid_argument);
}

TEST_CASE("WorkGraph.malformed_crs_is_rejected") {
  weft::Crs<int> bad;
  bad.row_map = {0, 1};
  bad.entries = {5};
  CHECK_THROWS_WITH_AS(weft::WorkGraphPolicy<int>{bad}, doctest::Contains("outside [0, 1)"),
                       std::invalid_argument);
}

TEST_CASE("WorkGraph.exception_is_rethrown_and_policy_reusable.2threads") {
  weft::Executor executor(workers(2));
  weft::WorkGraphPolicy<int> policy(weft::test::chain(100));
  std::atomic<int> calls{0};
  CHECK_THROWS_WITH_AS(weft::parallel_for(executor, policy,
                                          [&](int i) {
                                            calls.fetch_add(1);
                                            if (i == 10) throw std::runtime_error("node 10 failed");
                                          }),
                       "node 10 failed", std::runtime_error);
  // Nodes after the failure are skipped: on a chain nothing after 10 runs.
  CHECK(calls.load() == 11);
  calls = 0;
  weft::parallel_for(executor, policy, [&](int) { calls.fetch_add(1); });
  CHECK(calls.load() == 100);
}

TEST_CASE("WorkGraph.empty_and_single_node") {
  weft::Executor executor(workers(1));
  weft::Crs<int> empty;
  int calls = 0;
  weft::parallel_for(executor, weft::WorkGraphPolicy<int>(empty), [&](int) { ++calls; });
  CHECK(calls == 0);
  weft::parallel_for(executor, weft::WorkGraphPolicy<int>(weft::test::chain(1)),
                     [&](int i) { calls += i + 1; });
  CHECK(calls == 1);
}

TEST_CASE("WorkGraph.nested_run_inside_a_node_does_not_deadlock.1thread") {
  // The only worker waits for the inner run and must execute it meanwhile.
  weft::Executor executor(workers(1));
  weft::WorkGraphPolicy<int> outer(weft::test::chain(3));
  weft::WorkGraphPolicy<int> inner(weft::test::fan_out_fan_in(50));
  std::atomic<int> inner_calls{0};
  weft::parallel_for(executor, outer, [&](int) {
    weft::parallel_for(executor, inner, [&](int) { inner_calls.fetch_add(1); });
  });
  CHECK(inner_calls.load() == 3 * 52);
  CHECK_THROWS_AS(
      weft::parallel_for(executor, outer, [&](int) { weft::parallel_for(executor, outer, [](int) {}); }),
      std::logic_error);
}

TEST_CASE("WorkGraph.int64_indices_and_default_executor") {
  weft::Crs<std::int64_t> dag;
  dag.row_map = {0, 1, 2, 2};
  dag.entries = {1, 2};
  std::vector<std::int64_t> order;
  weft::parallel_for(weft::WorkGraphPolicy<std::int64_t>(dag), [&](std::int64_t i) { order.push_back(i); });
  CHECK(order == std::vector<std::int64_t>{0, 1, 2});
}

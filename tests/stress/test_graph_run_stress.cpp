// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Graph runs under load: several threads submitting runs of one graph at
// once (they must queue, never overlap), with cancellations racing the
// queue; and runs submitted from inside other graphs' nodes.
#include <weft/graph/graph.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "../executor_configs.hpp"
#include "stress_scale.hpp"

namespace {

// A graph with one root and one sink and `width` nodes between them, whose
// root notices if a pass of another run is still between root and sink.
struct WatchedGraph {
  explicit WatchedGraph(int width) {
    g.emplace([this] {
      if (in_pass.exchange(true)) overlapped = true;
    });
    g.then([this] { nodes.fetch_add(1, std::memory_order_relaxed); });
    for (int i = 1; i < width; ++i) g.emplace([this] { nodes.fetch_add(1, std::memory_order_relaxed); });
    g.then([this] { in_pass = false; });
  }
  weft::Graph g;
  std::atomic<bool> in_pass{false}, overlapped{false};
  std::atomic<long> nodes{0};
};

}  // namespace

TEST_CASE("GraphRuns.stress.runs_from_several_threads_queue_and_never_overlap.3threads") {
  weft::Executor executor(weft::test::cpu_only(3));
  WatchedGraph watched(16);
  const int per_thread = static_cast<int>(weft::test::scaled(400, 4));
  std::vector<std::thread> submitters;
  std::atomic<long> passes{0};
  for (int t = 0; t < 4; ++t) {
    submitters.emplace_back([&, t] {
      std::vector<weft::Future<>> mine;
      for (int i = 0; i < per_thread; ++i) {
        const int n = 1 + (i + t) % 3;
        passes.fetch_add(n, std::memory_order_relaxed);
        mine.push_back(executor.run_n(watched.g, n));
      }
      for (const weft::Future<>& f : mine) f.get();
    });
  }
  for (std::thread& t : submitters) t.join();
  executor.wait_for_all();
  CHECK_FALSE(watched.overlapped.load());
  CHECK(watched.nodes.load() == passes.load() * 16);
}

TEST_CASE("GraphRuns.stress.cancellations_race_the_queue.3threads") {
  weft::Executor executor(weft::test::cpu_only(3));
  std::atomic<long> nodes{0};
  weft::Graph g;
  for (int i = 0; i < 8; ++i) g.emplace([&] { nodes.fetch_add(1, std::memory_order_relaxed); });
  g.then([&] { nodes.fetch_add(1, std::memory_order_relaxed); });
  const int rounds = static_cast<int>(weft::test::scaled(2000, 4));
  std::vector<weft::Future<>> futures;
  std::mutex m;
  std::thread canceller([&] {
    std::mt19937 rng(11);
    for (int r = 0; r < rounds; ++r) {
      std::lock_guard<std::mutex> lock(m);
      if (!futures.empty()) futures[rng() % futures.size()].cancel();
    }
  });
  for (int r = 0; r < rounds; ++r) {
    weft::Future<> f = executor.run(g);
    std::lock_guard<std::mutex> lock(m);
    futures.push_back(std::move(f));
  }
  canceller.join();
  executor.wait_for_all();
  long completed = 0, cancelled = 0;
  for (const weft::Future<>& f : futures) {
    REQUIRE(f.is_ready());
    if (f.is_cancelled()) {
      ++cancelled;
    } else {
      CHECK_NOTHROW(f.get());
      ++completed;
    }
  }
  CHECK(completed + cancelled == rounds);
  // Each completed run ran all 9 nodes; a cancelled one ran some or none.
  CHECK(nodes.load() >= completed * 9);
  CHECK(nodes.load() <= static_cast<long>(rounds) * 9);
}

TEST_CASE("GraphRuns.stress.nodes_submitting_runs_of_other_graphs.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  std::atomic<long> inner_nodes{0};
  weft::Graph inner;
  for (int i = 0; i < 4; ++i) inner.emplace([&] { inner_nodes.fetch_add(1, std::memory_order_relaxed); });
  std::mutex m;
  std::vector<weft::Future<>> submitted;
  weft::Graph outer;
  for (int i = 0; i < 32; ++i) {
    outer.emplace([&] {
      weft::Future<> f = executor.run(inner);  // queues behind the other nodes' runs
      std::lock_guard<std::mutex> lock(m);
      submitted.push_back(std::move(f));
    });
  }
  const int runs = static_cast<int>(weft::test::scaled(100, 4));
  executor.run_n(outer, runs).get();
  executor.wait_for_all();
  for (const weft::Future<>& f : submitted) CHECK_NOTHROW(f.get());
  CHECK(inner_nodes.load() == 4L * 32 * runs);
}

TEST_CASE("GraphRuns.stress.nested_waits_across_executors_without_a_cycle_never_throw.4threads") {
  // Layers of graphs on two executors: each top node waits for a run of the
  // middle graph, whose nodes wait for runs of the leaf graph, from two user
  // threads at once. Many waits are registered together (the wait-for graph,
  // docs/waiting.md) but none closes a cycle, so none may throw.
  weft::Executor upper(weft::test::cpu_only(2)), lower(weft::test::cpu_only(2));
  std::atomic<long> leaf_nodes{0};
  weft::Graph leaf, middle;
  for (int i = 0; i < 3; ++i) leaf.emplace([&] { leaf_nodes.fetch_add(1, std::memory_order_relaxed); });
  for (int i = 0; i < 2; ++i) middle.emplace([&] { lower.run(leaf).get(); });
  weft::Graph tops[2];
  for (weft::Graph& top : tops)
    for (int i = 0; i < 3; ++i) top.emplace([&] { lower.run(middle).get(); });
  const long runs = weft::test::scaled(400, 4);
  std::thread other([&] { CHECK_NOTHROW(upper.run_n(tops[1], runs).get()); });
  CHECK_NOTHROW(upper.run_n(tops[0], runs).get());
  other.join();
  CHECK(leaf_nodes.load() == 2 * runs * 3 * 2 * 3);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runs of a graph: they queue like Taskflow's (one after another, in
// submission order, each with its own future, count and predicate), a
// rejected or cancelled run disturbs no other, waits are futures' and
// wait_for_all's, self-waits throw, and failed starts keep nothing.
// Scenarios re-expressed from Taskflow's test_basics (SerialRuns,
// ParallelRuns, RunAndWait) and test_cancellation.
#include <weft/graph/graph.hpp>
#include <weft/runtime/task_group.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../executor_configs.hpp"

namespace {

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Blocks the node that calls wait() until open() is called.
class Gate {
 public:
  void wait() {
    entered_ = true;
    while (!open_.load()) std::this_thread::yield();
  }
  void open() { open_ = true; }
  bool entered() const { return entered_.load(); }

 private:
  std::atomic<bool> open_{false}, entered_{false};
};

// A graph whose first node waits at a gate and whose second logs its tag.
struct GatedGraph {
  explicit GatedGraph(int t) : tag(t) {
    g.emplace([this] { gate.wait(); });
    g.then([this] {
      std::lock_guard<std::mutex> lock(m);
      log.push_back(tag);
    });
  }
  // Starts a run and returns once its first node waits at the gate.
  weft::Future<> start(weft::Executor& executor) {
    weft::Future<> f = executor.run(g);
    while (!gate.entered()) std::this_thread::yield();
    return f;
  }
  std::vector<int> logged() {
    std::lock_guard<std::mutex> lock(m);
    return log;
  }

  Gate gate;
  std::mutex m;
  std::vector<int> log;
  int tag;
  weft::Graph g;
};

}  // namespace

TEST_CASE("GraphRuns.runs_of_one_graph_queue_in_submission_order.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  std::mutex m;
  std::vector<int> log;
  std::atomic<int> pass{0};
  weft::Graph g;
  g.emplace([&] { sleep_ms(1); });
  for (int i = 0; i < 8; ++i) g.emplace([&] { sleep_ms(1); });  // beside it: the pass has width
  g.then([&] {
    std::lock_guard<std::mutex> lock(m);
    log.push_back(pass.fetch_add(1));
  });
  weft::Future<> first = executor.run_n(g, 3);
  weft::Future<> second = executor.run(g);
  int asked = 0;
  weft::Future<> third = executor.run_until(g, [&] { return ++asked > 2; });
  third.get();  // waits for the runs before it too: they come first
  CHECK(first.is_ready());
  CHECK(second.is_ready());
  CHECK(asked == 3);  // before each pass, the first included, and once more to stop
  CHECK(log == std::vector<int>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("GraphRuns.a_second_run_waits_for_the_first_and_each_has_its_own_future.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  GatedGraph gated(1);
  weft::Future<> first = gated.start(executor);
  weft::Future<> second = executor.run(gated.g);  // queued behind the first, which is unchanged
  sleep_ms(10);
  CHECK_FALSE(second.is_ready());
  CHECK(gated.logged().empty());
  gated.gate.open();
  first.get();
  second.get();
  CHECK(gated.logged() == std::vector<int>{1, 1});
}

TEST_CASE("GraphRuns.a_rejected_run_touches_no_other_run.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Gate gate;
  std::atomic<int> nodes{0};
  weft::Graph g;
  g.emplace([&] { gate.wait(); });
  for (int i = 0; i < 50; ++i) g.then([&] { nodes.fetch_add(1); });
  weft::Future<> running = executor.run_n(g, 2);
  while (!gate.entered()) std::this_thread::yield();
  CHECK_THROWS_WITH_AS(executor.run_n(g, -3), doctest::Contains("run count -3 is negative"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(executor.run_until(g, std::function<bool()>()),
                       doctest::Contains("predicate is empty"), std::invalid_argument);
  gate.open();
  CHECK_NOTHROW(running.get());  // neither ended early nor cancelled
  CHECK(nodes.load() == 100);
}

TEST_CASE("GraphRuns.run_n_zero_runs_nothing_and_completes_at_once.1thread") {
  weft::Executor executor(weft::test::cpu_only(1));
  Gate gate;
  std::atomic<int> nodes{0};
  weft::Graph g;
  g.emplace([&] { gate.wait(); });
  g.then([&] { nodes.fetch_add(1); });
  weft::Future<> running = executor.run(g);
  while (!gate.entered()) std::this_thread::yield();
  weft::Future<> none = executor.run_n(g, 0);
  CHECK(none.is_ready());  // even with a run in flight
  CHECK_NOTHROW(none.get());
  gate.open();
  running.get();
  CHECK(nodes.load() == 1);
  weft::Graph empty;  // Taskflow's EmptyFlow: an empty graph runs at once
  CHECK_NOTHROW(executor.run(empty).get());
  CHECK_NOTHROW(executor.run_n(empty, 1000).get());
}

TEST_CASE("GraphRuns.a_graph_without_a_root_completes_at_once_however_long_it_is_asked_to_run.1thread") {
  // Each pass of such a graph ends as it starts, so its passes used to be
  // counted (or its predicate asked) in a loop on the calling thread: a
  // run_until whose predicate never came true spun forever inside the call,
  // with no future to cancel. Taskflow completes an empty flow at once.
  weft::Executor executor(weft::test::cpu_only(1));
  weft::Graph empty;
  std::atomic<long> asked{0};
  CHECK_NOTHROW(executor.run_until(empty, [&] { return ++asked > 1'000'000'000; }).get());
  CHECK_NOTHROW(executor.run_n(empty, std::numeric_limits<long>::max()).get());
  CHECK(asked.load() == 0);
  // Nodes, but each behind another (a loop through a condition node): no root.
  weft::Graph no_root;
  std::atomic<int> ran{0};
  const auto which = no_root.emplace(weft::make_branch([&] { return ++ran, 0; })).last();
  const auto body = no_root.emplace([&] { ++ran; }).last();
  no_root.add_edge(which, body).add_edge(body, which);
  CHECK_NOTHROW(executor.run_until(no_root, [] { return false; }).get());
  CHECK(ran.load() == 0);
}

TEST_CASE("GraphRuns.run_until_asks_before_each_pass_and_conditional_after.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  int passes = 0;
  weft::Graph g;
  g.emplace([&] { ++passes; });
  executor.run_until(g, [] { return true; }).get();  // true at once: no pass at all
  CHECK(passes == 0);
  executor.run_until(g, [&] { return passes >= 3; }).get();
  CHECK(passes == 3);

  // Ripple's conditional(): a pass first, then again while the predicate holds.
  int conditional_passes = 0;
  weft::Graph loop;
  loop.emplace([&] { ++conditional_passes; });
  loop.conditional([] { return false; });
  executor.run(loop).get();
  CHECK(conditional_passes == 1);
  loop = weft::Graph();
  loop.emplace([&] { ++conditional_passes; });
  loop.conditional([&] { return conditional_passes < 5; });
  executor.run_n(loop, 2).get();   // each run repeats until the predicate stops it
  CHECK(conditional_passes == 6);  // 1 before; 4 in the first run; 1 in the second, already false after it
}

TEST_CASE("GraphRuns.wait_for_all_waits_for_queued_runs_too.2threads") {
  // Taskflow's SerialRuns.WaitForAll and MultipleRuns.
  weft::Executor executor(weft::test::cpu_only(2));
  std::atomic<long> count{0};
  const auto counting = [&](int nodes) {
    weft::Graph g;
    for (int i = 0; i < nodes; ++i) g.emplace([&] { count.fetch_add(1, std::memory_order_relaxed); });
    return g;
  };
  weft::Graph one = counting(1);
  executor.run(one);
  executor.wait_for_all();
  CHECK(count.load() == 1);
  count = 0;
  weft::Graph g1 = counting(16), g2 = counting(1024), g3 = counting(32), g4 = counting(128);
  for (int i = 0; i < 200; ++i) {
    executor.run(g1);
    executor.run(g2);
    executor.run(g3);
    executor.run(g4);
  }
  executor.wait_for_all();
  CHECK(count.load() == 200L * (16 + 1024 + 32 + 128));
}

TEST_CASE("GraphRuns.get_waits_for_the_run.1thread") {
  weft::Executor executor(weft::test::cpu_only(1));
  std::atomic<int> nodes{0};
  weft::Graph g;
  for (int i = 0; i < 100; ++i) g.emplace([&] { nodes.fetch_add(1); });
  g.then([&] { sleep_ms(5); });
  executor.run(g).get();  // no wait() first
  CHECK(nodes.load() == 100);
}

TEST_CASE("GraphRuns.cancelling_a_queued_run_removes_it_at_once.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  GatedGraph gated(7);
  weft::Future<> running = gated.start(executor);
  weft::Future<> queued = executor.run_n(gated.g, 5);
  weft::Future<> after = executor.run(gated.g);
  queued.cancel();
  CHECK(queued.is_ready());  // removed from the queue, without waiting for the run in flight
  CHECK(queued.is_cancelled());
  CHECK_THROWS_AS(queued.get(), weft::Cancelled);
  CHECK_FALSE(running.is_ready());
  gated.gate.open();
  CHECK_NOTHROW(running.get());  // undisturbed
  CHECK_NOTHROW(after.get());    // and the run behind the cancelled one still runs
  CHECK(gated.logged() == std::vector<int>{7, 7});
  queued.cancel();  // cancelling again, or a finished run, does nothing
  running.cancel();
  CHECK_NOTHROW(running.get());
}

TEST_CASE("GraphRuns.a_run_outliving_its_graph_lets_the_callables_go_before_its_future_completes.2threads") {
  // Once its graph is gone, the run holds the last reference to the node
  // callables. They go before the run's future completes, so whoever
  // waited for it may rely on their destructors having run.
  struct SlowToRelease {
    explicit SlowToRelease(std::atomic<bool>& flag) : released(flag) {}
    SlowToRelease(const SlowToRelease&) = delete;
    SlowToRelease& operator=(const SlowToRelease&) = delete;
    ~SlowToRelease() {
      sleep_ms(50);  // a waiter woken before this ends would see `released` false
      released = true;
    }
    std::atomic<bool>& released;
  };
  std::atomic<bool> released{false};
  weft::Executor executor(weft::test::cpu_only(2));
  Gate gate;
  weft::Future<> run;
  {
    weft::Graph g;
    auto state = std::make_shared<SlowToRelease>(released);
    g.emplace([state, &gate] { gate.wait(); });
    run = executor.run(g);
  }
  gate.open();
  run.get();
  CHECK(released.load());
}

TEST_CASE("GraphRuns.cancelling_the_run_in_flight_stops_its_nodes.4threads") {
  // Taskflow's BasicCancellation and MultipleCancellations, shortened.
  weft::Executor executor(weft::test::cpu_only(4));
  std::atomic<int> counter{0};
  std::vector<weft::Graph> graphs(4);
  for (weft::Graph& g : graphs) {
    for (int i = 0; i < 1000; ++i) {
      g.emplace([&] {
        sleep_ms(1);
        counter.fetch_add(1);
      });
    }
  }
  std::vector<weft::Future<>> futures;
  for (weft::Graph& g : graphs) futures.push_back(executor.run(g));
  futures.push_back(executor.run_n(graphs[0], 100));
  for (const weft::Future<>& f : futures) f.cancel();
  executor.wait_for_all();
  for (const weft::Future<>& f : futures) {
    CHECK(f.is_ready());
    CHECK(f.is_cancelled());
  }
  CHECK(counter.load() < 4000);
}

TEST_CASE("GraphRuns.a_node_waiting_for_its_own_graph_throws_instead_of_hanging.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  weft::Graph g;
  bool first = true;
  weft::Future<> self;
  g.emplace([&] {
    if (!first) return;
    first = false;
    self = executor.run(g);  // queued behind this very run: allowed
    self.get();              // but waiting for it here would never return
  });
  CHECK_THROWS_WITH_AS(executor.run(g).get(), doctest::Contains("its own graph"), std::logic_error);
  CHECK_NOTHROW(self.get());  // the queued run ran once the first had failed

  weft::Graph waits_for_all;
  waits_for_all.emplace([&] { executor.wait_for_all(); });
  CHECK_THROWS_WITH_AS(executor.run(waits_for_all).get(), doctest::Contains("would wait for itself"),
                       std::logic_error);

  // Waiting for another graph's run from a node is fine: the worker helps.
  weft::Graph inner;
  std::atomic<int> inner_nodes{0};
  for (int i = 0; i < 10; ++i) inner.emplace([&] { inner_nodes.fetch_add(1); });
  weft::Graph outer;
  outer.emplace([&] { executor.run_n(inner, 3).get(); });
  executor.run(outer).get();
  CHECK(inner_nodes.load() == 30);
}

TEST_CASE("GraphRuns.a_wait_cycle_between_two_graphs_on_one_worker_throws_naming_the_cycle.1thread") {
  // a's node waits for a run of b; the only worker runs b's node meanwhile,
  // on the same stack, and b's node waits for a run of a, which cannot end
  // before a's node (further down) returns. Neither waits for its own graph.
  weft::Executor executor(weft::test::cpu_only(1));
  weft::Graph a;
  weft::Graph b;
  weft::Future<> a_again;
  bool once = true;
  a.emplace([&] {
    if (once) executor.run(b).get();
  });
  b.emplace([&] {
    once = false;
    a_again = executor.run(a);  // queued behind a's run in flight
    a_again.get();
  });
  CHECK_THROWS_WITH_AS(executor.run(a).get(), doctest::Contains("a wait cycle between graphs"),
                       std::logic_error);
  CHECK_NOTHROW(a_again.get());  // the queued run of a ran once the first had failed

  // The same through a task group: its callable waits for b, whose node
  // (run meanwhile on the same stack) waits for the group. Without guests,
  // the only worker runs the callable, so the cycle is on one stack.
  weft::Executor one_worker(weft::test::workers_only(1));
  weft::TaskGroup group(one_worker);
  weft::Graph waits_for_group;
  waits_for_group.emplace([&] { group.wait(); });
  group.run([&] { one_worker.run(waits_for_group).get(); });
  CHECK_THROWS_WITH_AS(group.wait(), doctest::Contains("TaskGroup::wait: a wait cycle"), std::logic_error);
}

TEST_CASE("GraphRuns.a_wait_cycle_between_a_task_group_and_a_graph_across_threads_throws.1thread") {
  // The main thread runs the group's callable as a guest (or the worker
  // steals it); the callable waits for a graph whose node waits for the
  // group. When the node runs on the worker, the cycle spans two threads:
  // whichever wait closes it throws, in every interleaving, instead of
  // both waiting for ever.
  for (int round = 0; round < 20; ++round) {
    CAPTURE(round);
    weft::Executor executor(weft::test::cpu_only(1));
    weft::TaskGroup group(executor);
    weft::Graph waits_for_group;
    std::mutex mutex;
    std::vector<std::string> errors;
    const auto note = [&](const std::logic_error& e) {
      const std::lock_guard<std::mutex> lock(mutex);
      errors.emplace_back(e.what());
    };
    waits_for_group.emplace([&] {
      try {
        group.wait();
      } catch (const std::logic_error& e) {
        note(e);
        throw;
      }
    });
    group.run([&] {
      try {
        executor.run(waits_for_group).get();
      } catch (const std::logic_error& e) {
        note(e);
        throw;
      }
    });
    try {
      group.wait();
    } catch (const std::logic_error& e) {
      CHECK(std::string(e.what()).find("a wait cycle") != std::string::npos);
    }
    REQUIRE_FALSE(errors.empty());
    CHECK(errors.front().find("a wait cycle") != std::string::npos);
  }
}

TEST_CASE("GraphRuns.a_wait_cycle_across_executors_throws_instead_of_hanging.3threads") {
  // Graphs on executors of one worker each, every node waiting for a run of
  // the next graph, the last for a run of the first (queued behind the run
  // whose node waits). No worker can run another's node, so each wait
  // blocks on its own thread: the wait that closes the cycle throws, and
  // the others then see the error.
  for (int length : {2, 3}) {
    CAPTURE(length);
    std::vector<std::unique_ptr<weft::Executor>> executors;
    std::vector<weft::Graph> graphs(static_cast<std::size_t>(length));
    for (int i = 0; i < length; ++i)
      executors.push_back(std::make_unique<weft::Executor>(weft::test::cpu_only(1)));
    std::atomic<bool> first{true};
    std::atomic<int> first_graph_runs{0};
    weft::Future<> first_again;
    graphs[0]
        .emplace([&] {
          first_graph_runs.fetch_add(1);
          if (first.exchange(false)) executors[1]->run(graphs[1]).get();
        })
        .named("g0");
    for (int i = 1; i < length; ++i) {
      graphs[static_cast<std::size_t>(i)]
          .emplace([&, i] {
            if (i + 1 < length) {
              executors[static_cast<std::size_t>(i + 1)]->run(graphs[static_cast<std::size_t>(i + 1)]).get();
            } else {
              first_again = executors[0]->run(graphs[0]);
              first_again.get();
            }
          })
          .named("g" + std::to_string(i));
    }
    // The wait that closes the cycle throws (any of them); the message names both graphs.
    try {
      executors[0]->run(graphs[0]).get();
      FAIL("the cycle must be refused");
    } catch (const std::logic_error& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(what.find(
                "a wait cycle across threads: this thread runs a node of the graph whose first node is 'g") !=
            std::string::npos);
      CHECK(what.find("(1 node) and waits for a run of the graph whose first node is 'g") !=
            std::string::npos);
    }
    for (auto& e : executors) e->wait_for_all();
    CHECK(first_graph_runs.load() == 2);  // the queued run of the first graph ran once the cycle broke
  }
}

TEST_CASE("GraphRuns.failed_starts_keep_nothing.1thread") {
  weft::Executor executor(weft::test::cpu_only(1));
  weft::Graph gpu;
  gpu.emplace(weft::ExecutionKind::Gpu, [] {});
  weft::Graph cyclic;
  cyclic.emplace([] {}).named("a");
  cyclic.then([] {}).named("b");
  cyclic.add_edge("b", "a");
  weft::Graph source;
  source.emplace([] {});
  weft::Graph loaded = weft::Graph::from_json(source.to_json());  // no callables
  // Before, each failed start leaked a block of a hidden pool and after
  // about 8,160 of them no graph could run on the executor.
  for (int i = 0; i < 10000; ++i) {
    REQUIRE_THROWS_WITH_AS(executor.run(gpu), doctest::Contains("GPU-priority workers"), std::logic_error);
    REQUIRE_THROWS_WITH_AS(executor.run(cyclic), doctest::Contains("cycle"), std::invalid_argument);
    REQUIRE_THROWS_WITH_AS(executor.run(loaded), doctest::Contains("no callable"), std::logic_error);
  }
  std::atomic<int> ran{0};
  weft::Graph ok;
  ok.emplace([&] { ran.fetch_add(1); });
  executor.run(ok).get();
  CHECK(ran.load() == 1);
  executor.wait_for_all();  // nothing was left registered either
}

TEST_CASE("GraphRuns.runs_in_flight_are_limited_by_memory_only.2threads") {
  // Before, about 4,064 runs could be in flight on an executor.
  weft::Executor executor(weft::test::cpu_only(2));
  std::atomic<long> ran{0};
  std::vector<weft::Graph> graphs(8);
  for (weft::Graph& g : graphs) g.emplace([&] { ran.fetch_add(1, std::memory_order_relaxed); });
  std::vector<weft::Future<>> futures;
  for (int i = 0; i < 20000; ++i) futures.push_back(executor.run(graphs[static_cast<std::size_t>(i % 8)]));
  for (const weft::Future<>& f : futures) f.get();
  CHECK(ran.load() == 20000);
}

TEST_CASE("GraphRuns.a_graph_with_runs_in_flight_refuses_changes.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Gate gate;
  std::atomic<int> nodes{0};
  weft::Graph g;
  g.emplace([&] { gate.wait(); }).named("gate");
  weft::Future<> running = executor.run(g);
  while (!gate.entered()) std::this_thread::yield();
  CHECK_THROWS_WITH_AS(g.then([&] { nodes.fetch_add(1); }), doctest::Contains("runs of it are in flight"),
                       std::logic_error);
  CHECK_THROWS_AS(g.add_edge(0, 0), std::logic_error);
  CHECK_THROWS_AS(g.named("other"), std::logic_error);
  CHECK_THROWS_AS(g = weft::Graph(), std::logic_error);  // assignment too; the graph is unchanged
  CHECK(g.size() == 1);
  CHECK(g.find("gate") == 0);
  weft::Graph copy = g;  // a copy is another graph, free to change
  copy.then([&] { nodes.fetch_add(1); });
  gate.open();
  running.get();
  g.then([&] { nodes.fetch_add(1); });  // once its runs are done, it may change
  executor.run(g).get();
  executor.run(copy).get();
  CHECK(nodes.load() == 2);
}

TEST_CASE("GraphRuns.queued_runs_survive_their_graph.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  std::atomic<int> nodes{0};
  std::vector<weft::Future<>> futures;
  {
    weft::Graph g;
    for (int i = 0; i < 10; ++i) g.emplace([&] { nodes.fetch_add(1); });
    for (int r = 0; r < 20; ++r) futures.push_back(executor.run(g));
  }  // the graph is gone; its queued runs keep what they run
  for (const weft::Future<>& f : futures) f.get();
  CHECK(nodes.load() == 200);
}

TEST_CASE("GraphRuns.parallel_runs_from_many_threads.4threads") {
  // Taskflow's ParallelRuns: threads each building and running a graph, and
  // several threads running one graph (its runs queue).
  weft::Executor executor(weft::test::cpu_only(4));
  std::atomic<long> counter{0};
  const auto make = [&](weft::Graph& g) {
    for (int i = 0; i < 256; ++i) {
      g.emplace([&] { counter.fetch_add(1, std::memory_order_relaxed); });
      g.then([&] { counter.fetch_add(1, std::memory_order_relaxed); });
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      weft::Graph g;
      make(g);
      executor.run(g).get();
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(counter.load() == 8L * 512);
  counter = 0;
  threads.clear();
  weft::Graph shared;
  make(shared);
  for (int t = 0; t < 8; ++t) threads.emplace_back([&] { executor.run_n(shared, 4).get(); });
  for (std::thread& t : threads) t.join();
  CHECK(counter.load() == 8L * 4 * 512);
}

TEST_CASE("GraphRuns.nested_executors_each_run_their_own_graphs.2threads") {
  // Taskflow's NestedRuns: a node of one executor's graph runs a graph on
  // another executor and waits for it.
  weft::Executor outer_executor(weft::test::cpu_only(2)), inner_executor(weft::test::cpu_only(2));
  std::atomic<int> counter{0};
  weft::Graph inner;
  inner.emplace([&] { counter.fetch_add(1); });
  inner.then([&] { counter.fetch_add(1); });
  weft::Graph outer;
  outer.emplace([&] { counter.fetch_add(1); });
  outer.then([&] {
    counter.fetch_add(1);
    inner_executor.run_n(inner, 10).get();
  });
  outer_executor.run_n(outer, 20).get();
  CHECK(counter.load() == 20 * (2 + 10 * 2));
}

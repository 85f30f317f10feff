// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Observers: what a tool attached to an Executor sees (node begin and end,
// runs, pool allocations), attaching and detaching between runs and while
// jobs run, and the tracer as one observer among others.
#include <weft/memory/memory_pool.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/observer.hpp>
#include <weft/runtime/task_group.hpp>
#include <weft/runtime/work_graph_policy.hpp>

#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>
#include "../executor_configs.hpp"

namespace {

// Keeps every event, in the order the observer got them.
struct Recorder : weft::Observer {
  struct Entry {
    char what;  // 'b'egin, 'e'nd, 'R' run begin, 'r' run end, 'a'llocate, 'd'eallocate
    weft::NodeEvent node;
    weft::RunEvent run;
    weft::AllocationEvent allocation;
  };
  std::mutex mutex;
  std::vector<Entry> entries;

  void add(Entry entry) {
    std::lock_guard<std::mutex> lock(mutex);
    entries.push_back(entry);
  }
  void on_run_begin(const weft::RunEvent& e) noexcept override { add({'R', {}, e, {}}); }
  void on_run_end(const weft::RunEvent& e) noexcept override { add({'r', {}, e, {}}); }
  void on_node_begin(const weft::NodeEvent& e) noexcept override { add({'b', e, {}, {}}); }
  void on_node_end(const weft::NodeEvent& e) noexcept override { add({'e', e, {}, {}}); }
  void on_allocate(const weft::AllocationEvent& e) noexcept override { add({'a', {}, {}, e}); }
  void on_deallocate(const weft::AllocationEvent& e) noexcept override { add({'d', {}, {}, e}); }

  std::vector<Entry> take() {
    std::lock_guard<std::mutex> lock(mutex);
    return std::exchange(entries, {});
  }
};

int count(const std::vector<Recorder::Entry>& entries, char what) {
  int n = 0;
  for (const Recorder::Entry& e : entries) n += e.what == what;
  return n;
}

// Per worker, begins and ends must nest: an end closes the newest open begin.
void check_nesting(const std::vector<Recorder::Entry>& entries, int workers) {
  std::vector<std::vector<weft::NodeEvent>> open(static_cast<std::size_t>(workers));
  for (const Recorder::Entry& e : entries) {
    if (e.what != 'b' && e.what != 'e') continue;
    REQUIRE(e.node.worker >= 0);
    REQUIRE(e.node.worker < workers);
    auto& stack = open[static_cast<std::size_t>(e.node.worker)];
    if (e.what == 'b') {
      stack.push_back(e.node);
      continue;
    }
    REQUIRE_FALSE(stack.empty());
    CHECK(stack.back().node == e.node.node);
    CHECK(std::string(stack.back().name) == e.node.name);
    CHECK(stack.back().time_ns <= e.node.time_ns);
    stack.pop_back();
  }
  for (const auto& stack : open) CHECK(stack.empty());
}

// Counts its kind alive and the events it got, and holds some state, as a
// real tool's observer would.
struct Counted : weft::Observer {
  static inline std::atomic<int> alive{0};
  std::atomic<long>* node_ends;
  std::atomic<long>* run_ends;
  std::vector<char> state = std::vector<char>(std::size_t{1} << 16);
  Counted(std::atomic<long>& nodes, std::atomic<long>& runs) : node_ends(&nodes), run_ends(&runs) { ++alive; }
  ~Counted() override { --alive; }
  void on_node_end(const weft::NodeEvent&) noexcept override { node_ends->fetch_add(1); }
  void on_run_end(const weft::RunEvent&) noexcept override { run_ends->fetch_add(1); }
};

// Whether `done()` turns true within a generous time (workers let go of a
// list between jobs, so a little after the runs that read it ended).
template <class Done>
bool eventually(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// A diamond: 0 -> {1, 2} -> 3.
weft::Crs<int> diamond() {
  weft::Crs<int> dag;
  dag.row_map = {0, 2, 3, 4, 4};
  dag.entries = {1, 2, 3, 3};
  return dag;
}

}  // namespace

TEST_CASE("Observer.every_node_of_a_work_graph_once_per_run_with_its_label.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  weft::WorkGraphPolicy<int> policy(diamond());
  const int graph_tag = 0;  // what the layer above knows the graph by
  const int partitions[] = {0, 1, 2, -1}, devices[] = {-1, 0, 1, -1};
  policy.set_node_labels(
      &graph_tag, {{"a", "node", 0, -1}, {"b", "node", 1, 0}, {"c", "node", 2, 1}, {"d", "node", -1, -1}});
  auto recorder = std::make_shared<Recorder>();
  executor.attach(recorder);
  for (int run = 0; run < 3; ++run) weft::parallel_for(executor, policy, [](int) {});
  executor.detach(recorder);
  const auto entries = recorder->take();
  check_nesting(entries, executor.worker_count());

  // Per run: its begin, each node's begin and end once, then its end.
  std::vector<std::vector<char>> sequence(3);
  std::vector<std::multiset<std::int64_t>> begun(3), ended(3);
  for (const auto& e : entries) {
    const std::int64_t run = e.what == 'R' || e.what == 'r' ? e.run.run : e.node.run;
    REQUIRE(run >= 0);
    REQUIRE(run < 3);
    sequence[static_cast<std::size_t>(run)].push_back(e.what);
    if (e.what == 'R' || e.what == 'r') {
      CHECK(e.run.graph == &graph_tag);
      CHECK(e.run.nodes == 4);
      continue;
    }
    CHECK(e.node.graph == &graph_tag);
    const std::size_t node = static_cast<std::size_t>(e.node.node);
    CHECK(std::string(e.node.name) == std::string(1, "abcd"[node]));
    CHECK(e.node.partition == partitions[node]);
    CHECK(e.node.device == devices[node]);
    (e.what == 'b' ? begun : ended)[static_cast<std::size_t>(run)].insert(e.node.node);
  }
  for (std::size_t run = 0; run < 3; ++run) {
    CAPTURE(run);
    CHECK(begun[run] == std::multiset<std::int64_t>{0, 1, 2, 3});
    CHECK(ended[run] == std::multiset<std::int64_t>{0, 1, 2, 3});
    REQUIRE(sequence[run].size() == 10);
    CHECK(sequence[run].front() == 'R');
    CHECK(sequence[run].back() == 'r');
  }
  // Dependences show: a node begins after its predecessors ended.
  std::map<std::pair<std::int64_t, char>, std::size_t> at;  // (node, b/e) -> position in run 0
  for (std::size_t i = 0; i < entries.size(); ++i)
    if ((entries[i].what == 'b' || entries[i].what == 'e') && entries[i].node.run == 0)
      at[{entries[i].node.node, entries[i].what}] = i;
  CHECK(at[{0, 'e'}] < at[{1, 'b'}]);
  CHECK(at[{0, 'e'}] < at[{2, 'b'}]);
  CHECK(at[{1, 'e'}] < at[{3, 'b'}]);
  CHECK(at[{2, 'e'}] < at[{3, 'b'}]);
}

TEST_CASE("Observer.an_unlabelled_policy_is_known_by_itself_and_its_nodes_as_node") {
  weft::Executor executor(weft::test::cpu_only(1));
  weft::WorkGraphPolicy<int> policy(diamond());
  auto recorder = std::make_shared<Recorder>();
  executor.attach(recorder);
  weft::parallel_for(executor, policy, [](int) {});
  weft::parallel_for(executor, policy, [](int) {});
  const auto entries = recorder->take();
  REQUIRE(entries.size() == 2 * 10);
  const void* graph = entries.front().run.graph;
  CHECK(graph != nullptr);
  for (const auto& e : entries) {
    if (e.what == 'b' || e.what == 'e') {
      CHECK(std::string(e.node.name) == "node");
      CHECK(e.node.graph == graph);
      CHECK(e.node.partition == -1);
    }
  }
  CHECK(entries.back().run.run == 1);  // the second run of this policy
  CHECK_THROWS_WITH_AS(policy.set_node_labels(nullptr, {{"only one"}}),
                       "WorkGraphPolicy::set_node_labels: 1 labels given for 4 nodes", std::invalid_argument);
}

TEST_CASE("Observer.attached_inside_a_run_it_sees_the_runs_after_it.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  weft::WorkGraphPolicy<int> policy(diamond());
  auto recorder = std::make_shared<Recorder>();
  // A node attaches it: the run in flight keeps the observers it began with.
  weft::parallel_for(executor, policy, [&](int i) {
    if (i == 1) executor.attach(recorder);
  });
  CHECK(recorder->take().empty());
  weft::parallel_for(executor, policy, [](int) {});
  const auto entries = recorder->take();
  CHECK(count(entries, 'R') == 1);
  CHECK(count(entries, 'e') == 4);
  CHECK(entries.front().run.run == 1);
}

TEST_CASE("Observer.a_node_that_throws_still_ends_and_so_does_its_run") {
  weft::Executor executor(weft::test::cpu_only(1));
  weft::WorkGraphPolicy<int> policy(diamond());
  auto recorder = std::make_shared<Recorder>();
  executor.attach(recorder);
  CHECK_THROWS_AS(weft::parallel_for(executor, policy,
                                     [](int i) {
                                       if (i == 0) throw std::runtime_error("node 0 fails");
                                     }),
                  std::runtime_error);
  const auto entries = recorder->take();
  // Node 0 ran and failed; the others were skipped, unseen.
  REQUIRE(entries.size() == 4);
  CHECK(entries[0].what == 'R');
  CHECK(entries[1].what == 'b');
  CHECK(entries[2].what == 'e');
  CHECK(entries[2].node.node == 0);
  CHECK(entries[3].what == 'r');
}

TEST_CASE("Observer.a_deferred_node_completed_during_its_call_ends_before_its_run") {
  // The completion (a GPU callback, here a thread joined inside the call)
  // could end the run before the worker reports the node's end.
  weft::Executor executor(weft::test::cpu_only(2));
  weft::Crs<int> one;
  one.row_map = {0, 0};
  weft::WorkGraphPolicy<int> policy(one);
  policy.set_deferred({0});
  auto recorder = std::make_shared<Recorder>();
  executor.attach(recorder);
  struct State {
    const weft::WorkGraphPolicy<int>* policy;
  } state{&policy};
  const weft::WorkGraphNodeCall call = weft::WorkGraphNodeCall::of(
      [](void* s) { std::thread([s] { static_cast<State*>(s)->policy->complete_deferred(0); }).join(); },
      &state);
  for (int run = 0; run < 20; ++run) {
    policy.run(executor, &call);
    std::vector<char> sequence;
    for (const auto& e : recorder->take()) sequence.push_back(e.what);
    CHECK(sequence == std::vector<char>{'R', 'b', 'e', 'r'});
  }
}

TEST_CASE("Observer.task_group_jobs_begin_before_they_end_on_their_worker.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  auto recorder = std::make_shared<Recorder>();
  executor.attach(recorder);
  weft::TaskGroup group(executor);
  for (int i = 0; i < 100; ++i) group.run([] {});
  group.wait();
  const auto entries = recorder->take();
  CHECK(count(entries, 'b') == 100);
  CHECK(count(entries, 'e') == 100);
  check_nesting(entries, executor.worker_count());
  for (const auto& e : entries) {
    CHECK(std::string(e.node.name) == "job");
    CHECK(e.node.node == -1);  // not a graph node
    CHECK(e.node.graph == nullptr);
  }
}

TEST_CASE("Observer.attach_and_detach_between_runs.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  auto recorder = std::make_shared<Recorder>();
  const auto run_jobs = [&](int n) {
    weft::TaskGroup group(executor);
    for (int i = 0; i < n; ++i) group.run([] {});
    group.wait();
  };
  CHECK(executor.observers() == nullptr);
  run_jobs(5);
  executor.attach(recorder);
  CHECK(executor.observers() != nullptr);
  run_jobs(7);
  executor.detach(recorder);
  CHECK(executor.observers() == nullptr);  // the hot path's check is false again
  run_jobs(11);
  CHECK(count(recorder->take(), 'e') == 7);  // only the run it was attached for
  executor.attach(recorder);                 // again, once detached
  run_jobs(3);
  CHECK(count(recorder->take(), 'e') == 3);
}

TEST_CASE("Observer.a_detached_observer_goes_once_no_run_or_job_reads_it.2threads") {
  // A tool attached for one request at a time: each detached observer must
  // go, not stay with the executor (200 of them once held 2 GB).
  weft::Executor executor(weft::test::cpu_only(2));
  weft::WorkGraphPolicy<int> policy(diamond());
  std::atomic<long> node_ends{0}, run_ends{0};
  for (int request = 0; request < 200; ++request) {
    auto observer = std::make_shared<Counted>(node_ends, run_ends);
    executor.attach(observer);
    weft::TaskGroup group(executor);
    for (int i = 0; i < 4; ++i) group.run([] {});
    group.wait();
    weft::parallel_for(executor, policy, [](int) {});
    executor.detach(observer);
  }
  CHECK(node_ends.load() == 200 * (4 + 4));  // each saw its jobs and its run's nodes
  CHECK(run_ends.load() == 200);
  CHECK(eventually([] { return Counted::alive.load() == 0; }));
  executor.attach(std::make_shared<Counted>(node_ends, run_ends));  // an attached one stays
  weft::parallel_for(executor, policy, [](int) {});
  CHECK(Counted::alive.load() == 1);
}

TEST_CASE("Observer.a_run_in_flight_keeps_a_detached_observer_until_it_ends.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  weft::WorkGraphPolicy<int> policy(diamond());
  std::atomic<long> node_ends{0}, run_ends{0};
  auto observer = std::make_shared<Counted>(node_ends, run_ends);
  executor.attach(observer);
  std::atomic<bool> in_node{false}, go_on{false};
  std::thread runner([&] {
    weft::parallel_for(executor, policy, [&](int node) {
      if (node != 1) return;
      in_node.store(true);
      while (!go_on.load()) std::this_thread::yield();
    });
  });
  while (!in_node.load()) std::this_thread::yield();
  executor.detach(observer);
  observer.reset();                   // the user lets go too: only the run holds it now
  CHECK(Counted::alive.load() == 1);  // it still hears the rest of the run
  go_on.store(true);
  runner.join();
  CHECK(node_ends.load() == 4);
  CHECK(run_ends.load() == 1);
  CHECK(eventually([] { return Counted::alive.load() == 0; }));
}

TEST_CASE("Observer.several_observers_each_see_every_event") {
  weft::Executor executor(weft::test::cpu_only(2));
  auto first = std::make_shared<Recorder>();
  auto second = std::make_shared<Recorder>();
  executor.attach(first);
  executor.attach(second);
  weft::TaskGroup group(executor);
  for (int i = 0; i < 20; ++i) group.run([] {});
  group.wait();
  CHECK(count(first->take(), 'e') == 20);
  CHECK(count(second->take(), 'e') == 20);
}

TEST_CASE("Observer.attach_and_detach_errors_name_the_problem") {
  weft::Executor executor(weft::test::cpu_only(1));
  auto recorder = std::make_shared<Recorder>();
  CHECK_THROWS_WITH_AS(executor.attach(nullptr), "Executor::attach: the observer is null",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(executor.detach(recorder),
                       "Executor::detach: the observer is not attached to this executor",
                       std::invalid_argument);
  executor.attach(recorder);
  CHECK_THROWS_WITH_AS(executor.attach(recorder), doctest::Contains("already attached"),
                       std::invalid_argument);
  executor.detach(recorder);  // the failed attach changed nothing
  CHECK(executor.observers() == nullptr);
}

TEST_CASE("Observer.pool_allocations_on_workers_are_seen_with_the_worker_and_pool.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  weft::MemoryPool<weft::HostSpace> pool(weft::HostSpace{}, 1 << 16);
  auto recorder = std::make_shared<Recorder>();
  void* outside = pool.allocate(64);  // before attaching: not seen
  executor.attach(recorder);
  void* on_main = pool.allocate(64);  // not a worker: no executor to report to
  void* block = nullptr;
  void* too_large = nullptr;
  int worker = -1;
  {
    weft::TaskGroup group(executor);
    group.run([&] {
      worker = weft::Executor::current_worker()->index();
      block = pool.allocate(100);
      pool.deallocate(block, 100);
      too_large = pool.allocate(1 << 20);  // larger than a block: fails, and is seen failing
    });
    group.wait();
  }
  CHECK(too_large == nullptr);
  executor.detach(recorder);
  pool.deallocate(on_main, 64);
  pool.deallocate(outside, 64);

  std::vector<weft::AllocationEvent> allocations, deallocations;
  for (const auto& e : recorder->take()) {
    if (e.what == 'a') allocations.push_back(e.allocation);
    if (e.what == 'd') deallocations.push_back(e.allocation);
  }
  REQUIRE(allocations.size() == 2);
  REQUIRE(deallocations.size() == 1);
  CHECK(allocations[0].pointer == block);
  CHECK(allocations[0].size == 100);
  CHECK(allocations[0].worker == worker);
  CHECK(allocations[0].pool == &pool);
  CHECK(std::string(allocations[0].space) == "HostSpace");
  CHECK(allocations[1].pointer == nullptr);
  CHECK(allocations[1].size == std::size_t{1} << 20);
  CHECK(deallocations[0].pointer == block);
  CHECK(deallocations[0].size == 100);
}

TEST_CASE("Observer.the_tracer_is_one_observer_among_others") {
  weft::Executor executor(weft::test::cpu_only(2));
  auto recorder = std::make_shared<Recorder>();
  executor.attach(recorder);
  executor.start_trace();
  executor.start_trace();  // a second start only clears the buffers
  {
    weft::TaskGroup group(executor);
    for (int i = 0; i < 10; ++i) group.run([] {});
    group.wait();
  }
  executor.stop_trace();
  std::size_t spans = 0;
  for (const auto& worker : executor.tracer().events()) spans += worker.size();
  CHECK(spans == 10);
  CHECK(count(recorder->take(), 'e') == 10);
  executor.detach(recorder);
  CHECK(executor.observers() == nullptr);  // stop_trace() detached the tracer
  executor.stop_trace();                   // stopping twice is harmless
}

// Attaching and detaching while jobs run (nested ones too): every observer
// sees, per worker, each end after its begin, and no begin without its end.
// Run under ThreadSanitizer by the CI's TSan job.
TEST_CASE("Observer.attach_and_detach_while_jobs_run.4threads") {
  constexpr int kWorkers = 4;
  weft::Executor executor(weft::test::cpu_only(kWorkers));
  // Per worker depth counters: only that worker touches its own, so a
  // negative depth means an end without its begin.
  struct Depth : weft::Observer {
    std::array<std::atomic<int>, kWorkers> depth{};
    std::atomic<long> ends{0};
    std::atomic<bool> broken{false};
    void on_node_begin(const weft::NodeEvent& e) noexcept override {
      depth[static_cast<std::size_t>(e.worker)].fetch_add(1, std::memory_order_relaxed);
    }
    void on_node_end(const weft::NodeEvent& e) noexcept override {
      if (depth[static_cast<std::size_t>(e.worker)].fetch_sub(1, std::memory_order_relaxed) <= 0)
        broken.store(true, std::memory_order_relaxed);
      ends.fetch_add(1, std::memory_order_relaxed);
    }
  };
  std::array<std::shared_ptr<Depth>, 3> observers;
  for (auto& o : observers) o = std::make_shared<Depth>();

  std::atomic<bool> stop{false};
  std::atomic<long> ran{0};
  std::vector<std::thread> submitters;
  // Graph runs too: their nodes report to the list their run began with.
  submitters.emplace_back([&] {
    weft::WorkGraphPolicy<int> policy(diamond());
    while (!stop.load(std::memory_order_relaxed))
      weft::parallel_for(executor, policy, [&](int) { ran.fetch_add(1, std::memory_order_relaxed); });
  });
  for (int t = 0; t < 2; ++t) {
    submitters.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        weft::TaskGroup group(executor);
        for (int i = 0; i < 50; ++i) {
          group.run([&] {
            // A nested wait: a worker runs other jobs inside this one.
            weft::TaskGroup inner(executor);
            inner.run([&] { ran.fetch_add(1, std::memory_order_relaxed); });
            inner.wait();
            ran.fetch_add(1, std::memory_order_relaxed);
          });
        }
        group.wait();
      }
    });
  }
  // Long enough to overlap plenty of jobs, however the threads are scheduled.
  for (int round = 0; round < 300 || ran.load(std::memory_order_relaxed) < 20'000; ++round) {
    auto& o = observers[static_cast<std::size_t>(round) % observers.size()];
    executor.attach(o);
    std::this_thread::yield();
    executor.detach(o);
  }
  executor.attach(observers[0]);  // one stays attached to the end
  stop.store(true, std::memory_order_relaxed);
  for (auto& t : submitters) t.join();
  executor.wait_for_all();
  executor.detach(observers[0]);
  // Every list they were in was freed (as its last reader let go), or will
  // be once the workers are between jobs.
  std::vector<std::weak_ptr<Depth>> gone(observers.begin(), observers.end());
  const auto all_gone = [&] {
    for (const auto& o : gone)
      if (o.use_count() > 1) return false;  // the test's own share is the one left
    return true;
  };
  CHECK(eventually(all_gone));

  CHECK(ran.load() > 0);
  long seen = 0;
  for (const auto& o : observers) {
    CHECK_FALSE(o->broken.load());
    for (const auto& d : o->depth) CHECK(d.load() == 0);  // every begin got its end
    seen += o->ends.load();
  }
  CHECK(seen > 0);
}

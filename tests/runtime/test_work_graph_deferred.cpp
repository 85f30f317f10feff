// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Deferred nodes of the work-DAG: a node whose call only starts its work
// (as a GPU node queues a kernel) and which completes when someone calls
// complete_deferred() later, from another thread. Its early successors (the
// first ones in its row) may start as soon as its call returned; the others
// only once it completed. Here a "completer" thread plays the GPU.
#include <weft/runtime/work_graph_policy.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../executor_configs.hpp"
#include "../test_support.hpp"
#include "dag_shapes.hpp"

namespace {

// Completes deferred nodes on its own thread, in arrival order, after a short
// random delay: the role a CUDA host callback plays for GPU nodes.
class Completer {
 public:
  explicit Completer(const weft::WorkGraphPolicy<int>& policy, std::atomic<int>* completed)
      : policy_(policy), completed_(completed), thread_([this] { loop(); }) {}
  ~Completer() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  void later(int node, std::exception_ptr error = nullptr) {
    // Notify under the lock: once this node completes, the run may end and
    // the Completer go away, so nothing of it may be touched after unlocking.
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back({node, std::move(error)});
    wake_.notify_one();
  }

 private:
  struct Request {
    int node;
    std::exception_ptr error;
  };
  void loop() {
    std::mt19937 rng(7);
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      Request r = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 50));
      if (completed_ != nullptr) completed_[r.node].store(1, std::memory_order_relaxed);
      policy_.complete_deferred(r.node, std::move(r.error));
      lock.lock();
    }
  }

  const weft::WorkGraphPolicy<int>& policy_;
  std::atomic<int>* completed_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Request> queue_;
  bool stop_ = false;
  std::thread thread_;
};

// `dag` with the rows of deferred nodes reordered so that their deferred
// successors come first (those are the early ones: stream-ordered, in the
// GPU picture), and the early count of every node.
struct DeferredDag {
  weft::Crs<int> dag;
  std::vector<int> early;
};

DeferredDag with_deferred(weft::Crs<int> dag, const std::vector<bool>& deferred) {
  DeferredDag out;
  const int n = dag.num_rows();
  out.early.assign(static_cast<std::size_t>(n), -1);
  for (int i = 0; i < n; ++i) {
    if (!deferred[static_cast<std::size_t>(i)]) continue;
    auto first = dag.entries.begin() + dag.row_begin(i), last = dag.entries.begin() + dag.row_end(i);
    auto middle =
        std::stable_partition(first, last, [&](int s) { return deferred[static_cast<std::size_t>(s)]; });
    out.early[static_cast<std::size_t>(i)] = static_cast<int>(middle - first);
  }
  out.dag = std::move(dag);
  return out;
}

// Runs `dag` with every third node deferred and checks the two promises:
// early successors start after their predecessor's call, the others after
// its completion; every node runs once and the run ends after everything.
void check_deferred(weft::Executor& executor, const weft::Crs<int>& shape, int runs) {
  const int n = shape.num_rows();
  std::vector<bool> deferred(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) deferred[static_cast<std::size_t>(i)] = i % 3 == 0;
  DeferredDag d = with_deferred(shape, deferred);
  weft::WorkGraphPolicy<int> policy(d.dag);
  policy.set_deferred(d.early);
  std::vector<std::vector<std::pair<int, bool>>> preds(static_cast<std::size_t>(n));  // (pred, early?)
  for (int i = 0; i < n; ++i) {
    for (int k = d.dag.row_begin(i); k < d.dag.row_end(i); ++k) {
      const bool early = deferred[static_cast<std::size_t>(i)] &&
                         k - d.dag.row_begin(i) < d.early[static_cast<std::size_t>(i)];
      preds[static_cast<std::size_t>(d.dag.entries[static_cast<std::size_t>(k)])].emplace_back(i, early);
    }
  }
  for (int run = 0; run < runs; ++run) {
    auto started = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(n));
    auto completed = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(n));
    std::atomic<long> violations{0};
    {
      Completer completer(policy, completed.get());
      weft::parallel_for(executor, policy, [&](int j) {
        for (const auto& [p, early] : preds[static_cast<std::size_t>(j)]) {
          const auto& seen = early ? started : completed;
          if (seen[static_cast<std::size_t>(p)].load(std::memory_order_relaxed) != 1)
            violations.fetch_add(1, std::memory_order_relaxed);
        }
        started[static_cast<std::size_t>(j)].fetch_add(1, std::memory_order_relaxed);
        if (deferred[static_cast<std::size_t>(j)]) {
          completer.later(j);
        } else {
          completed[static_cast<std::size_t>(j)].store(1, std::memory_order_relaxed);
        }
      });
      // parallel_for returned: every sink, deferred ones included, completed.
      int all = 0;
      for (int i = 0; i < n; ++i) all += completed[static_cast<std::size_t>(i)].load() == 1;
      CHECK(all == n);
    }
    CHECK(violations.load() == 0);
    int once = 0;
    for (int i = 0; i < n; ++i) once += started[static_cast<std::size_t>(i)].load() == 1;
    CHECK(once == n);
  }
}

}  // namespace

TEST_CASE("WorkGraph.deferred_nodes_complete_from_another_thread.1-2-4threads") {
  for (int threads : {1, 2, 4}) {
    CAPTURE(threads);
    weft::Executor executor(weft::test::cpu_only(threads));
    check_deferred(executor, weft::test::chain(300), 2);
    check_deferred(executor, weft::test::fan_out_fan_in(300), 2);
    check_deferred(executor, weft::test::wavefront(12, 15), 2);
    for (std::uint32_t seed = 1; seed <= 3; ++seed)
      check_deferred(executor, weft::test::random_dag(400, 4, seed), 2);
  }
}

TEST_CASE("WorkGraph.deferred_completion_error_fails_the_run_and_the_policy_stays_usable") {
  weft::Executor executor(weft::test::cpu_only(2));
  // 0 -> 1 -> 2, node 1 deferred with no early successor.
  weft::WorkGraphPolicy<int> policy(weft::test::chain(3));
  policy.set_deferred({-1, 0, -1});
  std::atomic<int> ran_last{0};
  {
    Completer completer(policy, nullptr);
    const auto body = [&](int i) {
      if (i == 1) completer.later(1, std::make_exception_ptr(std::runtime_error("the kernel faulted")));
      if (i == 2) ran_last.fetch_add(1);
    };
    CHECK_THROWS_WITH_AS(weft::parallel_for(executor, policy, body), "the kernel faulted",
                         std::runtime_error);
    CHECK(ran_last.load() == 0);  // skipped after the failure
    // The next run succeeds.
    const auto fine = [&](int i) {
      if (i == 1) completer.later(1);
      if (i == 2) ran_last.fetch_add(1);
    };
    weft::parallel_for(executor, policy, fine);
    CHECK(ran_last.load() == 1);
  }
}

TEST_CASE("WorkGraph.a_deferred_node_that_throws_completes_at_once") {
  weft::Executor executor(weft::test::cpu_only(2));
  weft::WorkGraphPolicy<int> policy(weft::test::chain(3));
  policy.set_deferred({0, 0, 0});  // every node deferred; none calls complete_deferred
  const auto body = [](int i) {
    if (i == 0) throw std::runtime_error("could not queue the kernel");
  };
  CHECK_THROWS_WITH_AS(weft::parallel_for(executor, policy, body), "could not queue the kernel",
                       std::runtime_error);
}

TEST_CASE("WorkGraph.set_deferred_rejects_bad_entries") {
  weft::WorkGraphPolicy<int> policy(weft::test::chain(3));
  CHECK(weft::test::invalid_argument_message([&] {
          policy.set_deferred({-1, -1});
        }) == "WorkGraphPolicy::set_deferred: 2 entries given for 3 nodes");
  CHECK(weft::test::invalid_argument_message([&] {
          policy.set_deferred({-1, 2, -1});
        }) == "WorkGraphPolicy::set_deferred: node 1 has 1 successors, so it cannot release 2 early");
  CHECK(weft::test::invalid_argument_message([&] {
          policy.set_deferred({-2, 0, 0});
        }) == "WorkGraphPolicy::set_deferred: node 0 has 1 successors, so it cannot release -2 early");
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Executor under load: a million tiny jobs, jobs spawning jobs, external
// submission from several threads at once, and random work-DAGs.
#include <weft/memory/memory_pool.hpp>
#include <weft/runtime/promise.hpp>
#include <weft/runtime/task_group.hpp>
#include <weft/runtime/task_scheduler.hpp>
#include <weft/runtime/work_graph_policy.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "../executor_configs.hpp"
#include "../runtime/dag_shapes.hpp"
#include "stress_scale.hpp"

namespace {

// Ends the process with a message when `progress` stops moving for
// `patience`: a lost wake-up leaves a lone waiter asleep for good, and the
// message names the round and the wait instead of a suite timing out.
class Watchdog {
 public:
  Watchdog(const std::atomic<long>& progress, std::chrono::seconds patience, const char* what)
      : thread_([this, &progress, patience, what] {
          long last = progress.load();
          auto since = std::chrono::steady_clock::now();
          while (!stop_.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            const long now = progress.load();
            if (now != last) {
              last = now;
              since = std::chrono::steady_clock::now();
            } else if (std::chrono::steady_clock::now() - since > patience) {
              std::fprintf(stderr, "%s: no progress for %lld s at step %ld: a wake-up was lost\n", what,
                           static_cast<long long>(patience.count()), now);
              std::_Exit(1);
            }
          }
        }) {}
  ~Watchdog() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A short busy wait of 0 to ~`max_spins` iterations, so that work ends
// anywhere in a waiter's checks, its announcement and its sleep.
void spin_randomly(unsigned& seed, unsigned max_spins) {
  seed = seed * 1664525u + 1013904223u;
  std::atomic<unsigned> sink{0};
  for (unsigned i = 0, n = (seed >> 8) % max_spins; i < n; ++i) sink.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

TEST_CASE("Executor.stress.a_lone_outside_waiter_is_woken_by_each_end_it_waits_for.2threads") {
  // One waiter, one thing to wait for at a time, so nothing else wakes it:
  // a wake-up lost between its checks and its sleep stalls it for good (the
  // watchdog then fails the suite). Each round waits one of the four ways a
  // thread outside the pool sleeps: a task group (any run's end), wait_for_all
  // (no run left), a promise's future (its own word), and, through every
  // job, the workers' own sleep (a job nobody wakes a worker for never runs).
  const long rounds = weft::test::scaled(20'000);
  weft::Executor executor(weft::test::workers_only(2));
  std::atomic<long> step{0};
  Watchdog watchdog(step, std::chrono::seconds(weft::test::under_tsan ? 60 : 10),
                    "a_lone_outside_waiter_is_woken_by_each_end_it_waits_for");
  std::atomic<long> ran{0};
  unsigned seed = 7;
  for (long round = 0; round < rounds; ++round) {
    const unsigned spins = 500u << ((seed >> 4) % 4);
    weft::TaskGroup group(executor);
    switch (round % 3) {
      case 0:
        group.run([&ran, s = seed, spins]() mutable {
          spin_randomly(s, spins);
          ran.fetch_add(1, std::memory_order_relaxed);
        });
        group.wait();
        break;
      case 1:
        group.run([&ran, s = seed, spins]() mutable {
          spin_randomly(s, spins);
          ran.fetch_add(1, std::memory_order_relaxed);
        });
        executor.wait_for_all();
        CHECK(group.pending() == 0);
        break;
      default: {
        weft::Promise<int> promise(executor);
        weft::Future<int> answer = promise.get_future();
        group.run([&promise, &ran, s = seed, spins]() mutable {
          spin_randomly(s, spins);
          ran.fetch_add(1, std::memory_order_relaxed);
          promise.set_value(1);
        });
        answer.wait();
        group.wait();
      }
    }
    spin_randomly(seed, 500);
    step.store(round + 1);
  }
  CHECK(ran.load() == rounds);
}

TEST_CASE("Executor.stress.concurrent_wait_for_all_calls_each_wait_for_the_runs_begun_before_them.2threads") {
  // Three threads call wait_for_all() at once, each right after starting a
  // run of its own, while a fourth keeps runs in flight throughout. Each
  // wait turns the executor's run generation (one at a time) and must see
  // its own run ended; none may wait for the churn to stop.
  constexpr int kWaiters = 3;
  const long rounds = weft::test::scaled(3'000, 10);
  weft::Executor executor(weft::test::cpu_only(2));
  std::atomic<long> step{0};
  std::atomic<bool> stop{false};
  Watchdog watchdog(step, std::chrono::seconds(weft::test::under_tsan ? 60 : 10),
                    "concurrent_wait_for_all_calls_each_wait_for_the_runs_begun_before_them");
  std::thread churn([&] {
    weft::TaskGroup group(executor);
    unsigned seed = 3;
    while (!stop.load()) {
      for (int k = 0; k < 4; ++k) group.run([s = seed + k]() mutable { spin_randomly(s, 2000); });
      seed += 4;
      group.wait();
    }
  });
  std::atomic<long> unfinished_seen{0};
  std::vector<std::thread> waiters;
  for (int w = 0; w < kWaiters; ++w) {
    waiters.emplace_back([&, w] {
      unsigned seed = 11u + static_cast<unsigned>(w);
      for (long round = 0; round < rounds; ++round) {
        weft::TaskGroup own(executor);
        std::atomic<bool> done{false};
        own.run([&done, s = seed]() mutable {
          spin_randomly(s, 1000);
          done.store(true);
        });
        executor.wait_for_all();
        if (!done.load()) unfinished_seen.fetch_add(1);
        spin_randomly(seed, 300);
        step.fetch_add(1);
      }
    });
  }
  for (std::thread& t : waiters) t.join();
  stop.store(true);
  churn.join();
  CHECK(unfinished_seen.load() == 0);
  CHECK(step.load() == kWaiters * rounds);
}

TEST_CASE("Executor.stress.million_tiny_jobs.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  const long jobs = weft::test::scaled(1'000'000, 10);
  std::atomic<long> count{0};
  weft::TaskGroup group(executor);
  for (long i = 0; i < jobs; ++i) group.run([&] { count.fetch_add(1, std::memory_order_relaxed); });
  group.wait();
  CHECK(count.load() == jobs);
}

TEST_CASE("Executor.stress.jobs_submitting_jobs.4threads") {
  weft::Executor executor(weft::test::cpu_only(4));
  weft::TaskGroup group(executor);
  std::atomic<long> leaves{0};
  // A binary tree of depth d spawned from inside jobs: 2^d leaves.
  const int depth = weft::test::under_tsan ? 14 : 17;
  struct Spawner {
    weft::TaskGroup* group;
    std::atomic<long>* leaves;
    int depth;
    void operator()() const {
      if (depth == 0) {
        leaves->fetch_add(1, std::memory_order_relaxed);
        return;
      }
      group->run(Spawner{group, leaves, depth - 1});
      group->run(Spawner{group, leaves, depth - 1});
    }
  };
  group.run(Spawner{&group, &leaves, depth});
  group.wait();
  CHECK(leaves.load() == (1L << depth));
}

TEST_CASE("Executor.stress.external_submission_from_4_threads.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  const long per_thread = weft::test::scaled(100'000, 10);
  std::atomic<long> count{0};
  weft::TaskGroup group(executor);
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&] {
      for (long i = 0; i < per_thread; ++i) group.run([&] { count.fetch_add(1, std::memory_order_relaxed); });
    });
  }
  for (auto& p : producers) p.join();
  group.wait();
  CHECK(count.load() == 4 * per_thread);
}

TEST_CASE("Executor.stress.outside_threads_run_their_groups_as_guests_while_workers_steal.2threads") {
  // More threads outside the pool than guest contexts, each running task
  // groups over and over (some callables waiting for a nested group, some
  // groups only destroyed, not waited for): every callable runs exactly
  // once, whether its thread, another guest or a worker takes it, and no
  // waiter is left asleep (the watchdog).
  weft::Executor executor(weft::test::cpu_only(2));
  const int threads = executor.guest_count() + 2;
  const long rounds = weft::test::scaled(20'000, 8);
  std::atomic<long> progress{0};
  std::atomic<long> wrong{0};
  Watchdog watchdog(progress, std::chrono::seconds(weft::test::under_tsan ? 60 : 10),
                    "outside_threads_run_their_groups_as_guests_while_workers_steal");
  std::vector<std::thread> outside;
  for (int t = 0; t < threads; ++t) {
    outside.emplace_back([&, t] {
      unsigned seed = 17u + static_cast<unsigned>(t);
      for (long round = 0; round < rounds; ++round) {
        seed = seed * 1664525u + 1013904223u;
        const int callables = 1 + static_cast<int>((seed >> 8) % 16);
        std::vector<std::atomic<int>> runs(static_cast<std::size_t>(callables));
        std::atomic<int> nested_runs{0};
        {
          weft::TaskGroup group(executor);
          for (int i = 0; i < callables; ++i) {
            group.run([&, i, s = seed + static_cast<unsigned>(i)]() mutable {
              spin_randomly(s, 400);
              if (s % 4 == 0) {
                weft::TaskGroup nested(executor);
                for (int k = 0; k < 3; ++k) nested.run([&] { nested_runs.fetch_add(1); });
                nested.wait();
              }
              runs[static_cast<std::size_t>(i)].fetch_add(1);
            });
          }
          if (round % 7 != 0) group.wait();  // else only the destructor waits
        }
        for (const auto& r : runs) wrong.fetch_add(r.load() != 1);
        if (nested_runs.load() % 3 != 0) wrong.fetch_add(1);
        progress.fetch_add(1);
      }
    });
  }
  for (auto& thread : outside) thread.join();
  CHECK(wrong.load() == 0);
  CHECK(progress.load() == threads * rounds);
}

TEST_CASE("Executor.stress.bursts_after_sleep.2threads") {
  // Work arrives in small bursts separated by pauses long enough for the
  // workers to go to sleep: every burst must still run (no lost wake-up).
  weft::Executor executor(weft::test::workers_only(2));
  std::atomic<long> count{0};
  const int bursts = weft::test::under_tsan ? 50 : 200;
  for (int b = 0; b < bursts; ++b) {
    weft::TaskGroup group(executor);
    for (int i = 0; i < 3; ++i) group.run([&] { count.fetch_add(1, std::memory_order_relaxed); });
    group.wait();
    if (b % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  CHECK(count.load() == 3L * bursts);
}

namespace {

// Waits until `flag` is set, or gives up after a deadline far beyond any
// healthy wait (seconds against microseconds): a lost wake-up then fails
// the test instead of hanging it. Returns whether the flag was set.
bool spin_until_set(const std::atomic<bool>& flag) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!flag.load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

TEST_CASE("Executor.stress.push_from_a_worker_wakes_a_sleeping_worker.2threads") {
  // Each round starts with both workers asleep. One wakes for a job that
  // pushes a second job onto its own deque and then waits for that one to
  // have run: only the other worker can run it, so the push must wake it.
  // A lost wake-up leaves the first job waiting until its deadline. A third
  // kind of round runs the group on an executor with guests, where the first
  // job may run on this thread and push onto its guest: a worker must wake
  // to steal the second.
  weft::Executor executor(weft::test::workers_only(2));
  weft::Executor with_guests(weft::test::cpu_only(2));
  const weft::MemoryPool<weft::HostSpace> pool(weft::HostSpace{}, std::size_t{1} << 20);
  const weft::TaskScheduler sched(executor, pool);
  const int rounds = weft::test::under_tsan ? 30 : 150;
  std::atomic<int> timeouts{0};
  for (int round = 0; round < rounds; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));  // the workers go to sleep
    std::atomic<bool> second_ran{false};
    if (round % 3 != 1) {
      // Through the Executor (TaskGroup).
      weft::TaskGroup group(round % 3 == 0 ? executor : with_guests);
      group.run([&] {
        group.run([&] { second_ran.store(true, std::memory_order_release); });
        if (!spin_until_set(second_ran)) timeouts.fetch_add(1);
      });
      group.wait();
    } else {
      // Through the task-DAG (a spawn from inside a task).
      struct Second {
        std::atomic<bool>* ran;
        void operator()(weft::TaskMember&) const { ran->store(true, std::memory_order_release); }
      };
      struct First {
        weft::TaskScheduler sched;
        std::atomic<bool>* ran;
        std::atomic<int>* timeouts;
        void operator()(weft::TaskMember&) const {
          const weft::Future<> second = weft::task_spawn(weft::TaskSingle(sched), Second{ran});
          if (second.is_null() || !spin_until_set(*ran)) timeouts->fetch_add(1);
        }
      };
      const weft::Future<> first =
          weft::host_spawn(weft::TaskSingle(sched), First{sched, &second_ran, &timeouts});
      REQUIRE_FALSE(first.is_null());
      weft::wait(sched);
    }
    CHECK(second_ran.load());
    if (timeouts.load() != 0) break;  // one lost wake-up is enough; don't wait out every round
  }
  CHECK(timeouts.load() == 0);
}

namespace {

// A High job of a binary tree (or a chain) of them, stored in one vector:
// it pushes its children from its worker and may stay busy a moment after.
struct HighNode : weft::Job {
  HighNode() : Job(&HighNode::invoke) {}
  HighNode* all = nullptr;
  int index = 0, count = 0;
  bool chain = false;  // push index + 1 only
  std::atomic<int> runs{0};
  std::atomic<int>* done = nullptr;
  static void invoke(weft::Job& job, weft::WorkerContext& worker) {
    auto& self = static_cast<HighNode&>(job);
    self.runs.fetch_add(1, std::memory_order_relaxed);
    const int first = self.chain ? self.index + 1 : 2 * self.index + 1;
    const int last = self.chain ? self.index + 1 : 2 * self.index + 2;
    for (int child = first; child <= last && child < self.count; ++child) {
      worker.push(&self.all[child], weft::Domain::Cpu, weft::TaskPriority::High);
    }
    if (self.chain || self.index % 7 == 0) {  // busy for a moment: a thief may take the newest child
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    self.done->fetch_add(1, std::memory_order_release);
  }
};

// Runs nodes[0] and all it pushes; returns how many nodes ran other than
// once (a doubled or lost job), giving up after a deadline far beyond any
// healthy run, and sets `steals`.
int run_high_nodes(weft::Executor& executor, std::vector<HighNode>& nodes, bool chain, long& steals) {
  std::atomic<int> done{0};
  const int count = static_cast<int>(nodes.size());
  for (int i = 0; i < count; ++i) {
    HighNode& node = nodes[static_cast<std::size_t>(i)];
    node.all = nodes.data();
    node.index = i;
    node.count = count;
    node.chain = chain;
    node.done = &done;
  }
  executor.reset_stats();
  executor.submit(&nodes[0], weft::Domain::Cpu, weft::TaskPriority::High);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  executor.wait_until([&] {
    return done.load(std::memory_order_acquire) >= count || std::chrono::steady_clock::now() > deadline;
  });
  steals = 0;
  for (const weft::WorkerStats& s : executor.stats()) steals += static_cast<long>(s.steals);
  int wrong = 0;
  for (const HighNode& node : nodes) wrong += node.runs.load() != 1;
  return wrong;
}

}  // namespace

// High jobs pushed from workers: the newest waits outside the High deque
// (WorkerContext::push), where its owner and thieves both may take it.
// Every node of a binary tree of High jobs must run exactly once; some
// nodes keep their worker busy after pushing, so that thieves take the
// newest job while its owner could not.
TEST_CASE("Executor.stress.high_jobs_run_once_whether_their_worker_or_a_thief_takes_them.3threads") {
  // Declared before the executor, whose destructor runs what is left.
  std::vector<HighNode> tree(static_cast<std::size_t>((1 << (weft::test::under_tsan ? 12 : 16)) - 1));
  std::vector<HighNode> chain(static_cast<std::size_t>(weft::test::under_tsan ? 200 : 2000));
  weft::Executor executor(weft::test::cpu_only(3));
  long steals = 0;
  CHECK(run_high_nodes(executor, tree, false, steals) == 0);
  MESSAGE("tree: " << steals << " steals");
  // A chain: each job pushes one High job and stays busy, so its worker's
  // High deque is empty and whatever a thief takes is the newest one.
  CHECK(run_high_nodes(executor, chain, true, steals) == 0);
  MESSAGE("chain: " << steals << " steals of the newest High job");
}

TEST_CASE("WorkGraph.stress.random_dags.2-3threads") {
  for (int threads : {2, 3}) {
    weft::Executor executor(weft::test::cpu_only(threads));
    for (std::uint32_t seed = 100; seed < 110; ++seed) {
      const int n = static_cast<int>(weft::test::scaled(20'000, 4));
      const weft::Crs<int> dag = weft::test::random_dag(n, 3, seed);
      weft::Crs<int> preds;
      weft::transpose_crs(preds, dag);
      weft::WorkGraphPolicy<int> policy(dag);
      for (int run = 0; run < 2; ++run) {
        std::vector<int> done(static_cast<std::size_t>(n), 0);  // plain ints: TSan checks the edges
        std::atomic<long> violations{0};
        weft::parallel_for(executor, policy, [&](int j) {
          for (int k = preds.row_begin(j); k < preds.row_end(j); ++k) {
            if (done[static_cast<std::size_t>(preds.entries[static_cast<std::size_t>(k)])] != 1) {
              violations.fetch_add(1, std::memory_order_relaxed);
            }
          }
          done[static_cast<std::size_t>(j)] = 1;
        });
        CHECK(violations.load() == 0);
        long ran = 0;
        for (int d : done) ran += d;
        CHECK(ran == n);
      }
    }
  }
}

TEST_CASE("WorkGraph.stress.wavefront_with_plain_data.2threads") {
  // Each cell reads its two predecessors' plain (non-atomic) values: any
  // missing happens-before edge is a data race TSan reports.
  const int side = weft::test::under_tsan ? 128 : 512;
  weft::Executor executor(weft::test::cpu_only(2));
  weft::WorkGraphPolicy<int> policy(weft::test::wavefront(side, side));
  std::vector<long> cell(static_cast<std::size_t>(side) * side, 0);
  weft::parallel_for(executor, policy, [&](int id) {
    const int i = id / side, j = id % side;
    const long up = i > 0 ? cell[static_cast<std::size_t>(id - side)] : 1;
    const long left = j > 0 ? cell[static_cast<std::size_t>(id - 1)] : 1;
    cell[static_cast<std::size_t>(id)] = (up + left) % 1000003;
  });
  // Compare with the same recurrence computed serially.
  std::vector<long> serial(cell.size(), 0);
  for (int i = 0; i < side; ++i) {
    for (int j = 0; j < side; ++j) {
      const long up = i > 0 ? serial[static_cast<std::size_t>((i - 1) * side + j)] : 1;
      const long left = j > 0 ? serial[static_cast<std::size_t>(i * side + j - 1)] : 1;
      serial[static_cast<std::size_t>(i * side + j)] = (up + left) % 1000003;
    }
  }
  CHECK(cell == serial);
}

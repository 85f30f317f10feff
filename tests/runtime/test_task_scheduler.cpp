// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The dynamic task-DAG: spawn, respawn, futures, when_all, priorities,
// domains, errors, and pool exhaustion.
#include <weft/runtime/task_scheduler.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>
#include "../executor_configs.hpp"

namespace {

using Pool = weft::MemoryPool<weft::HostSpace>;

// A task that fails with `message`.
struct Thrower {
  const char* message;
  void operator()(weft::TaskMember&) { throw std::runtime_error(message); }
};

// A task whose result is a given value.
template <class T>
struct Value {
  using value_type = T;
  T value;
  void operator()(weft::TaskMember&, T& out) { out = value; }
};

long serial_fib(long n) { return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2); }

// The report's Figure 3.4, with the priority of the F(n-2) branch a parameter.
struct Fib {
  using value_type = long;
  weft::TaskScheduler sched;
  long n;
  weft::TaskPriority small_branch = weft::TaskPriority::High;
  weft::Future<long> fib[2] = {};

  void operator()(weft::TaskMember&, long& result) {
    if (n < 2) {
      result = n;
    } else if (!fib[0].is_null()) {
      result = fib[0].get() + fib[1].get();
    } else {
      fib[0] = weft::task_spawn(weft::TaskSingle(sched, small_branch), Fib{sched, n - 2, small_branch});
      fib[1] = weft::task_spawn(weft::TaskSingle(sched), Fib{sched, n - 1, small_branch});
      weft::Future<> both = sched.when_all(fib, 2);
      if (fib[0].is_null() || fib[1].is_null() || both.is_null()) {
        throw std::runtime_error("fib: the pool is exhausted");
      }
      weft::TaskScheduler::respawn(this, both, weft::TaskPriority::High);
    }
  }
};

}  // namespace

TEST_CASE("TaskScheduler.fibonacci_figure_3_4.0_to_25.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 64u << 20);
  weft::TaskScheduler sched(executor, pool);
  for (long n = 0; n <= 25; ++n) {
    CAPTURE(n);
    weft::Future<long> f = weft::host_spawn(weft::TaskSingle(sched), Fib{sched, n});
    REQUIRE_FALSE(f.is_null());
    weft::wait(sched);
    CHECK(f.get() == serial_fib(n));
  }
  CHECK(sched.active_tasks() == 0);
}

TEST_CASE("TaskScheduler.high_priority_small_branch_lowers_the_high_water_mark.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 64u << 20);
  weft::TaskScheduler sched(executor, pool);
  sched.track_memory(true);
  std::int64_t high_water[2] = {};
  const weft::TaskPriority choice[2] = {weft::TaskPriority::High, weft::TaskPriority::Regular};
  for (int i = 0; i < 2; ++i) {
    sched.reset_high_water();
    weft::Future<long> f = weft::host_spawn(weft::TaskSingle(sched), Fib{sched, 22, choice[i]});
    weft::wait(sched);
    CHECK(f.get() == serial_fib(22));
    high_water[i] = sched.high_water_blocks();
  }
  MESSAGE("pool high-water mark for fib(22): " << high_water[0] << " blocks with F(n-2) at High, "
                                               << high_water[1] << " with every task Regular");
  CHECK(high_water[0] > 0);
  CHECK(high_water[1] > 0);
  // All blocks came back once the futures were dropped.
  CHECK(sched.live_blocks() == 0);
  CHECK(pool.get_usage_statistics().consumed_blocks == 0);
}

TEST_CASE("TaskScheduler.ready_high_task_runs_before_regular_and_low.1thread") {
  weft::Executor executor(weft::test::cpu_only(1));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  std::mutex m;
  std::vector<std::string> order;
  struct Record {
    std::vector<std::string>* order;
    std::mutex* m;
    std::string name;
    void operator()(weft::TaskMember&) {
      std::lock_guard<std::mutex> lock(*m);
      order->push_back(name);
    }
  };
  struct Spawner {
    weft::TaskScheduler sched;
    std::vector<std::string>* order;
    std::mutex* m;
    void operator()(weft::TaskMember&) {
      // Spawned least urgent first; all are ready when this task returns.
      weft::task_spawn(weft::TaskSingle(sched, weft::TaskPriority::Low), Record{order, m, "low"});
      weft::task_spawn(weft::TaskSingle(sched, weft::TaskPriority::Regular), Record{order, m, "regular"});
      weft::task_spawn(weft::TaskSingle(sched, weft::TaskPriority::High), Record{order, m, "high"});
    }
  };
  weft::host_spawn(weft::TaskSingle(sched), Spawner{sched, &order, &m});
  weft::wait(sched);
  CHECK(order == std::vector<std::string>{"high", "regular", "low"});
}

TEST_CASE("TaskScheduler.respawn_counts_to_n_and_dependents_wait.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  struct Counter {
    using value_type = int;
    int calls = 0;
    int limit;
    void operator()(weft::TaskMember&, int& result) {
      result = ++calls;
      if (calls < limit) weft::TaskScheduler::respawn(this, weft::TaskScheduler{}, weft::TaskPriority::Low);
    }
  };
  weft::Future<int> counter = weft::host_spawn(weft::TaskSingle(sched), Counter{0, 1000});
  // A dependent sees the final count: respawned tasks are not complete.
  struct Reader {
    using value_type = int;
    weft::Future<int> source;
    void operator()(weft::TaskMember&, int& out) { out = source.get(); }
  };
  weft::Future<int> reader = weft::host_spawn(weft::TaskSingle(counter), Reader{counter});
  weft::wait(sched);
  CHECK(counter.get() == 1000);
  CHECK(reader.get() == 1000);
}

TEST_CASE("TaskScheduler.when_all_over_arrays_generators_and_nested.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 4u << 20);
  weft::TaskScheduler sched(executor, pool);
  std::atomic<int> done{0};
  struct Leaf {
    using value_type = int;
    std::atomic<int>* done;
    int value;
    void operator()(weft::TaskMember&, int& out) {
      done->fetch_add(1);
      out = value;
    }
  };
  std::vector<weft::Future<int>> leaves;
  for (int i = 0; i < 40; ++i) leaves.push_back(weft::host_spawn(weft::TaskSingle(sched), Leaf{&done, i}));
  weft::Future<> first_half = sched.when_all(leaves.data(), 20);
  weft::Future<> second_half = sched.when_all(20, [&](std::size_t i) { return leaves[20 + i]; });
  weft::Future<> halves[2] = {first_half, second_half};
  weft::Future<> all = weft::when_all(halves, 2);  // nested
  struct Sum {
    using value_type = int;
    std::vector<weft::Future<int>>* leaves;
    std::atomic<int>* done;
    void operator()(weft::TaskMember&, int& out) {
      out = done->load();
      for (auto& f : *leaves) out += f.get();
    }
  };
  weft::Future<int> sum = weft::host_spawn(weft::TaskSingle(all), Sum{&leaves, &done});
  weft::wait(sched);
  CHECK(all.is_ready());
  CHECK(sum.get() == 40 + 39 * 40 / 2);

  // Null futures count as complete; all-null arrays need no entity at all.
  weft::Future<int> nulls[3];
  CHECK(weft::when_all(nulls, 3).is_null());
  weft::Future<> partly =
      sched.when_all(3, [&](std::size_t i) { return i == 1 ? leaves[0] : weft::Future<int>(); });
  REQUIRE_FALSE(partly.is_null());
  weft::wait(sched);
  CHECK(partly.is_ready());
}

// A task that respawns (at Low priority) until its gate opens.
struct Gated {
  std::atomic<bool>* open;
  void operator()(weft::TaskMember&) {
    if (!open->load()) weft::TaskScheduler::respawn(this, weft::TaskScheduler{}, weft::TaskPriority::Low);
  }
};

TEST_CASE("TaskScheduler.when_all_outlives_the_futures_it_was_made_from.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  sched.track_memory(true);
  std::atomic<bool> open{false};
  std::atomic<int> ran{0};
  struct Counter {
    std::atomic<int>* ran;
    void operator()(weft::TaskMember&) { ran->fetch_add(1); }
  };
  weft::Future<> all;
  {
    // The same task twice, too: the when-all waits for it through two entries.
    weft::Future<> gates[3] = {weft::host_spawn(weft::TaskSingle(sched), Gated{&open}),
                               weft::host_spawn(weft::TaskSingle(sched), Gated{&open})};
    gates[2] = gates[0];
    all = sched.when_all(gates, 3);
    REQUIRE_FALSE(all.is_null());
  }  // the gates' futures are gone while they still run
  weft::Future<> after = weft::host_spawn(weft::TaskSingle(all), Counter{&ran});
  CHECK_FALSE(all.is_ready());
  open = true;
  weft::wait(sched);
  CHECK(all.is_ready());
  CHECK(ran.load() == 1);
  all = weft::Future<>();
  after = weft::Future<>();
  CHECK(sched.live_blocks() == 0);  // every task and the when-all went back

  // An empty when-all is complete at once.
  weft::Future<> empty = sched.when_all(0, [](std::size_t) { return weft::Future<>(); });
  REQUIRE_FALSE(empty.is_null());
  CHECK(empty.is_ready());
}

TEST_CASE("TaskScheduler.a_failed_dependence_completes_the_when_all_once_the_others_have.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  std::atomic<bool> open{false};
  weft::Future<> parts[2] = {
      weft::host_spawn(weft::TaskSingle(sched), Gated{&open}),
      weft::host_spawn(weft::TaskSingle(sched), Thrower{"dependence failed on purpose"})};
  weft::Future<> all = sched.when_all(parts, 2);
  REQUIRE_FALSE(all.is_null());
  parts[1].wait();
  CHECK(parts[1].is_ready());
  CHECK_FALSE(all.is_ready());  // the gated task has not completed
  open = true;
  CHECK_THROWS_WITH_AS(weft::wait(sched), "dependence failed on purpose", std::runtime_error);
  CHECK_NOTHROW(parts[0].get());
  CHECK_THROWS_WITH_AS(all.get(), "dependence failed on purpose", std::runtime_error);
}

TEST_CASE("TaskScheduler.tasks_wait_for_tasks_of_another_scheduler.2threads") {
  // A scheduler's when-all over another scheduler's tasks, and a task that
  // respawns on one: they complete on the other scheduler's workers, which
  // must not touch the waiting scheduler after its wait() can return (it is
  // destroyed right after, every round).
  weft::Executor executor(weft::test::cpu_only(2));
  Pool producer_pool(weft::HostSpace{}, 1u << 20), consumer_pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler producer(executor, producer_pool);
  struct AddAfter {
    using value_type = int;
    weft::Future<int> other;
    bool waited = false;
    void operator()(weft::TaskMember&, int& out) {
      if (!waited) {
        waited = true;
        weft::TaskScheduler::respawn(this, other);
        return;
      }
      out = other.get() + 1;
    }
  };
  struct SumOf {
    using value_type = int;
    weft::Future<int> parts[2];
    void operator()(weft::TaskMember&, int& out) { out = parts[0].get() + parts[1].get(); }
  };
  for (int round = 0; round < 200; ++round) {
    weft::TaskScheduler consumer(executor, consumer_pool);
    weft::Future<int> parts[2] = {weft::host_spawn(weft::TaskSingle(producer), Value<int>{round}),
                                  weft::host_spawn(weft::TaskSingle(producer), Value<int>{1})};
    weft::Future<> both = consumer.when_all(parts, 2);
    REQUIRE_FALSE(both.is_null());
    weft::Future<int> sum = weft::host_spawn(weft::TaskSingle(both), SumOf{{parts[0], parts[1]}});
    weft::Future<int> after = weft::host_spawn(weft::TaskSingle(consumer), AddAfter{parts[0]});
    weft::wait(consumer);
    CHECK(sum.get() == round + 1);
    CHECK(after.get() == round + 1);
  }
  weft::wait(producer);
  CHECK(consumer_pool.get_usage_statistics().consumed_blocks == 0);
}

TEST_CASE(
    "TaskScheduler.failed_tasks_whose_futures_were_dropped_give_their_blocks_back_before_the_wait.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  sched.track_memory(true);
  constexpr int kFailures = 2000;
  for (int i = 0; i < kFailures; ++i) {
    weft::Future<> failed =
        weft::host_spawn(weft::TaskSingle(sched), Thrower{i == 0 ? "the first failure" : "later"});
    REQUIRE_FALSE(failed.is_null());
    failed.wait();  // then dropped: no get() can observe this failure any more
  }
  // Every block held a failed task until wait(sched) before: 2000 of them.
  CHECK(sched.live_blocks() <= 2);
  // The failures are still reported, the first first.
  CHECK_THROWS_WITH_AS(weft::wait(sched), "the first failure", std::runtime_error);
  CHECK_NOTHROW(weft::wait(sched));  // reported once
  CHECK(sched.live_blocks() == 0);
  CHECK(pool.get_usage_statistics().consumed_blocks == 0);
}

TEST_CASE("TaskScheduler.a_dropped_failure_with_a_future_left_stays_observable.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  weft::Future<> kept = weft::host_spawn(weft::TaskSingle(sched), Thrower{"observed through the copy"});
  {
    const weft::Future<> copy = kept;  // dropped: one future is left
    copy.wait();
  }
  CHECK_THROWS_WITH_AS(kept.get(), "observed through the copy", std::runtime_error);
  CHECK_NOTHROW(weft::wait(sched));  // get() observed it: nothing left to report
}

TEST_CASE("TaskScheduler.future_semantics") {
  weft::Executor executor(weft::test::cpu_only(1));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  weft::Future<long> null_future;
  CHECK(null_future.is_null());
  CHECK_THROWS_WITH_AS(null_future.get(), doctest::Contains("null"), std::logic_error);

  std::atomic<bool> release{false};
  struct Gate {
    using value_type = long;
    std::atomic<bool>* release;
    void operator()(weft::TaskMember&, long& out) {
      if (!release->load()) {
        weft::TaskScheduler::respawn(this, weft::TaskScheduler{}, weft::TaskPriority::Low);
        return;
      }
      out = 7;
    }
  };
  weft::Future<long> f = weft::host_spawn(weft::TaskSingle(sched), Gate{&release});
  weft::Future<long> copy = f;
  weft::Future<> as_void = f;  // converts to Future<void>
  CHECK(copy == f);
  CHECK_FALSE(f.is_ready());
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    release = true;
  });
  CHECK(f.get() == 7);  // waits for the task, like std::future::get
  opener.join();
  weft::wait(sched);
  CHECK(copy.get() == 7);
  CHECK_NOTHROW(as_void.get());
  f = weft::Future<long>();
  CHECK(copy.get() == 7);  // still alive through the copy
}

TEST_CASE("TaskScheduler.exceptions_propagate_to_get_wait_and_dependents.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  std::atomic<int> ran{0};
  struct Dependent {
    std::atomic<int>* ran;
    void operator()(weft::TaskMember&) { ran->fetch_add(1); }
  };
  weft::Future<> bad = weft::host_spawn(weft::TaskSingle(sched), Thrower{"task failed on purpose"});
  weft::Future<> direct = weft::host_spawn(weft::TaskSingle(bad), Dependent{&ran});
  weft::Future<> fine = weft::host_spawn(weft::TaskSingle(sched), Dependent{&ran});
  weft::Future<> group[2] = {fine, bad};
  weft::Future<> via_when_all = weft::host_spawn(weft::TaskSingle(weft::when_all(group, 2)), Dependent{&ran});
  CHECK_THROWS_WITH_AS(weft::wait(sched), "task failed on purpose", std::runtime_error);
  CHECK(ran.load() == 1);  // only `fine` ran
  CHECK_THROWS_WITH_AS(bad.get(), "task failed on purpose", std::runtime_error);
  CHECK_THROWS_WITH_AS(direct.get(), "task failed on purpose", std::runtime_error);
  CHECK_THROWS_WITH_AS(via_when_all.get(), "task failed on purpose", std::runtime_error);
  CHECK_NOTHROW(fine.get());
  // The error was collected: the scheduler carries on.
  weft::host_spawn(weft::TaskSingle(sched), Dependent{&ran});
  CHECK_NOTHROW(weft::wait(sched));
  CHECK(ran.load() == 2);
}

namespace {

// A child task whose result is `value`, or which fails when `message` is set.
struct Child {
  using value_type = int;
  int value = 0;
  const char* message = nullptr;
  void operator()(weft::TaskMember&, int& out) const {
    if (message != nullptr) throw std::runtime_error(message);
    out = value;
  }
};

// Taskflow's RuntimeAsyncTask scenario in Kokkos' style: spawn a child,
// respawn on it, and on the second run catch its failure (or not).
struct CatchingParent {
  using value_type = int;
  weft::TaskScheduler sched;
  bool catches = true;
  std::atomic<int>* runs;
  weft::Future<int> child = {};
  void operator()(weft::TaskMember&, int& out) {
    runs->fetch_add(1);
    if (child.is_null()) {
      child = weft::task_spawn(weft::TaskSingle(sched), Child{0, "child failed on purpose"});
      weft::TaskScheduler::respawn(this, child);
      return;
    }
    if (!catches) {
      out = child.get();  // rethrows, and this task fails with the child's error
      return;
    }
    try {
      out = child.get();
    } catch (const std::runtime_error&) {
      out = -1;  // the fallback
    }
  }
};

}  // namespace

TEST_CASE(
    "TaskScheduler.a_parent_respawned_on_a_failed_child_catches_its_error_and_returns_a_fallback.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  std::atomic<int> runs{0};
  weft::Future<int> parent = weft::host_spawn(weft::TaskSingle(sched), CatchingParent{sched, true, &runs});
  REQUIRE_FALSE(parent.is_null());
  // The parent's get() observed the child's failure: nothing left to report.
  CHECK_NOTHROW(weft::wait(sched));
  CHECK(runs.load() == 2);
  CHECK(parent.get() == -1);
}

TEST_CASE("TaskScheduler.a_parent_that_does_not_catch_fails_with_its_childs_error.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  std::atomic<int> runs{0};
  weft::Future<int> parent = weft::host_spawn(weft::TaskSingle(sched), CatchingParent{sched, false, &runs});
  // The parent ran again, saw the failure and let it through: its own failure.
  CHECK_THROWS_WITH_AS(weft::wait(sched), "child failed on purpose", std::runtime_error);
  CHECK(runs.load() == 2);
  CHECK_THROWS_WITH_AS(parent.get(), "child failed on purpose", std::runtime_error);
}

TEST_CASE("TaskScheduler.a_parent_respawned_on_a_when_all_runs_again_when_a_child_fails.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  // Four children, the third of which fails; the parent inspects each and
  // adds up the results of those that succeeded.
  struct Parent {
    using value_type = int;
    weft::TaskScheduler sched;
    int* failures;
    weft::Future<int> children[4] = {};
    void operator()(weft::TaskMember&, int& out) {
      if (children[0].is_null()) {
        for (int i = 0; i < 4; ++i) {
          children[i] = weft::task_spawn(weft::TaskSingle(sched),
                                         Child{10 * (i + 1), i == 2 ? "the third child failed" : nullptr});
        }
        weft::TaskScheduler::respawn(this, sched.when_all(children, 4));
        return;
      }
      out = 0;
      for (const weft::Future<int>& child : children) {
        try {
          out += child.get();
        } catch (const std::runtime_error& e) {
          CHECK(std::string(e.what()) == "the third child failed");
          ++*failures;
        }
      }
    }
  };
  int failures = 0;
  weft::Future<int> parent = weft::host_spawn(weft::TaskSingle(sched), Parent{sched, &failures});
  CHECK_NOTHROW(weft::wait(sched));
  CHECK(parent.get() == 10 + 20 + 40);
  CHECK(failures == 1);
}

TEST_CASE(
    "TaskScheduler.a_task_spawned_after_a_failed_task_does_not_run_even_when_its_parent_respawned_on_it."
    "2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  std::atomic<int> ran{0};
  struct Counter {
    using value_type = int;
    std::atomic<int>* ran;
    void operator()(weft::TaskMember&, int& out) const { out = ran->fetch_add(1) + 1; }
  };
  struct Parent {
    using value_type = int;
    weft::TaskScheduler sched;
    std::atomic<int>* ran;
    weft::Future<int> after = {};
    void operator()(weft::TaskMember&, int& out) {
      if (after.is_null()) {
        weft::Future<int> child = weft::task_spawn(weft::TaskSingle(sched), Child{0, "predecessor failed"});
        // Spawned after the child: it does not run if the child fails.
        after = weft::task_spawn(weft::TaskSingle(child), Counter{ran});
        weft::TaskScheduler::respawn(this, after);
        return;
      }
      try {
        out = after.get();
      } catch (const std::runtime_error&) {
        out = -1;
      }
    }
  };
  weft::Future<int> parent = weft::host_spawn(weft::TaskSingle(sched), Parent{sched, &ran});
  // The parent observed the failure of `after`, not that of the child
  // (whose future it dropped): wait() reports the child's.
  CHECK_THROWS_WITH_AS(weft::wait(sched), "predecessor failed", std::runtime_error);
  CHECK(ran.load() == 0);
  CHECK(parent.get() == -1);
}

TEST_CASE("TaskScheduler.wait_rethrows_only_failures_no_get_observed.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  sched.track_memory(true);

  // Unobserved: wait() reports it, once; get() still rethrows it afterwards.
  weft::Future<> unobserved = weft::host_spawn(weft::TaskSingle(sched), Thrower{"nobody looked"});
  CHECK_THROWS_WITH_AS(weft::wait(sched), "nobody looked", std::runtime_error);
  CHECK_THROWS_WITH_AS(unobserved.get(), "nobody looked", std::runtime_error);
  CHECK_NOTHROW(weft::wait(sched));

  // Observed by get() before the wait: not reported again.
  weft::Future<> observed = weft::host_spawn(weft::TaskSingle(sched), Thrower{"seen by get"});
  CHECK_THROWS_WITH_AS(observed.get(), "seen by get", std::runtime_error);
  CHECK_NOTHROW(weft::wait(sched));

  // A failure whose future was dropped is reported, even after another
  // failure that get() observed.
  weft::Future<> first = weft::host_spawn(weft::TaskSingle(sched), Thrower{"seen first"});
  CHECK_THROWS_AS(first.get(), std::runtime_error);
  weft::host_spawn(weft::TaskSingle(sched), Thrower{"future dropped"});
  CHECK_THROWS_WITH_AS(weft::wait(sched), "future dropped", std::runtime_error);
  CHECK_NOTHROW(weft::wait(sched));

  // A reported failure's block goes back with its last future.
  unobserved = weft::Future<>();
  observed = weft::Future<>();
  first = weft::Future<>();
  CHECK(sched.live_blocks() == 0);
}

TEST_CASE("TaskScheduler.misuse_is_reported") {
  weft::Executor executor(weft::test::cpu_only(1));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  struct NotMine {
    void operator()(weft::TaskMember&) {
      NotMine someone_else;
      weft::TaskScheduler::respawn(&someone_else, weft::TaskScheduler{});
    }
  };
  weft::Future<> f = weft::host_spawn(weft::TaskSingle(sched), NotMine{});
  CHECK_THROWS_WITH_AS(weft::wait(sched), doctest::Contains("passing `this`"), std::logic_error);
  struct Twice {
    void operator()(weft::TaskMember&) {
      weft::TaskScheduler::respawn(this, weft::TaskScheduler{});
      weft::TaskScheduler::respawn(this, weft::TaskScheduler{});
    }
  };
  weft::host_spawn(weft::TaskSingle(sched), Twice{});
  CHECK_THROWS_WITH_AS(weft::wait(sched), doctest::Contains("twice"), std::logic_error);
  struct WaitsOnItself {
    weft::TaskScheduler sched;
    void operator()(weft::TaskMember&) { weft::wait(sched); }
  };
  weft::host_spawn(weft::TaskSingle(sched), WaitsOnItself{sched});
  CHECK_THROWS_WITH_AS(weft::wait(sched), doctest::Contains("own tasks"), std::logic_error);
  CHECK_THROWS_AS(weft::task_spawn(weft::TaskSingle(sched), NotMine{}), std::logic_error);
  CHECK_THROWS_WITH_AS(
      weft::host_spawn(weft::TaskSingle(sched, weft::TaskPriority::Regular, weft::Domain::Gpu), NotMine{}),
      doctest::Contains("GPU-priority workers"), std::logic_error);
  weft::TaskScheduler null_scheduler;
  CHECK_THROWS_AS(weft::TaskSingle(null_scheduler), std::logic_error);
  CHECK(null_scheduler.memory() == nullptr);
  CHECK(sched.memory() == &pool);
}

TEST_CASE("TaskScheduler.respawn_can_take_over_the_dependence_future") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  sched.track_memory(true);
  struct Child {
    using value_type = int;
    void operator()(weft::TaskMember&, int& out) const { out = 42; }
  };
  struct Parent {
    using value_type = int;
    weft::TaskScheduler sched;
    weft::Future<int> child;
    bool* moved_from_is_null;
    bool* kept_after_a_refused_request;
    void operator()(weft::TaskMember&, int& out) {
      if (!child.is_null()) {
        out = child.get() + 1;
        return;
      }
      child = weft::task_spawn(weft::TaskSingle(sched), Child{});
      weft::Future<int> dependence = child;
      weft::TaskScheduler::respawn(this, std::move(dependence));
      *moved_from_is_null = dependence.is_null();
      // A second request is refused, and the future it was given keeps
      // its reference.
      weft::Future<int> again = child;
      try {
        weft::TaskScheduler::respawn(this, std::move(again));
      } catch (const std::logic_error&) {
        *kept_after_a_refused_request = again == child;
      }
    }
  };
  bool moved_from_is_null = false, kept = false;
  {
    weft::Future<int> f =
        weft::host_spawn(weft::TaskSingle(sched), Parent{sched, {}, &moved_from_is_null, &kept});
    REQUIRE_FALSE(f.is_null());
    weft::wait(sched);
    CHECK(f.get() == 43);
  }
  CHECK(moved_from_is_null);
  CHECK(kept);
  // Every block went back: the moved reference was neither lost nor
  // released twice.
  CHECK(sched.live_blocks() == 0);
}

TEST_CASE("TaskScheduler.gpu_domain_tasks_run_on_gpu_workers.virtual_devices") {
  weft::Executor executor(weft::test::with_virtual_devices(2, /*virtual_devices=*/2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  std::atomic<int> wrong{0};
  struct Where {
    std::atomic<int>* wrong;
    weft::Domain expected;
    void operator()(weft::TaskMember& member) {
      if (member.worker().domain() != expected && expected == weft::Domain::Gpu) wrong->fetch_add(1);
      if (member.team_size() != 1) wrong->fetch_add(1);
    }
  };
  for (int i = 0; i < 200; ++i) {
    weft::host_spawn(weft::TaskTeam(sched, weft::TaskPriority::Regular, weft::Domain::Gpu),
                     Where{&wrong, weft::Domain::Gpu});
    weft::host_spawn(weft::TaskSingle(sched), Where{&wrong, weft::Domain::Cpu});
  }
  weft::wait(sched);
  CHECK(wrong.load() == 0);
}

TEST_CASE("TaskScheduler.pool_exhaustion_returns_null_and_recovers.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  // Room for about 32 Fib tasks: fib(20) needs more live at once.
  Pool pool(weft::HostSpace{}, 8192, 64, 1024, 4096);
  weft::TaskScheduler sched(executor, pool);
  weft::Future<long> f = weft::host_spawn(weft::TaskSingle(sched), Fib{sched, 20});
  REQUIRE_FALSE(f.is_null());
  CHECK_THROWS_WITH_AS(weft::wait(sched), doctest::Contains("exhausted"), std::runtime_error);
  CHECK(sched.failed_allocations() > 0);
  CHECK_THROWS_AS(f.get(), std::runtime_error);
  f = weft::Future<long>();
  // Every block went back; the same scheduler now computes a smaller case.
  CHECK(pool.get_usage_statistics().consumed_blocks == 0);
  weft::Future<long> small = weft::host_spawn(weft::TaskSingle(sched), Fib{sched, 6});
  weft::wait(sched);
  CHECK(small.get() == 8);
}

TEST_CASE("TaskScheduler.nested_waits_and_cached_blocks_all_return_to_the_pool.1thread") {
  // A task that waits for its children with Future::wait runs them inside
  // its own execution on the same worker (which then owns the block cache):
  // the inner tasks use the pool directly, and every block, cached or not,
  // is back in the pool once wait(scheduler) returns.
  weft::Executor executor(weft::test::cpu_only(1));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  struct Waiter {
    using value_type = long;
    weft::TaskScheduler sched;
    void operator()(weft::TaskMember&, long& out) {
      weft::Future<long> parts[8];
      for (long i = 0; i < 8; ++i) parts[i] = weft::task_spawn(weft::TaskSingle(sched), Value<long>{i});
      out = 0;
      for (auto& part : parts) out += part.wait().get();
    }
  };
  for (int round = 0; round < 3; ++round) {
    weft::Future<long> sums[4];
    for (auto& sum : sums) sum = weft::host_spawn(weft::TaskSingle(sched), Waiter{sched});
    weft::wait(sched);
    for (auto& sum : sums) CHECK(sum.get() == 28);
  }
  CHECK(pool.get_usage_statistics().consumed_blocks == 0);
}

TEST_CASE("TaskScheduler.an_exception_between_spawn_and_wait_can_be_caught.2threads") {
  // The scheduler's last copy goes while its tasks still run: it waits for
  // them (and says so on stderr) instead of calling std::terminate, so the
  // exception that left the scope reaches its handler.
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  struct Slow {
    using value_type = int;
    std::atomic<int>* finished;
    void operator()(weft::TaskMember&, int& out) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      out = finished->fetch_add(1) + 1;
    }
  };
  std::atomic<int> finished{0};
  bool caught = false;
  try {
    weft::TaskScheduler sched(executor, pool);
    for (int i = 0; i < 4; ++i) (void)weft::host_spawn(weft::TaskSingle(sched), Slow{&finished});
    throw std::runtime_error("thrown between the spawns and wait(scheduler)");
  } catch (const std::runtime_error&) {
    caught = true;
  }
  CHECK(caught);
  CHECK(finished.load() == 4);  // all ran before the scheduler went
  CHECK(pool.get_usage_statistics().consumed_blocks == 0);
}

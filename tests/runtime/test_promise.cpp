// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Promise<T>: futures completed from outside the task-DAG, waited on like
// std::future, used as task dependences, cancelled through a hook; and the
// self-waits that throw instead of hanging (WaitScope, TaskGroup,
// Executor::wait_for_all).
#include <weft/runtime/promise.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <weft/runtime/task_group.hpp>
#include <weft/runtime/task_scheduler.hpp>
#include <weft/runtime/wait_scope.hpp>
#include "../executor_configs.hpp"
#include "../test_support.hpp"

namespace {

using Pool = weft::MemoryPool<weft::HostSpace>;

void after(int milliseconds) { std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds)); }

// A task whose result is its dependence's value plus one (it is spawned
// after the dependence, so the dependence is complete when it runs).
struct PlusOne {
  using value_type = int;
  weft::Future<int> input;
  void operator()(weft::TaskMember&, int& out) { out = input.get() + 1; }
};

}  // namespace

TEST_CASE("Promise.get_waits_for_a_value_set_on_another_thread") {
  weft::Executor executor(weft::test::cpu_only(1));
  weft::Promise<std::string> promise(executor);
  weft::Future<std::string> future = promise.get_future();
  CHECK_FALSE(future.is_ready());
  std::thread producer([&] {
    after(20);
    promise.set_value("forty-two");
  });
  CHECK(future.get() == "forty-two");
  producer.join();
  CHECK(promise.is_set());
  weft::Future<std::string> second = promise.get_future();  // any number of futures share the result
  CHECK(second.get() == "forty-two");
}

TEST_CASE("Promise.a_thread_waiting_outside_the_pool_sleeps_through_other_completions.2threads") {
  // The executor reports every completion (a chunked loop's end, a worker
  // running out of work, ...) to the threads blocked in its wait_until().
  // A future's waiter sleeps on its own promise instead: woken by each of
  // those, it would take a core from the workers every time.
  weft::Executor executor(weft::test::cpu_only(2));
  weft::Promise<int> promise(executor);
  weft::Future<int> future = promise.get_future();
  constexpr int kOtherCompletions = 200;
  weft::TaskGroup group(executor);
  group.run([&] {
    for (int i = 0; i < kOtherCompletions; ++i) {
      executor.notify_completion();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    promise.set_value(42);
  });
  const long sleeps_before = weft::test::times_this_thread_slept();
  CHECK(future.get() == 42);
  const long sleeps_after = weft::test::times_this_thread_slept();
  group.wait();
  if (sleeps_before < 0 || sleeps_after < 0) {
    MESSAGE("skipped the count: /proc/thread-self/status is not readable here");
    return;
  }
  CHECK(sleeps_after - sleeps_before < kOtherCompletions / 10);
}

TEST_CASE("Promise.errors_cancellation_and_broken_promises_reach_get") {
  weft::Executor executor(weft::test::cpu_only(1));
  weft::Promise<int> failing(executor);
  failing.set_exception(std::make_exception_ptr(std::runtime_error("the producer failed")));
  CHECK_THROWS_WITH_AS(failing.get_future().get(), "the producer failed", std::runtime_error);

  weft::Promise<> cancelled(executor);
  weft::Future<> f = cancelled.get_future();
  cancelled.set_cancelled("the request was withdrawn");
  CHECK(f.is_cancelled());
  CHECK_THROWS_WITH_AS(f.get(), "the request was withdrawn", weft::Cancelled);

  weft::Future<int> orphan;
  {
    weft::Promise<int> broken(executor);
    orphan = broken.get_future();
  }
  CHECK_THROWS_WITH_AS(orphan.get(), doctest::Contains("broken promise"), std::logic_error);
}

TEST_CASE("Promise.misuse_is_reported_and_changes_nothing") {
  weft::Executor executor(weft::test::cpu_only(1));
  weft::Promise<int> promise(executor);
  promise.set_value(1);
  CHECK_THROWS_WITH_AS(promise.set_value(2), doctest::Contains("already set"), std::logic_error);
  CHECK_THROWS_WITH_AS(promise.set_cancelled(), doctest::Contains("already set"), std::logic_error);
  CHECK(promise.get_future().get() == 1);
  CHECK_THROWS_AS(promise.set_exception(nullptr), std::invalid_argument);
  weft::Promise<int> moved = std::move(promise);
  CHECK_THROWS_WITH_AS(promise.get_future(), doctest::Contains("moved from"), std::logic_error);  // NOLINT
  CHECK(moved.get_future().get() == 1);
}

TEST_CASE("Promise.a_task_respawns_on_a_promise_and_one_is_spawned_after_it.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  weft::Promise<int> promise(executor);
  weft::Future<int> input = promise.get_future();

  // A task waiting for the promise by respawning on it, as a task must.
  struct Doubler {
    using value_type = int;
    weft::Future<int> input;
    bool waited = false;
    void operator()(weft::TaskMember&, int& out) {
      if (!waited) {
        waited = true;
        weft::TaskScheduler::respawn(this, input);
        return;
      }
      out = 2 * input.get();
    }
  };
  weft::Future<int> doubled = weft::host_spawn(weft::TaskSingle(sched), Doubler{input});
  weft::Future<int> plus_one = weft::host_spawn(weft::TaskSingle(sched, input), PlusOne{input});
  weft::Future<> both = sched.when_all(std::vector<weft::Future<int>>{doubled, input}.data(), 2);
  after(10);
  CHECK_FALSE(doubled.is_ready());
  CHECK_FALSE(plus_one.is_ready());
  promise.set_value(20);
  weft::wait(sched);
  CHECK(doubled.get() == 40);
  CHECK(plus_one.get() == 21);
  CHECK_NOTHROW(both.get());

  // A task after a failed promise fails with its error, without running.
  weft::Promise<int> failing(executor);
  weft::Future<int> never = weft::host_spawn(weft::TaskSingle(sched, failing.get_future()), PlusOne{});
  failing.set_exception(std::make_exception_ptr(std::runtime_error("no input")));
  CHECK_THROWS_WITH_AS(weft::wait(sched), "no input", std::runtime_error);
  CHECK_THROWS_WITH_AS(never.get(), "no input", std::runtime_error);
}

TEST_CASE("Promise.futures_without_a_scheduler_need_one_named") {
  weft::Executor executor(weft::test::cpu_only(1));
  weft::Promise<int> promise(executor);
  weft::Future<int> f = promise.get_future();
  CHECK_THROWS_WITH_AS(weft::TaskSingle(f), doctest::Contains("TaskSingle(scheduler, future)"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(weft::when_all(&f, 1), doctest::Contains("scheduler.when_all"), std::invalid_argument);
  promise.set_value(0);
}

TEST_CASE("Promise.get_inside_a_task_waits_for_other_work_but_not_for_its_own_scheduler.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  Pool pool(weft::HostSpace{}, 1u << 20);
  weft::TaskScheduler sched(executor, pool);
  weft::Promise<int> promise(executor);

  // A promise set from another thread: get() inside a task waits (helping).
  struct Reader {
    using value_type = int;
    weft::Future<int> input;
    void operator()(weft::TaskMember&, int& out) { out = input.get(); }
  };
  weft::Future<int> read = weft::host_spawn(weft::TaskSingle(sched), Reader{promise.get_future()});
  std::thread producer([&] {
    after(10);
    promise.set_value(5);
  });
  weft::wait(sched);
  producer.join();
  CHECK(read.get() == 5);

  // An incomplete task of the same scheduler: an error, naming respawn.
  struct Gate {
    std::atomic<bool>* open;
    void operator()(weft::TaskMember&) {
      if (!open->load()) weft::TaskScheduler::respawn(this, weft::TaskScheduler{}, weft::TaskPriority::Low);
    }
  };
  struct Impatient {
    weft::Future<> gate;
    void operator()(weft::TaskMember&) { gate.get(); }
  };
  std::atomic<bool> open{false};
  weft::Future<> gate = weft::host_spawn(weft::TaskSingle(sched), Gate{&open});
  weft::Future<> impatient = weft::host_spawn(weft::TaskSingle(sched), Impatient{gate});
  impatient.wait();
  open = true;
  CHECK_THROWS_WITH_AS(weft::wait(sched), doctest::Contains("respawn(this, future)"), std::logic_error);
  CHECK_THROWS_WITH_AS(impatient.get(), doctest::Contains("not complete"), std::logic_error);
}

TEST_CASE("Promise.on_cancel_runs_once_before_the_promise_is_set") {
  weft::Executor executor(weft::test::cpu_only(1));
  struct Record {
    std::atomic<int> calls{0};
  };
  const auto hook = [](void* context) noexcept { static_cast<Record*>(context)->calls.fetch_add(1); };

  auto record = std::make_shared<Record>();
  weft::Promise<> promise(executor);
  promise.on_cancel(hook, record);
  weft::Future<> f = promise.get_future();
  CHECK_FALSE(promise.cancel_requested());
  f.cancel();
  f.cancel();
  CHECK(promise.cancel_requested());
  CHECK(record->calls.load() == 1);
  CHECK(record.use_count() == 1);  // the promise let go of its context
  promise.set_value();             // the producer may still finish normally
  CHECK_NOTHROW(f.get());

  // Registered after the cancellation: it runs at once.
  auto late = std::make_shared<Record>();
  weft::Promise<> second(executor);
  second.get_future().cancel();
  second.on_cancel(hook, late);
  CHECK(late->calls.load() == 1);
  second.set_cancelled();

  // Set first: the hook never runs, and its context is let go.
  auto unused = std::make_shared<Record>();
  weft::Promise<> third(executor);
  third.on_cancel(hook, unused);
  third.set_value();
  CHECK(unused.use_count() == 1);
  third.get_future().cancel();
  CHECK(unused->calls.load() == 0);
  CHECK_THROWS_AS(third.on_cancel(hook, unused), std::logic_error);
}

TEST_CASE("Promise.cancel_and_set_race_without_losing_or_doubling_the_hook.2threads") {
  weft::Executor executor(weft::test::cpu_only(1));
  for (int round = 0; round < 2000; ++round) {
    auto fired = std::make_shared<std::atomic<int>>(0);
    weft::Promise<> promise(executor);
    promise.on_cancel([](void* c) noexcept { static_cast<std::atomic<int>*>(c)->fetch_add(1); }, fired);
    weft::Future<> f = promise.get_future();
    std::thread canceller([&] { f.cancel(); });
    promise.set_value();
    canceller.join();
    REQUIRE(fired->load() <= 1);      // never twice
    REQUIRE(fired.use_count() == 1);  // and the context is always let go
  }
}

TEST_CASE("WaitScope.waiting_for_a_scoped_promise_from_inside_the_scope_throws") {
  weft::Executor executor(weft::test::cpu_only(1));
  weft::WaitScope scope("waiting for this from inside it would never return");
  weft::Promise<> promise(executor, &scope);
  weft::Future<> f = promise.get_future();
  {
    weft::WaitScope::Inside inside(&scope);
    CHECK(scope.entered());
    CHECK_THROWS_WITH_AS(f.wait(), "waiting for this from inside it would never return", std::logic_error);
    CHECK_THROWS_AS(f.get(), std::logic_error);
    weft::WaitScope other("other");
    weft::WaitScope::Inside nested(&other);
    CHECK(scope.entered());  // still inside the outer one
  }
  CHECK_FALSE(scope.entered());
  promise.set_value();
  CHECK_NOTHROW(f.get());
}

TEST_CASE("TaskGroup.a_job_waiting_on_its_own_group_throws_instead_of_hanging.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  weft::TaskGroup group(executor);
  weft::TaskGroup other(executor);
  std::atomic<int> ran{0};
  group.run([&] {
    group.run([&] { ran.fetch_add(1); });  // adding work from inside is fine
    other.run([&] { ran.fetch_add(1); });
    other.wait();  // so is waiting for another group
    group.wait();  // but not for its own
  });
  CHECK_THROWS_WITH_AS(group.wait(), doctest::Contains("job of the same group"), std::logic_error);
  CHECK(ran.load() == 2);
}

TEST_CASE("Executor.wait_for_all_inside_a_job_throws_instead_of_hanging.1thread") {
  weft::Executor executor(weft::test::cpu_only(1));
  weft::TaskGroup group(executor);
  group.run([&] { executor.wait_for_all(); });
  CHECK_THROWS_WITH_AS(group.wait(), doctest::Contains("would wait for itself"), std::logic_error);
  executor.wait_for_all();  // outside, it waits as usual
}

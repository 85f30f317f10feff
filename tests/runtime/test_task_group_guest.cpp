// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A thread outside the pool that waits for its TaskGroup runs the group's
// callables itself, as a guest of the executor, while the workers steal
// from it; what it leaves behind goes to the workers, and while observers
// watch it runs nothing.
#include <weft/runtime/executor.hpp>
#include <weft/runtime/observer.hpp>
#include <weft/runtime/task_group.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "../executor_configs.hpp"

namespace {

// Keeps the executor's only worker busy until released (or, should the
// waiting thread never run anything itself, until a deadline, so that the
// test fails instead of hanging).
class BusyWorker {
 public:
  // Whether the waiting thread can run anything: not while observers (a
  // WEFT_TRACE file, say) watch the executor.
  static bool guests_run(const weft::Executor& executor) {
    if (executor.observers() == nullptr) return true;
    MESSAGE("skipped: observers are attached (WEFT_TRACE or WEFT_NVTX), so the workers run everything");
    return false;
  }
  explicit BusyWorker(weft::TaskGroup& group) {
    group.run([this] {
      started_.store(true);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!released_.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    });
    while (!started_.load()) std::this_thread::yield();
  }
  void release() { released_.store(true); }

 private:
  std::atomic<bool> started_{false};
  std::atomic<bool> released_{false};
};

struct Seen {
  std::thread::id thread;
  int index = -1;
  bool guest = false;
  weft::Executor* executor = nullptr;
};

Seen where_am_i() {
  Seen seen;
  seen.thread = std::this_thread::get_id();
  if (const weft::WorkerContext* worker = weft::Executor::current_worker()) {
    seen.index = worker->index();
    seen.guest = worker->guest();
    seen.executor = &worker->executor();
  }
  return seen;
}

// Counts the task-group jobs observers are told about.
class JobCounter : public weft::Observer {
 public:
  void on_node_begin(const weft::NodeEvent& e) noexcept override {
    jobs.fetch_add(1);
    if (e.worker < 0 || e.worker >= workers) outside_workers.fetch_add(1);
  }
  int workers = 0;
  std::atomic<int> jobs{0};
  std::atomic<int> outside_workers{0};
};

}  // namespace

TEST_CASE("TaskGroup.the_waiting_thread_runs_its_callables_while_the_workers_are_busy") {
  weft::Executor executor(weft::test::cpu_only(1));
  if (!BusyWorker::guests_run(executor)) return;
  weft::TaskGroup blocker(executor);
  BusyWorker busy(blocker);

  constexpr int kCallables = 100;
  std::vector<Seen> seen(kCallables);
  weft::TaskGroup group(executor);
  for (int i = 0; i < kCallables; ++i)
    group.run([&seen, i] { seen[static_cast<std::size_t>(i)] = where_am_i(); });
  group.wait();  // the only worker is busy: this thread ran them all
  busy.release();
  blocker.wait();

  for (const Seen& s : seen) {
    CHECK(s.thread == std::this_thread::get_id());
    CHECK(s.guest);
    CHECK(s.index >= executor.worker_count());
    CHECK(s.executor == &executor);  // nested work from a callable stays on this executor
  }
  int guest_jobs = 0;
  for (const weft::WorkerStats& s : executor.stats()) {
    if (s.guest) guest_jobs += static_cast<int>(s.jobs_run);
  }
  CHECK(guest_jobs == kCallables);
  CHECK(weft::Executor::current_worker() == nullptr);  // a guest only while it runs a job
}

TEST_CASE("TaskGroup.a_callable_on_the_waiting_thread_waits_for_a_nested_group_and_rethrows") {
  weft::Executor executor(weft::test::cpu_only(1));
  if (!BusyWorker::guests_run(executor)) return;
  weft::TaskGroup blocker(executor);
  BusyWorker busy(blocker);

  std::atomic<int> inner{0};
  weft::TaskGroup group(executor);
  group.run([&] {
    weft::TaskGroup nested(executor);  // from a guest: pushed onto the guest, run by its wait
    for (int i = 0; i < 10; ++i) nested.run([&] { inner.fetch_add(1); });
    nested.wait();
    executor.wait_for_all();  // inside a job: refused, and the group rethrows it
  });
  CHECK_THROWS_WITH_AS(group.wait(), doctest::Contains("from inside a job"), std::logic_error);
  CHECK(inner.load() == 10);
  busy.release();
  blocker.wait();
}

TEST_CASE("TaskGroup.work_left_on_the_guest_goes_to_the_workers") {
  weft::Executor executor(weft::test::cpu_only(1));
  if (!BusyWorker::guests_run(executor)) return;
  weft::TaskGroup blocker(executor);
  BusyWorker busy(blocker);

  // A callable on the waiting thread submits a job and returns; the group is
  // then done, and the job, still on the guest's deque, must reach a worker.
  struct Leftover : weft::Job {
    Leftover() : weft::Job(&Leftover::run) {}
    static void run(weft::Job& self, weft::WorkerContext& worker) {
      auto& job = static_cast<Leftover&>(self);
      job.on_guest.store(worker.guest());
      job.ran.store(true);
    }
    std::atomic<bool> ran{false};
    std::atomic<bool> on_guest{true};
  } leftover;
  weft::TaskGroup group(executor);
  group.run([&] { executor.submit(&leftover); });
  group.wait();
  busy.release();
  blocker.wait();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!leftover.ran.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  CHECK(leftover.ran.load());
  CHECK_FALSE(leftover.on_guest.load());
}

TEST_CASE("TaskGroup.while_observed_the_workers_run_every_callable.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  auto counter = std::make_shared<JobCounter>();
  counter->workers = executor.worker_count();
  executor.attach(counter);
  std::atomic<int> on_guest{0};
  {
    weft::TaskGroup group(executor);
    for (int i = 0; i < 1000; ++i) {
      group.run([&] {
        if (weft::Executor::current_worker()->guest()) on_guest.fetch_add(1);
      });
    }
    group.wait();
  }
  executor.detach(counter);
  CHECK(on_guest.load() == 0);
  CHECK(counter->jobs.load() == 1000);
  CHECK(counter->outside_workers.load() == 0);
}

TEST_CASE("TaskGroup.run_from_one_thread_waited_for_and_destroyed_on_another.2threads") {
  // The guest's borrower never waits: the workers steal everything, and the
  // thread that destroys the group gives the guest back.
  weft::Executor executor(weft::test::cpu_only(2));
  std::atomic<int> count{0};
  for (int round = 0; round < 50; ++round) {
    auto group = std::make_unique<weft::TaskGroup>(executor);
    std::thread producer([&] {
      for (int i = 0; i < 100; ++i) group->run([&] { count.fetch_add(1); });
    });
    producer.join();
    group->wait();
    group.reset();
  }
  CHECK(count.load() == 50 * 100);
  // Every guest went back: this thread can borrow them all again, and no more.
  std::vector<weft::WorkerContext*> borrowed;
  for (int g = 0; g < executor.guest_count(); ++g) borrowed.push_back(executor.borrow_guest());
  CHECK(std::count(borrowed.begin(), borrowed.end(), nullptr) == 0);
  CHECK(executor.borrow_guest() == nullptr);
  for (weft::WorkerContext* guest : borrowed) {
    if (guest != nullptr) executor.return_guest(*guest);
  }
  CHECK(executor.guest_count() == weft::ExecutorConfig{}.guests);
}

TEST_CASE("TaskGroup.without_guests_the_workers_run_every_callable.2threads") {
  weft::ExecutorConfig config = weft::test::cpu_only(2);
  config.guests = 0;
  weft::Executor executor(config);
  CHECK(executor.guest_count() == 0);
  std::atomic<int> on_workers{0};
  weft::TaskGroup group(executor);
  for (int i = 0; i < 1000; ++i) {
    group.run([&] {
      const weft::WorkerContext* self = weft::Executor::current_worker();
      if (self != nullptr && !self->guest()) on_workers.fetch_add(1);
    });
  }
  group.wait();
  CHECK(on_workers.load() == 1000);

  config.guests = weft::kMaxGuests + 1;
  CHECK_THROWS_WITH_AS(weft::Executor{config}, doctest::Contains("guests must be from 0 to 64, got 65"),
                       std::invalid_argument);
  config.guests = -1;
  CHECK_THROWS_AS(weft::Executor{config}, std::invalid_argument);
}

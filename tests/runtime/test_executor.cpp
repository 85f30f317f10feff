// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Executor: worker domains, GPU-priority work on virtual devices, steal
// strategies, task groups, exceptions, sleeping and waking, statistics.
#include <weft/runtime/executor.hpp>
#include <weft/runtime/fence.hpp>
#include <weft/runtime/task_group.hpp>
#include <weft/runtime/topology.hpp>

#include <doctest/doctest.h>

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>
#include "../executor_configs.hpp"
#include "../test_support.hpp"

namespace {

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

TEST_CASE("Executor.worker_counts_follow_the_config") {
  weft::ExecutorConfig cfg;
  cfg.cpu_workers = 3;
  cfg.virtual_devices = 2;
  cfg.use_cuda = false;
  weft::Executor executor(cfg);
  CHECK(executor.cpu_worker_count() == 3);
  CHECK(executor.gpu_worker_count() == 3);  // one more than the devices, as in Ripple
  CHECK(executor.devices().device_count() == 2);
  CHECK(executor.devices().uses_virtual_devices());

  weft::ExecutorConfig none;
  none.cpu_workers = 0;
  none.gpu_workers = 0;
  CHECK_THROWS_AS(weft::Executor{none}, std::invalid_argument);
}

TEST_CASE("Executor.gpu_jobs_run_only_on_gpu_workers.virtual_devices") {
  weft::ExecutorConfig cfg;
  cfg.cpu_workers = 2;
  cfg.virtual_devices = 2;
  cfg.use_cuda = false;
  weft::Executor executor(cfg);
  weft::TaskGroup group(executor);
  std::atomic<int> wrong_domain{0}, gpu_ran{0}, cpu_ran{0};
  for (int i = 0; i < 2000; ++i) {
    group.run(
        [&] {
          auto* w = executor.this_worker();
          if (w == nullptr || w->domain() != weft::Domain::Gpu) wrong_domain.fetch_add(1);
          gpu_ran.fetch_add(1);
        },
        weft::Domain::Gpu);
    group.run([&] { cpu_ran.fetch_add(1); });
  }
  group.wait();
  CHECK(wrong_domain.load() == 0);
  CHECK(gpu_ran.load() == 2000);
  CHECK(cpu_ran.load() == 2000);
}

TEST_CASE("Executor.cpu_job_hands_gpu_work_to_gpu_workers.virtual_devices") {
  // A CPU worker cannot hold GPU work: it goes to the GPU submission queue.
  weft::ExecutorConfig cfg;
  cfg.cpu_workers = 1;
  cfg.virtual_devices = 1;
  cfg.use_cuda = false;
  weft::Executor executor(cfg);
  weft::TaskGroup group(executor);
  std::atomic<int> on_gpu_worker{0};
  group.run([&] {
    for (int i = 0; i < 100; ++i) {
      group.run(
          [&] {
            if (executor.this_worker()->domain() == weft::Domain::Gpu) on_gpu_worker.fetch_add(1);
          },
          weft::Domain::Gpu);
    }
  });
  group.wait();
  CHECK(on_gpu_worker.load() == 100);
}

TEST_CASE("Executor.gpu_job_without_gpu_workers_is_refused") {
  weft::Executor executor(weft::test::cpu_only(1));
  weft::TaskGroup group(executor);
  CHECK_THROWS_WITH_AS(group.run([] {}, weft::Domain::Gpu), doctest::Contains("GPU-priority workers"),
                       std::logic_error);
  CHECK(group.pending() == 0);
  group.wait();
}

TEST_CASE("Executor.every_steal_strategy_runs_everything.3threads") {
  for (auto strategy :
       {weft::StealStrategy::round_robin, weft::StealStrategy::random, weft::StealStrategy::topological}) {
    CAPTURE(weft::to_string(strategy));
    weft::ExecutorConfig cfg = weft::test::workers_only(3);
    cfg.steal_strategy = strategy;
    cfg.steal_attempts = 2;
    weft::Executor executor(cfg);
    weft::TaskGroup group(executor);
    std::atomic<int> count{0};
    // One job fans out into many from inside a worker, so others must steal.
    group.run([&] {
      for (int i = 0; i < 5000; ++i) group.run([&] { count.fetch_add(1, std::memory_order_relaxed); });
    });
    group.wait();
    CHECK(count.load() == 5000);
    // A worker counts a job just after running it, so the last count may land
    // a moment after wait() returned.
    unsigned long long jobs = 0;
    for (int tries = 0; tries < 1000 && jobs != 5001; ++tries) {
      if (tries > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      jobs = 0;
      for (const weft::WorkerStats& s : executor.stats()) jobs += s.jobs_run;
    }
    CHECK(jobs == 5001);
  }
  CHECK(weft::steal_strategy_from_string("topological") == weft::StealStrategy::topological);
  CHECK_THROWS_AS(weft::steal_strategy_from_string("nearest"), std::invalid_argument);
}

TEST_CASE("Executor.pinned_workers_run_on_their_core") {
  weft::ExecutorConfig cfg = weft::test::cpu_only(2);
  cfg.pin_threads = true;
  weft::Executor executor(cfg);
  // Each worker notes the CPU it runs on; a pinned one must be on its core.
  std::vector<std::atomic<int>> cpu_seen(2);
  for (auto& c : cpu_seen) c = -1;
  weft::TaskGroup group(executor);
  for (int i = 0; i < 200; ++i) {
    group.run([&] {
      const weft::WorkerContext* self = executor.this_worker();
      if (!self->guest()) cpu_seen[static_cast<std::size_t>(self->index())] = sched_getcpu();
    });
  }
  group.wait();
  const weft::Topology& topo = weft::Topology::system();
  int pinned = 0;
  for (const weft::WorkerStats& s : executor.stats()) {
    if (s.guest) continue;  // the main thread, which ran some as a guest
    const int cpu = cpu_seen[static_cast<std::size_t>(s.worker)].load();
    if (s.core < 0 || cpu < 0) continue;  // unpinned (refused, with a warning) or never ran a job
    ++pinned;
    const std::vector<int>& allowed = topo.cores()[static_cast<std::size_t>(s.core)].os_cpus;
    CHECK_MESSAGE(std::find(allowed.begin(), allowed.end(), cpu) != allowed.end(),
                  "worker " << s.worker << " pinned to core " << s.core << " ran on CPU " << cpu);
  }
  MESSAGE(pinned << " worker(s) checked on their pinned core");
}

TEST_CASE("Executor.task_group_rethrows_the_first_exception.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  weft::TaskGroup group(executor);
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i) {
    group.run([&, i] {
      ran.fetch_add(1);
      if (i == 42) throw std::runtime_error("job 42 failed");
    });
  }
  CHECK_THROWS_WITH_AS(group.wait(), "job 42 failed", std::runtime_error);
  CHECK(ran.load() == 100);  // independent jobs all ran
  group.run([&] { ran.fetch_add(1); });
  CHECK_NOTHROW(group.wait());  // the group is reusable once the error was collected
  CHECK(ran.load() == 101);
}

namespace {

// `waits` task-group waits one inside another on the calling worker: each
// level runs the next and waits for it, and the wait runs it on the same
// stack. Records the lowest and highest address of a level's frame.
void nested_waits(weft::Executor& executor, int waits, std::uintptr_t (&stack)[2]) {
  const auto here = reinterpret_cast<std::uintptr_t>(&waits);
  stack[0] = stack[0] == 0 ? here : std::min(stack[0], here);
  stack[1] = std::max(stack[1], here);
  if (waits == 0) return;
  weft::TaskGroup group(executor);
  group.run([&executor, waits, &stack] { nested_waits(executor, waits - 1, stack); });
  group.wait();
}

}  // namespace

TEST_CASE("Executor.waits_nested_past_the_limit_are_refused_before_the_stack_overflows.1thread") {
  weft::Executor executor(weft::test::cpu_only(1));  // one worker: every level on its stack
  weft::TaskGroup outer(executor);
  std::uintptr_t stack[2] = {0, 0};
  outer.run([&] { nested_waits(executor, weft::kMaxNestedWaits, stack); });
  CHECK_NOTHROW(outer.wait());
  MESSAGE("the deepest nesting allowed took ", (stack[1] - stack[0]) / 1024, " KiB of the worker's stack");
  // 50,000 waits deep overflow an 8 MiB stack: the wait past the
  // limit throws, and each level above fails with it.
  outer.run([&] { nested_waits(executor, 50'000, stack); });
  CHECK_THROWS_WITH_AS(outer.wait(), doctest::Contains("TaskGroup::wait: 1000 waits are already nested"),
                       std::logic_error);
  // The refused group is abandoned; the executor goes on as before.
  int ran = 0;
  outer.run([&] { ran = 1; });
  outer.wait();
  CHECK(ran == 1);
}

TEST_CASE("Executor.idle_workers_sleep_and_wake_for_new_work") {
  weft::Executor executor(weft::test::workers_only(2));
  {
    weft::TaskGroup group(executor);
    group.run([] {});
    group.wait();
  }
  // Let the workers run out of spinning and go to sleep.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double idle_cpu = process_cpu_seconds() - before;
  MESSAGE("CPU time used by an idle 2-worker executor over 1 s: " << idle_cpu << " s");
  CHECK(idle_cpu < 0.05);
  unsigned long long sleeps = 0;
  for (const weft::WorkerStats& s : executor.stats()) sleeps += s.sleeps;
  CHECK(sleeps >= 2);

  // Work that arrives after everyone slept still runs, on both workers.
  weft::TaskGroup group(executor);
  std::atomic<int> count{0};
  for (int i = 0; i < 1000; ++i) group.run([&] { count.fetch_add(1); });
  group.wait();
  CHECK(count.load() == 1000);
}

TEST_CASE("Executor.workers_sleep_and_wake_in_a_child_forked_after_an_executor_ran") {
  // A worker going to sleep uses membarrier(2) where Linux offers it
  // (fence.hpp); the kernel keeps that registration per address space, so a
  // forked child must still be able to sleep and be woken. (Skipped under
  // ThreadSanitizer, which neither uses membarrier nor supports threads
  // started after a fork of a threaded process.)
  if (weft::kThreadSanitizer) return;
  {
    weft::Executor parent_executor(weft::test::cpu_only(2));
    weft::TaskGroup group(parent_executor);
    group.run([] {});
    group.wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // its workers sleep
  }
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    alarm(60);  // a lost wake-up kills the child instead of hanging the test
    weft::Executor executor(weft::test::workers_only(2));
    std::atomic<int> count{0};
    // Wait until both workers have gone to sleep (not a fixed time: on a
    // loaded machine their spinning may outlast any), so the first round's
    // work must wake them.
    bool both_slept = false;
    for (int poll = 0; poll < 10000 && !both_slept; ++poll) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      const std::vector<weft::WorkerStats> stats = executor.stats();
      both_slept = stats[0].sleeps > 0 && stats[1].sleeps > 0;
    }
    for (int round = 0; round < 3; ++round) {
      if (round > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // asleep again, likely
      weft::TaskGroup group(executor);
      for (int i = 0; i < 100; ++i) group.run([&] { count.fetch_add(1); });
      group.wait();
    }
    _exit(count.load() == 300 && both_slept ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

// Sanitizers that reserve terabytes of shadow memory make RLIMIT_AS useless.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kShadowMemorySanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool kShadowMemorySanitizer = true;
#else
constexpr bool kShadowMemorySanitizer = false;
#endif
#else
constexpr bool kShadowMemorySanitizer = false;
#endif

namespace {

// Bytes of address space this process has mapped (VmSize).
std::size_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

std::size_t thread_count() {
  const std::filesystem::directory_iterator tasks("/proc/self/task");
  return static_cast<std::size_t>(std::distance(begin(tasks), end(tasks)));
}

}  // namespace

TEST_CASE("Executor.a_worker_thread_that_cannot_start_is_a_system_error_and_the_started_ones_stop") {
  if (kShadowMemorySanitizer) {
    MESSAGE("skipped: this sanitizer's shadow memory leaves no room for an address-space limit");
    return;
  }
  // A child process whose address space has room for a few thread stacks
  // only asks for 1000 workers. The Executor must throw std::system_error
  // (not call std::terminate) with no worker left running, and the process
  // must go on working. The child reports through a pipe and its exit code.
  constexpr int workers = 1000;
  int report_pipe[2];
  REQUIRE(pipe(report_pipe) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(report_pipe[0]);
    alarm(60);  // a hang kills the child instead of the test run
    // 8 MiB thread stacks whatever ulimit -s says, and room for a few.
    pthread_attr_t stacks;
    pthread_attr_init(&stacks);
    pthread_attr_setstacksize(&stacks, std::size_t{8} << 20);
    pthread_setattr_default_np(&stacks);
    rlimit usual{};
    getrlimit(RLIMIT_AS, &usual);
    rlimit tight = usual;
    tight.rlim_cur = mapped_bytes() + (std::size_t{64} << 20);
    int exit_code = 0;
    std::string report = "no exception";
    if (setrlimit(RLIMIT_AS, &tight) != 0) {
      report = "setrlimit failed";
      exit_code = 5;
    } else {
      try {
        weft::Executor executor(weft::test::cpu_only(workers));
        exit_code = 2;
      } catch (const std::system_error& e) {
        report = std::to_string(e.code().value()) + "\n" + e.what();
      } catch (const std::exception& e) {
        report = std::string("not a std::system_error: ") + e.what();
        exit_code = 3;
      }
      setrlimit(RLIMIT_AS, &usual);
    }
    if (exit_code == 0 && thread_count() != 1) exit_code = 4;  // a worker was left running
    if (exit_code == 0) {
      weft::Executor executor(weft::test::cpu_only(2));
      weft::TaskGroup group(executor);
      std::atomic<int> count{0};
      for (int i = 0; i < 100; ++i) group.run([&] { count.fetch_add(1); });
      group.wait();
      if (count.load() != 100) exit_code = 6;
    }
    (void)!write(report_pipe[1], report.data(), report.size());
    _exit(exit_code);
  }
  close(report_pipe[1]);
  std::string report;
  char buffer[256];
  for (ssize_t n; (n = read(report_pipe[0], buffer, sizeof buffer)) > 0;)
    report.append(buffer, static_cast<std::size_t>(n));
  close(report_pipe[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  INFO("child report: " << report);
  REQUIRE(WIFEXITED(status));  // a signal here (SIGABRT) is the std::terminate this test is about
  CHECK(WEXITSTATUS(status) == 0);
  const std::size_t newline = report.find('\n');
  REQUIRE(newline != std::string::npos);
  CHECK(std::stoi(report.substr(0, newline)) == EAGAIN);  // the error code of the failed start, kept
  const std::string what = report.substr(newline + 1);
  CHECK(what.find("could not start all 1000 worker threads") != std::string::npos);
  const std::size_t started_at = what.find("(started ");
  REQUIRE(started_at != std::string::npos);
  const int started = std::stoi(what.substr(started_at + 9));
  CHECK(started >= 0);
  CHECK(started < workers);
}

TEST_CASE("Executor.wait_for_all_and_destructor_finish_outstanding_work") {
  std::atomic<int> count{0};
  {
    weft::Executor executor(weft::test::cpu_only(2));
    auto group = std::make_unique<weft::TaskGroup>(executor);
    for (int i = 0; i < 500; ++i) {
      group->run([&] {
        std::this_thread::sleep_for(std::chrono::microseconds(10));
        count.fetch_add(1);
      });
    }
    executor.wait_for_all();
    CHECK(count.load() == 500);
    group.reset();
    for (int i = 0; i < 100; ++i) {
      struct Counting : weft::Job {
        explicit Counting(std::atomic<int>& c) : Job(&Counting::run), counter(&c) {}
        static void run(weft::Job& self, weft::WorkerContext&) {
          auto* me = static_cast<Counting*>(&self);
          me->counter->fetch_add(1);
          delete me;
        }
        std::atomic<int>* counter;
      };
      executor.submit(new Counting(count));  // raw jobs: the destructor still runs them
    }
  }
  CHECK(count.load() == 600);
}

// Runs a job that reports `completions` unrelated completions 200 us apart,
// calls wait() on the calling thread (outside the pool) and returns how
// often that thread slept meanwhile (-1: it cannot tell). Another thread
// runs the job into the group, so a worker runs it: this one only waits
// (a group's waiting thread runs the callables it ran itself).
template <class Wait>
long sleeps_while_waiting_through_completions(weft::Executor& executor, weft::TaskGroup& group,
                                              int completions, Wait wait) {
  std::thread([&] {
    group.run([&executor, completions] {
      for (int i = 0; i < completions; ++i) {
        executor.notify_completion();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
  }).join();
  const long before = weft::test::times_this_thread_slept();
  wait();
  const long after = weft::test::times_this_thread_slept();
  return before < 0 || after < 0 ? -1 : after - before;
}

TEST_CASE("Executor.waits_for_runs_outside_the_pool_sleep_through_other_completions.2threads") {
  // notify_completion() wakes every thread blocked in wait_until() (a
  // chunked loop's end, a worker running out of work, ...). wait_for_all()
  // and TaskGroup::wait() wait for a run's end, and sleep until one comes:
  // woken by each of the others, they would take a core from the workers.
  constexpr int kOtherCompletions = 200;
  weft::Executor executor(weft::test::cpu_only(2));
  weft::TaskGroup group(executor);
  const long in_wait_for_all = sleeps_while_waiting_through_completions(executor, group, kOtherCompletions,
                                                                        [&] { executor.wait_for_all(); });
  CHECK(group.pending() == 0);
  const long in_group_wait =
      sleeps_while_waiting_through_completions(executor, group, kOtherCompletions, [&] { group.wait(); });
  CHECK(group.pending() == 0);
  if (in_wait_for_all < 0 || in_group_wait < 0) {
    MESSAGE("skipped the count: /proc/thread-self/status is not readable here");
    return;
  }
  CHECK(in_wait_for_all < kOtherCompletions / 10);
  CHECK(in_group_wait < kOtherCompletions / 10);
}

TEST_CASE("Executor.wait_for_all_sleeps_through_run_ends_that_task_group_waiters_sleep_for.2threads") {
  // A thread in wait_for_all() waits for the last run to end; another
  // thread's task-group waits, each woken by a run's end, must not wake it
  // at every one of those ends (the kinds of sleeper on the run word are
  // woken apart).
  constexpr int kRounds = 200;
  weft::Executor executor(weft::test::cpu_only(2));
  std::atomic<bool> rounds_done{false};
  weft::TaskGroup holder(executor);  // the run that keeps wait_for_all() waiting
  holder.run([&] {
    while (!rounds_done.load()) std::this_thread::sleep_for(std::chrono::microseconds(200));
  });
  std::atomic<long> all_sleeps{0};
  std::thread all_waiter([&] {
    const long before = weft::test::times_this_thread_slept();
    executor.wait_for_all();
    const long after = weft::test::times_this_thread_slept();
    all_sleeps.store(before < 0 || after < 0 ? -1 : after - before);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // let it fall asleep first
  for (int round = 0; round < kRounds; ++round) {
    weft::TaskGroup group(executor);
    group.run([] { std::this_thread::sleep_for(std::chrono::microseconds(100)); });
    group.wait();
  }
  rounds_done.store(true);
  all_waiter.join();
  CHECK(holder.pending() == 0);
  if (all_sleeps.load() < 0) {
    MESSAGE("skipped the count: /proc/thread-self/status is not readable here");
    return;
  }
  CHECK(all_sleeps.load() < kRounds / 10);
}

TEST_CASE("Executor.outside_waiters_see_every_run_end_while_other_runs_begin_and_end.2threads") {
  // Threads outside the pool sleep on the run count's word while runs begin
  // and end around them; every wait must return. (A run's end wakes every
  // sleeper, so this catches a lost wake-up only in a waiter's last round;
  // it is a smoke test for the word's bookkeeping, run under TSan in CI.)
  constexpr int kWaiters = 3, kRounds = 150;
  weft::Executor executor(weft::test::cpu_only(2));
  std::atomic<long> ran{0};
  std::vector<std::thread> waiters;
  for (int w = 0; w < kWaiters; ++w) {
    waiters.emplace_back([&, w] {
      for (int round = 0; round < kRounds; ++round) {
        weft::TaskGroup group(executor);
        for (int k = 0; k <= (round + w) % 4; ++k) {
          group.run([&ran, round] {
            if (round % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
            ran.fetch_add(1, std::memory_order_relaxed);
          });
        }
        if (w == 0 && round % 2 == 0) {
          executor.wait_for_all();  // every run, the other waiters' included
          CHECK(group.pending() == 0);
        } else {
          group.wait();
        }
      }
    });
  }
  for (std::thread& t : waiters) t.join();
  long expected = 0;
  for (int w = 0; w < kWaiters; ++w)
    for (int round = 0; round < kRounds; ++round) expected += (round + w) % 4 + 1;
  CHECK(ran.load() == expected);
  executor.wait_for_all();
}

TEST_CASE("Executor.wait_for_all_returns_while_runs_begun_after_it_keep_others_in_flight.2threads") {
  // Another thread keeps one task-group run in flight at every instant,
  // each begun before the one before it ends, so the executor is never idle.
  // wait_for_all() waits for the runs begun before it, not for a moment with
  // no run at all, which never comes here.
  weft::Executor executor(weft::test::cpu_only(2));
  std::atomic<bool> stop{false};
  std::atomic<long> submitted{0};  // callables handed to the groups so far
  std::thread churn([&] {
    weft::TaskGroup groups[2] = {weft::TaskGroup(executor), weft::TaskGroup(executor)};
    for (long k = 0; !stop.load(); ++k) {
      // Callable k holds its group's run open until callable k + 1 is in.
      groups[k % 2].run([&submitted, &stop, k] {
        while (submitted.load() < k + 2 && !stop.load()) std::this_thread::yield();
      });
      submitted.store(k + 1);
      groups[(k + 1) % 2].wait();  // callable k - 1's run
    }
    groups[0].wait();
    groups[1].wait();
  });
  while (submitted.load() < 20) std::this_thread::yield();
  weft::TaskGroup before(executor);  // a run begun before the wait, which it must wait for
  std::atomic<bool> before_done{false};
  before.run([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    before_done.store(true);
  });
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    executor.wait_for_all();
    CHECK(before_done.load());
    returned.store(true);
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!returned.load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const long submitted_at_return = submitted.load();
  CHECK_MESSAGE(returned.load(), "wait_for_all() was still waiting after 10 s of other runs");
  stop.store(true);  // also lets a starved wait_for_all() return, so the test ends
  churn.join();
  waiter.join();
  before.wait();
  MESSAGE("callables submitted around the wait: " << submitted_at_return);
}

// A job that records when it ran and may push others from its worker.
struct Recorder : weft::Job {
  std::vector<char>* order;
  char name;
  std::vector<std::pair<Recorder*, weft::TaskPriority>> pushes;
  std::atomic<int>* done;
  Recorder(std::vector<char>* o, char n, std::atomic<int>* d)
      : Job(&Recorder::invoke), order(o), name(n), done(d) {}
  static void invoke(weft::Job& job, weft::WorkerContext& worker) {
    auto& self = static_cast<Recorder&>(job);
    self.order->push_back(self.name);
    for (auto& [other, priority] : self.pushes) worker.push(other, weft::Domain::Cpu, priority);
    self.done->fetch_add(1);
  }
};

TEST_CASE("Executor.a_worker_takes_its_newest_high_job_first_then_older_ones_then_regular.1thread") {
  // The newest High job waits outside the High deque (WorkerContext::push);
  // the order is still the deques' own: High newest first, then Regular.
  weft::Executor executor(weft::test::cpu_only(1));
  std::vector<char> order;
  std::atomic<int> done{0};
  Recorder root(&order, 'r', &done), h1(&order, '1', &done), h2(&order, '2', &done), h3(&order, '3', &done),
      regular(&order, 'R', &done), low(&order, 'L', &done);
  root.pushes = {{&low, weft::TaskPriority::Low},
                 {&h1, weft::TaskPriority::High},
                 {&regular, weft::TaskPriority::Regular},
                 {&h2, weft::TaskPriority::High},
                 {&h3, weft::TaskPriority::High}};
  executor.submit(&root);
  executor.wait_until([&] { return done.load() == 6; });
  CHECK(std::string(order.begin(), order.end()) == "r321RL");
}

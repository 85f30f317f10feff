// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A group of fire-and-forget callables run on an Executor, waited on together.
//
//   weft::TaskGroup group(executor);
//   for (int i = 0; i < n; ++i) group.run([&, i] { out[i] = work(i); });
//   group.wait();   // returns when all ran; rethrows the first exception
//
// Callables may run() more callables into the same group from inside a job,
// but not wait() for it there: the group cannot finish before the calling
// job does, so that throws std::logic_error. If one throws, the others
// still run (they are independent); wait() then rethrows the first
// exception and the group is ready for reuse.
//
// A wait() on a worker nested deeper than kMaxNestedWaits (executor.hpp)
// throws std::logic_error instead of overflowing the stack. The group is
// then abandoned: its callables not started yet are skipped (so that the
// destructor's wait does not nest another level for each), and run() throws.
//
// A thread outside the pool that run()s callables hands them to a guest
// context it borrows (Executor::borrow_guest()): idle workers steal them
// from there, and its wait() runs those still left, newest first, itself,
// as a worker would (Executor::this_worker() then answers the guest, whose
// index() is worker_count() or more). So a callable may run on the thread
// that waits. While observers are attached, or when all guests are
// borrowed, the workers run them all. A wait() that closes a cycle with
// waits blocked on other threads (a callable waits for a graph's run whose
// node, on another thread, waits for the group) throws std::logic_error
// instead of blocking for ever (docs/waiting.md, "Wait cycles").
//
// Each run() allocates its job on the heap; the pool-backed, allocation-free
// path is the task-DAG's TaskScheduler.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <weft/runtime/detail/blocked_waits.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/wait_scope.hpp>

namespace weft {

class TaskGroup {
 public:
  explicit TaskGroup(Executor& executor) noexcept : executor_(executor) {}
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;

  // Waits for outstanding callables; an exception not collected by wait() is dropped.
  ~TaskGroup() {
    wait_for_callables();
    // Nobody run()s any more: whichever thread destroys the group returns the guest.
    if (WorkerContext* guest = guest_.exchange(nullptr, std::memory_order_acquire))
      executor_.return_guest(*guest);
  }

  template <class F>
  void run(F&& fn, Domain domain = Domain::Cpu) {
    using Fn = std::decay_t<F>;
    static_assert(std::is_invocable_v<Fn&>, "TaskGroup::run takes a callable with no arguments");
    if (abandoned_.load(std::memory_order_relaxed)) {
      throw std::logic_error(
          "TaskGroup::run: the group's wait() was refused (waits nested too deep), which abandoned it");
    }
    auto* job = new CallableJob<Fn>(std::forward<F>(fn), *this);
    // relaxed: the job's submission below publishes it; only the 0 -> 1 step
    // needs to tell the executor a run began, and keeps the run's generation
    // in pending_ for the finish_one() that ends it (which comes after this
    // job's own, so after the update below).
    const std::int64_t before = pending_.fetch_add(1, std::memory_order_relaxed);
    if ((before & kCountMask) == 0) {
      const bool odd = executor_.begin_run() == RunEpoch::odd;
      if (odd != ((before & kOddEpoch) != 0)) pending_.fetch_xor(kOddEpoch, std::memory_order_relaxed);
    }
    try {
      WorkerContext* guest =
          domain == Domain::Cpu && Executor::current_worker() == nullptr ? guest_here() : nullptr;
      if (guest != nullptr) {
        guest->push(job);
      } else {
        executor_.submit(job, domain);
      }
    } catch (...) {
      delete job;
      finish_one();
      throw;
    }
  }

  void wait() {
    if (scope_.entered()) throw std::logic_error(scope_.refusal());
    if (WorkerContext* worker = Executor::current_worker(); worker != nullptr && worker->wait_too_deep()) {
      abandoned_.store(true, std::memory_order_relaxed);
      WorkerContext::refuse_nested_wait("TaskGroup::wait");
    }
    {
      // Registered while it blocks, if this thread runs work others may wait
      // for (a graph's node): a cycle through other threads throws here.
      std::optional<detail::BlockedWait> blocked;
      if (pending() != 0) blocked.emplace(scope_, detail::BlockedWait::Done{&TaskGroup::idle, this});
      wait_for_callables();
    }
    // The guest goes back once its borrower waited: other threads may use it.
    if (WorkerContext* guest = guest_borrowed_here(std::memory_order_relaxed)) {
      guest_.store(nullptr, std::memory_order_relaxed);
      executor_.return_guest(*guest);
    }
    if (has_error_.load(std::memory_order_acquire)) {
      std::exception_ptr error = std::exchange(error_, nullptr);
      has_error_.store(false, std::memory_order_relaxed);
      std::rethrow_exception(error);
    }
  }

  // acquire: a caller that sees 0 sees the callables' effects.
  std::int64_t pending() const noexcept { return pending_.load(std::memory_order_acquire) & kCountMask; }

 private:
  template <class Fn>
  struct CallableJob : Job {
    CallableJob(Fn&& f, TaskGroup& g) : Job(&CallableJob::invoke_fn), fn(std::move(f)), group(&g) {}
    CallableJob(const Fn& f, TaskGroup& g) : Job(&CallableJob::invoke_fn), fn(f), group(&g) {}
    static void invoke_fn(Job& self, WorkerContext& worker) {
      auto* job = static_cast<CallableJob*>(&self);
      TaskGroup* group = job->group;
      const bool traced = worker.tracing();
      const std::int64_t start = traced ? worker.trace_clock() : 0;
      try {
        WaitScope::Inside inside(&group->scope_);
        // relaxed: a hint; a job that misses it runs its callable as usual.
        if (!group->abandoned_.load(std::memory_order_relaxed)) job->fn();
      } catch (...) {
        group->capture(std::current_exception());
      }
      if (traced) worker.trace("job", worker.domain(), start);
      delete job;
      group->finish_one();
    }
    Fn fn;
    TaskGroup* group;
  };

  // The guest the calling thread (outside the pool) pushes onto: the
  // group's, borrowed on its first such run(), when this thread borrowed it.
  WorkerContext* guest_here() noexcept {
    // acquire: pairs with the release below, for the guest's borrower.
    WorkerContext* guest = guest_.load(std::memory_order_acquire);
    if (guest == nullptr) {
      guest = executor_.borrow_guest();
      if (guest == nullptr) return nullptr;  // all borrowed: the submission queue
      WorkerContext* none = nullptr;
      if (!guest_.compare_exchange_strong(none, guest, std::memory_order_acq_rel,
                                          std::memory_order_acquire)) {
        executor_.return_guest(*guest);  // another thread's run() borrowed one first
        guest = none;
      }
    }
    return Executor::borrowed_here(*guest) ? guest : nullptr;
  }

  static bool idle(const void* self) noexcept { return static_cast<const TaskGroup*>(self)->pending() == 0; }

  // Until no callable is pending; the borrower of the group's guest runs
  // those left on it meanwhile.
  void wait_for_callables() {
    const auto done = [this] { return pending() == 0; };
    if (WorkerContext* guest = guest_borrowed_here(std::memory_order_acquire))
      executor_.help_as_guest(*guest, done);
    executor_.wait_until_run_ends(done);
  }

  // The group's guest when the calling thread, outside the pool, borrowed
  // it (it alone pushes onto the guest and runs from it), else null.
  WorkerContext* guest_borrowed_here(std::memory_order order) const noexcept {
    WorkerContext* guest = guest_.load(order);
    return guest != nullptr && Executor::borrowed_here(*guest) && Executor::current_worker() == nullptr
               ? guest
               : nullptr;
  }

  void capture(std::exception_ptr error) noexcept {
    // The first exception wins. Its write to error_ happens before wait()
    // reads it: finish_one()'s acq_rel decrement follows it in this thread.
    if (!has_error_.exchange(true, std::memory_order_acq_rel)) error_ = std::move(error);
  }

  void finish_one() noexcept {
    Executor& executor = executor_;  // `this` may be gone once pending_ hits zero
    // acq_rel: release publishes this job's effects to the waiter's acquire
    // load of pending_; acquire orders earlier jobs' effects before ours.
    const std::int64_t before = pending_.fetch_sub(1, std::memory_order_acq_rel);
    if ((before & kCountMask) == 1)
      executor.end_run((before & kOddEpoch) != 0 ? RunEpoch::odd : RunEpoch::even);
  }

  // pending_: the callables not yet finished, and the generation of the
  // executor run they make up (the run begins at the first and ends with
  // the last; Executor::begin_run()).
  static constexpr std::int64_t kOddEpoch = std::int64_t{1} << 62;
  static constexpr std::int64_t kCountMask = kOddEpoch - 1;

  Executor& executor_;
  WaitScope scope_{
      "TaskGroup::wait: called from a job of the same group, which cannot finish before that job does "
      "(it would wait forever); run() more work into the group and wait outside it",
      "TaskGroup::wait: a wait cycle: one of the group's jobs runs further down this thread's stack (it "
      "waited for other work, and this job ran meanwhile), and the group cannot finish before this wait "
      "returns (it would wait forever); break the cycle, or wait for the group outside its jobs"};
  std::atomic<std::int64_t> pending_{0};
  std::atomic<bool> has_error_{false};
  std::atomic<bool> abandoned_{false};          // see the file's comment
  std::atomic<WorkerContext*> guest_{nullptr};  // borrowed by the first run() from outside the pool
  std::exception_ptr error_;
};

}  // namespace weft

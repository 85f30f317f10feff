// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Future<T>: a shared-ownership handle to a dynamic task (Kokkos report
// 3.2.1) or to a Promise's result. Copies share it; the last one lets the
// task's block go back to the memory pool (once the task is also complete).
//
//   weft::Future<long> f = weft::host_spawn(weft::TaskSingle(sched), Fib{sched, 20});
//   long v = f.get();             // waits for the task, then its result (rethrows its exception)
//   weft::Future<> done = f;      // any future converts to Future<void>
//   weft::Future<> run = executor.run(graph);
//   run.get();                    // waits for the graph run; rethrows a node's exception
//
// get() and wait() on an incomplete future wait, like std::future::get: on
// a worker thread they run other ready jobs meanwhile, elsewhere they sleep
// (on a promise's future, until that promise completes; on a task's, until
// its executor reports a completion).
// Inside a task, get() on an incomplete task of the same scheduler throws
// std::logic_error instead (a task never blocks: respawn on the future).
// get() on a null future throws std::logic_error. A task that threw, or
// whose dependence failed, is complete with that exception: get()
// rethrows it, which also counts it as observed (wait(scheduler) does not
// report it again).
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <weft/runtime/detail/task_header.hpp>
#include <weft/runtime/task.hpp>

namespace weft {

template <class T = void>
class Future {
 public:
  using value_type = T;

  Future() noexcept = default;
  Future(const Future& other) noexcept : task_(other.task_) {
    if (task_ != nullptr) detail::retain(task_);
  }
  Future(Future&& other) noexcept : task_(std::exchange(other.task_, nullptr)) {}
  // Future<void> from any future.
  template <class U>
  requires(std::is_void_v<T> && !std::is_void_v<U>) Future(const Future<U>& other)
  noexcept : task_(other.task_) {  // NOLINT(google-explicit-constructor)
    if (task_ != nullptr) detail::retain(task_);
  }
  Future& operator=(const Future& other) noexcept {
    Future copy(other);
    std::swap(task_, copy.task_);
    return *this;
  }
  Future& operator=(Future&& other) noexcept {
    if (&other == this) return *this;
    Future gone(std::move(*this));  // released last: `other` may be owned by it
    task_ = std::exchange(other.task_, nullptr);
    return *this;
  }
  ~Future() {
    if (task_ != nullptr) detail::release(task_);
  }

  bool is_null() const noexcept { return task_ == nullptr; }

  // Asks the task not to run: a task that has not started completes with a
  // weft::Cancelled error instead; a graph run stops starting nodes (a
  // queued one is removed without running); a Promise's producer sees
  // cancel_requested(). A task already running finishes normally. Does
  // nothing on a null future.
  void cancel() const noexcept {
    if (task_ == nullptr) return;
    if (task_->kind == detail::TaskKind::Promise) {
      detail::cancel_promise(static_cast<detail::PromiseHeader&>(*task_));
    } else {
      task_->cancel_requested.store(true, std::memory_order_relaxed);
    }
  }
  // get() would throw weft::Cancelled.
  bool is_cancelled() const noexcept {
    if (!is_ready() || !task_->error) return false;
    try {
      std::rethrow_exception(task_->error);
    } catch (const Cancelled&) {
      return true;
    } catch (...) {
      return false;
    }
  }
  bool is_ready() const noexcept { return task_ != nullptr && task_->is_complete(); }
  explicit operator bool() const noexcept { return !is_null(); }

  // Blocks until the task is complete (on a worker thread: runs other jobs
  // meanwhile). Does not throw the task's exception; get() does. Throws
  // std::logic_error for a self-wait: a task waiting for itself, or a wait
  // from inside the work it waits for (a node waiting for its own graph's run).
  const Future& wait() const {
    if (task_ == nullptr) throw std::logic_error("Future::wait: the future is null (no task)");
    detail::wait_for(*task_);
    return *this;
  }

  // The result, once complete (nothing for Future<void>); waits first (see above).
  decltype(auto) get() const {
    check_complete();
    if constexpr (!std::is_void_v<T>) return static_cast<const T&>(*static_cast<const T*>(task_->result));
  }

  friend bool operator==(const Future& a, const Future& b) noexcept { return a.task_ == b.task_; }

 private:
  template <class>
  friend class Future;
  friend class TaskScheduler;
  friend struct detail::FutureAccess;

  explicit Future(detail::TaskHeader* adopted) noexcept : task_(adopted) {}

  void check_complete() const {
    // Inline: get() on a complete task without error, what a task reading
    // its dependences' results does.
    if (task_ != nullptr && task_->is_complete() && !task_->error) [[likely]]
      return;
    check_complete_slowly();
  }
  [[gnu::cold, gnu::noinline]] void check_complete_slowly() const {
    if (task_ == nullptr) throw std::logic_error("Future::get: the future is null (no task)");
    if (!task_->is_complete()) {
      if (task_->core != nullptr && task_->core == detail::current_core()) {
        // A task never blocks on its own scheduler's work: it respawns.
        throw std::logic_error(std::string("Future::get: the task is not complete (it is ") +
                               detail::to_string(task_->state.load(std::memory_order_acquire)) +
                               "); inside a task of the same scheduler, respawn(this, future) instead of "
                               "waiting for it");
      }
      detail::wait_for(*task_);
    }
    if (task_->error) {
      detail::note_failure_observed(*task_);
      std::rethrow_exception(task_->error);
    }
  }

  detail::TaskHeader* task_ = nullptr;
};

namespace detail {
// Lets the scheduler reach a future's task without making it public API.
struct FutureAccess {
  template <class T>
  static TaskHeader* task(const Future<T>& f) noexcept {
    return f.task_;
  }
  template <class T>
  static Future<T> adopt(TaskHeader* task) noexcept {
    return Future<T>(task);
  }
  // Leaves `f` null without dropping its reference, which the caller has
  // passed on.
  template <class T>
  static void forget(Future<T>& f) noexcept {
    f.task_ = nullptr;
  }
};
}  // namespace detail

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Promise<T>: completes a Future<T> from outside the task-DAG (a graph run
// that ends, a GPU callback, a message that arrives), with a value, an
// exception, or a cancellation.
//
//   weft::Promise<int> promise(executor);
//   weft::Future<int> answer = promise.get_future();
//   std::thread producer([&] { promise.set_value(42); });
//   answer.get();   // waits, then 42
//   producer.join();
//
// The future is an ordinary Future<T>: get() and wait() wait for it, a task
// can respawn on it (TaskScheduler::respawn(this, future)) or be spawned
// after it (TaskSingle(scheduler, future)), and when_all takes it. Its
// state lives on the heap, so the number of promises is limited only by
// memory. `executor` is the executor whose blocked waiters a completion
// wakes; it must outlive the completion.
//
// Setting: exactly one of set_value, set_exception or set_cancelled, once
// (a second throws std::logic_error). A promise destroyed unset completes
// its future with std::logic_error ("broken promise").
//
// Cancelling: Future::cancel() on one of its futures sets
// cancel_requested() (the producer decides what to do) and, before the
// promise is set, calls the on_cancel hook once.
//
// Self-waits: given a WaitScope, waiting for the future from a thread
// inside that scope throws std::logic_error with the scope's message.
#pragma once

#include <atomic>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <weft/runtime/detail/task_header.hpp>
#include <weft/runtime/future.hpp>
#include <weft/runtime/task.hpp>

namespace weft {

namespace detail {

template <class T>
struct PromiseState final : PromiseHeader {
  using Stored = std::conditional_t<std::is_void_v<T>, char, T>;

  PromiseState(Executor& owner, const WaitScope* waited_from) noexcept : PromiseHeader(owner, waited_from) {
    ops = &kOps;
    // One reference for the promise; each future takes its own.
    refs.store(1, std::memory_order_relaxed);
  }
  ~PromiseState() {
    if (result != nullptr) static_cast<Stored*>(result)->~Stored();
  }

  static void delete_state(TaskHeader& state) noexcept { delete static_cast<PromiseState*>(&state); }
  static constexpr TaskOps kOps{nullptr, nullptr, &delete_state};

  alignas(Stored) unsigned char storage[sizeof(Stored)];
};

}  // namespace detail

template <class T = void>
class Promise {
 public:
  explicit Promise(Executor& executor, const WaitScope* scope = nullptr)
      : state_(new detail::PromiseState<T>(executor, scope)) {}
  Promise(Promise&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  Promise& operator=(Promise&& other) noexcept {
    if (this != &other) {
      abandon();
      state_ = std::exchange(other.state_, nullptr);
    }
    return *this;
  }
  Promise(const Promise&) = delete;
  Promise& operator=(const Promise&) = delete;
  ~Promise() { abandon(); }

  // A future of this promise; any number of them share the result.
  Future<T> get_future() const {
    detail::retain(&state());
    return detail::FutureAccess::adopt<T>(&state());
  }

  template <class... Args>
  requires(!std::is_void_v<T> && std::is_constructible_v<T, Args...>) void set_value(Args&&... args) {
    claim("set_value");
    auto& s = state();
    try {
      ::new (static_cast<void*>(s.storage)) T(std::forward<Args>(args)...);
    } catch (...) {
      detail::complete_promise(s, std::current_exception());
      throw;
    }
    s.result = s.storage;
    detail::complete_promise(s, nullptr);
  }
  void set_value() requires std::is_void_v<T> {
    claim("set_value");
    detail::complete_promise(state(), nullptr);
  }
  // get() rethrows `error` (which must not be null).
  void set_exception(std::exception_ptr error) {
    if (!error) throw std::invalid_argument("Promise::set_exception: the exception is null");
    claim("set_exception");
    detail::complete_promise(state(), std::move(error));
  }
  // get() throws weft::Cancelled(reason).
  void set_cancelled(const std::string& reason = "the promise was cancelled") {
    claim("set_cancelled");
    detail::complete_promise(state(), std::make_exception_ptr(Cancelled(reason)));
  }

  bool is_set() const noexcept { return state_ != nullptr && state_->set.load(std::memory_order_acquire); }
  // Whether a future of this promise was cancelled (Future::cancel()).
  bool cancel_requested() const noexcept {
    return state_ != nullptr && state_->cancel_requested.load(std::memory_order_relaxed);
  }
  // The flag cancel_requested() reads, for engines that poll it
  // (WorkGraphPolicy::start); it lives as long as the promise's state.
  const std::atomic<bool>* cancellation_flag() const noexcept {
    return state_ != nullptr ? &state_->cancel_requested : nullptr;
  }

  // Calls hook(context.get()) once, on the thread that first cancels a
  // future of this promise before the promise is set (at once if that has
  // happened already). `context` lives until the hook ran or the promise
  // is set. The hook must not throw; it may set the promise. Call it once,
  // before anyone else can cancel.
  void on_cancel(void (*hook)(void* context) noexcept, std::shared_ptr<void> context) {
    auto& s = state();
    if (s.hook_state.load(std::memory_order_relaxed) != 0)
      throw std::logic_error("Promise::on_cancel: a hook is already registered");
    s.cancel_hook = hook;
    s.hook_context = std::move(context);
    // seq_cst, with the load below: pairs with cancel_promise(), which
    // stores the flag and then reads this state; one of the two sees the
    // other, so the hook fires if the cancellation came first.
    s.hook_state.store(1, std::memory_order_seq_cst);
    if (s.cancel_requested.load(std::memory_order_seq_cst)) detail::fire_cancel_hook(s);
  }

 private:
  detail::PromiseState<T>& state() const {
    if (state_ == nullptr) throw std::logic_error("Promise: this promise was moved from");
    return *state_;
  }
  void claim(const char* what) {
    if (state().set.exchange(true, std::memory_order_acq_rel)) {
      throw std::logic_error(std::string("Promise::") + what + ": the promise was already set");
    }
  }
  void abandon() noexcept {
    if (state_ == nullptr) return;
    if (!state_->set.exchange(true, std::memory_order_acq_rel)) {
      try {
        detail::complete_promise(*state_, std::make_exception_ptr(std::logic_error(
                                              "Promise: destroyed without being set (broken promise)")));
      } catch (...) {
        // complete_promise throws only for a promise already set.
      }
    }
    detail::release(std::exchange(state_, nullptr));
  }

  detail::PromiseState<T>* state_;
};

}  // namespace weft

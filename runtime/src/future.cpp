// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What futures need from the runtime out of line: waiting, tearing a task
// or promise state down, and completing and cancelling promises.
#include <weft/runtime/future.hpp>

#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

#include <weft/runtime/detail/blocked_waits.hpp>
#include <weft/runtime/detail/futex.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/task_scheduler.hpp>
#include <weft/runtime/wait_scope.hpp>

namespace weft::detail {

void destroy(TaskHeader* task) noexcept {
  if (task->kind == TaskKind::Promise) [[unlikely]] {
    task->ops->destroy_result(*task);  // deletes the promise's state
    return;
  }
  if (task->ops != nullptr && task->ops->destroy_result != nullptr) task->ops->destroy_result(*task);
  SchedulerCore* core = task->core;
  const std::uint32_t size = task->block_size;
  task->~TaskHeader();
  core->free_block(task, size);
}

void wait_for(const TaskHeader& task) {
  if (task.is_complete()) return;
  const bool is_promise = task.kind == TaskKind::Promise;
  if (is_promise) {
    const auto& promise = static_cast<const PromiseHeader&>(task);
    if (promise.scope != nullptr && promise.scope->entered())
      throw std::logic_error(promise.scope->refusal());
  } else {
    if (task.core == nullptr) throw std::logic_error("Future::wait: the task has no scheduler");
    if (current_task() == &task) throw std::logic_error("Future::wait: a task cannot wait for itself");
  }
  // Registered while it blocks, if its thread is inside work others may wait for.
  std::optional<BlockedWait> blocked;
  if (is_promise) {
    const auto& promise = static_cast<const PromiseHeader&>(task);
    if (promise.scope != nullptr) blocked.emplace(*promise.scope, task);  // throws on a cycle
  }
  // A worker (of any executor) keeps running its executor's jobs while it
  // waits.
  if (WorkerContext* worker = Executor::current_worker()) {
    worker->check_nested_wait("Future::wait");
    worker->executor().wait_until([&task] { return task.is_complete(); });
    return;
  }
  // Another thread waiting for a promise sleeps on the promise's own word,
  // which complete_promise() wakes: the executor's other completions (every
  // chunked loop and idle worker reports one) do not wake it, and so do not
  // take a core from the workers while the run goes on. It checks a few
  // times first, as every wait outside the pool does (docs/waiting.md).
  if (is_promise) {
    const auto& promise = static_cast<const PromiseHeader&>(task);
    for (int round = 0; round < kChecksBeforeSleep; ++round) {
      if (task.is_complete()) return;
      std::this_thread::yield();
    }
    while (true) {
      // Mark first, then check: a completion after the mark sees it and
      // wakes us, one before it is in the word we read. seq_cst: one total
      // order with complete_promise()'s exchange.
      const std::uint32_t seen =
          promise.completion_word.fetch_or(PromiseHeader::kPromiseSleepers, std::memory_order_seq_cst) |
          PromiseHeader::kPromiseSleepers;
      if ((seen & PromiseHeader::kPromiseComplete) != 0 || task.is_complete()) return;
      futex_wait(futex_word(promise.completion_word), seen);
    }
  }
  // A task's waiter sleeps until its scheduler's executor reports a
  // completion (and re-checks every few milliseconds regardless).
  task.core->executor().wait_until([&task] { return task.is_complete(); });
}

void complete_promise(PromiseHeader& promise, std::exception_ptr error) {
  if (error) promise.error = std::move(error);
  // The promise's own reference keeps the state alive during this call.
  Executor& executor = *promise.executor;
  // release: the value and error are visible to anyone who sees Complete.
  promise.state.store(TaskState::Complete, std::memory_order_release);
  // Threads blocked in wait() outside the pool, if one marked itself.
  if ((promise.completion_word.exchange(PromiseHeader::kPromiseComplete, std::memory_order_seq_cst) &
       PromiseHeader::kPromiseSleepers) != 0) {
    futex_wake(futex_word(promise.completion_word));
  }
  // acq_rel: acquire pairs with the release CAS of each waiter that joined.
  WaitNode* node = promise.waiters.exchange(closed_list(), std::memory_order_acq_rel);
  while (node != nullptr) {
    // Read both first: once told, the waiter may run, relink or go away.
    WaitNode* next = node->next;
    TaskHeader* waiter = node->waiter;
    waiter->core->dependence_done_elsewhere(waiter, promise.error);
    node = next;
  }
  // The hook can no longer matter: drop its context, unless it is firing
  // right now (its firer drops it then).
  if (promise.hook_state.exchange(3, std::memory_order_acq_rel) == 1) promise.hook_context.reset();
  executor.notify_completion();  // wakes threads blocked in wait()
}

void fire_cancel_hook(PromiseHeader& promise) noexcept {
  int armed = 1;
  if (!promise.hook_state.compare_exchange_strong(armed, 2, std::memory_order_acq_rel)) return;
  promise.cancel_hook(promise.hook_context.get());
  std::shared_ptr<void> context = std::move(promise.hook_context);  // dropped last
  promise.hook_state.store(3, std::memory_order_release);
}

void cancel_promise(PromiseHeader& promise) noexcept {
  // seq_cst: pairs with Promise::on_cancel (see there).
  promise.cancel_requested.store(true, std::memory_order_seq_cst);
  if (promise.hook_state.load(std::memory_order_seq_cst) == 1) fire_cancel_hook(promise);
}

}  // namespace weft::detail

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The in-memory form of a dynamic task (Kokkos report 2.3): one pool block
// holding a small header followed by the functor's bytes and its result, in
// the spirit of the DyND kernel prefix; and of a promise's shared state, a
// header a Promise completes from outside the task-DAG. Internal: users see
// TaskScheduler, Future, Promise and TaskMember.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>

#include <weft/backends/initial_exec_tls.hpp>
#include <weft/runtime/job.hpp>

namespace weft {

class Executor;
class TaskMember;
class WaitScope;
class WorkerContext;

namespace detail {

class SchedulerCore;
struct FutureAccess;

enum class TaskState : std::uint8_t { Waiting, Executing, Complete };
// Promise: no functor and no scheduler; a Promise completes it (a graph run
// ending, a GPU callback, a message arriving).
enum class TaskKind : std::uint8_t { Single, Team, WhenAll, Promise };

inline const char* to_string(TaskState s) noexcept {
  return s == TaskState::Waiting ? "waiting" : s == TaskState::Executing ? "executing" : "complete";
}

struct TaskHeader;

// Per functor type: how to run the task and tear down its parts.
struct TaskOps {
  void (*execute)(TaskHeader& task, TaskMember& member);  // calls the functor
  void (*destroy_functor)(TaskHeader& task) noexcept;     // at completion
  // When the last reference goes (null: nothing to do). A promise's state
  // deletes itself here.
  void (*destroy_result)(TaskHeader& task) noexcept;
};

// One entry of a task's list of waiters. A task waits through the node in
// its own header; a when-all has a node per dependence, so that it waits on
// all of them at once (see SchedulerCore::add_to_when_all).
struct WaitNode {
  WaitNode* next = nullptr;
  TaskHeader* waiter = nullptr;  // whom the node belongs to
};

struct TaskHeader : Job {
  explicit TaskHeader(Invoke run) noexcept : Job(run) { wait_node.waiter = this; }

  const TaskOps* ops = nullptr;       // null for when-all entities
  SchedulerCore* core = nullptr;      // its block returns to core->free_block(); null for a promise
  void* functor = nullptr;            // respawn() checks `this` against it
  void* result = nullptr;             // the value Future<T>::get() returns
  std::atomic<std::int32_t> refs{0};  // futures, dependents, and the scheduler (or promise) until complete
  std::atomic<TaskState> state{TaskState::Waiting};
  TaskKind kind = TaskKind::Single;
  TaskPriority priority = TaskPriority::Regular;
  Domain domain = Domain::Cpu;
  bool respawn_requested = false;
  TaskPriority respawn_priority = TaskPriority::Regular;
  std::uint32_t block_size = 0;
  // The task this one waits for (a counted reference), until it runs.
  TaskHeader* dependence = nullptr;
  TaskHeader* respawn_dependence = nullptr;
  // Who waits for this one: a lock-free LIFO list of nodes (a task's own
  // wait_node, a when-all's node for this dependence), closed
  // (closed_list()) once this one completed.
  std::atomic<WaitNode*> waiters{nullptr};
  WaitNode wait_node;                         // how this task joins a dependence's list
  std::exception_ptr error;                   // set before `state` becomes Complete
  std::atomic<bool> cancel_requested{false};  // Future::cancel()
  // When-all entities: how many dependences have not completed yet, plus
  // kWhenAllFailed once one of them failed (its error is then in `error`).
  // Their wait nodes follow the header, one per dependence.
  static constexpr std::uint32_t kWhenAllFailed = std::uint32_t{1} << 31;
  std::atomic<std::uint32_t> pending{0};

  WaitNode* when_all_nodes() noexcept { return reinterpret_cast<WaitNode*>(this + 1); }
  bool is_complete() const noexcept { return state.load(std::memory_order_acquire) == TaskState::Complete; }
};

// A promise's state (kind Promise): heap-allocated, so that the number of
// promises is limited by memory only. The typed part (PromiseState<T>,
// promise.hpp) holds the value and deletes the whole through ops.
struct PromiseHeader : TaskHeader {
  PromiseHeader(Executor& owner, const WaitScope* waited_from) noexcept
      : TaskHeader(nullptr), executor(&owner), scope(waited_from) {
    kind = TaskKind::Promise;
  }

  Executor* executor;            // whose blocked waiters its completion wakes
  const WaitScope* scope;        // waiting for it from inside this scope is an error (may be null)
  std::atomic<bool> set{false};  // a value, an error or a cancellation was given
  // What threads outside the pool sleep on until it completes (futex.hpp):
  // kPromiseComplete once `state` is Complete, kPromiseSleepers while one
  // of them may sleep.
  static constexpr std::uint32_t kPromiseComplete = 1;
  static constexpr std::uint32_t kPromiseSleepers = 2;
  mutable std::atomic<std::uint32_t> completion_word{0};
  // The on_cancel hook: 0 none, 1 armed, 2 firing, 3 spent. The firer (who
  // moves it 1 -> 2) or, if it was never fired, whoever completes the
  // promise drops the context.
  std::atomic<int> hook_state{0};
  void (*cancel_hook)(void* context) noexcept = nullptr;
  std::shared_ptr<void> hook_context;
};

// Completes a promise's state with `error` (null: with its value, already
// in place) and tells every waiter. The caller has claimed `set`.
void complete_promise(PromiseHeader& promise, std::exception_ptr error);
// Future::cancel() on a promise's future: sets the flag, fires the hook.
void cancel_promise(PromiseHeader& promise) noexcept;
// Fires the on_cancel hook if it is armed (see PromiseHeader::hook_state).
void fire_cancel_hook(PromiseHeader& promise) noexcept;

struct BlockCache;

// What this thread is running, if it runs a task: the task (respawn(),
// task_spawn() and scheduler copies look at it), the worker running it (so
// that spawns need not look it up), that worker's block cache for the
// task's scheduler (null when this worker's cache is held by an outer task,
// see SchedulerCore::invoke), and, while the task completes, the task this
// worker runs next (see SchedulerCore::became_ready).
struct RunningTask {
  TaskHeader* task = nullptr;
  SchedulerCore* core = nullptr;  // task->core, read by every spawn
  WorkerContext* worker = nullptr;
  BlockCache* cache = nullptr;
  bool completing = false;  // may `next` be set (only while completing)
  TaskHeader* next = nullptr;
};
WEFT_INITIAL_EXEC_TLS inline thread_local constinit RunningTask tls_running{};
inline TaskHeader* current_task() noexcept { return tls_running.task; }
// The scheduler of the task this thread runs, if it runs one.
inline SchedulerCore* current_core() noexcept { return tls_running.core; }

// A sentinel no node can have as an address: the waiters list is closed.
inline WaitNode* closed_list() noexcept { return reinterpret_cast<WaitNode*>(std::uintptr_t{1}); }

// Tears down a task whose last reference went; see release().
void destroy(TaskHeader* task) noexcept;

// `task` failed and one reference is left, perhaps only its scheduler's
// failure log's (every future dropped): the log then keeps the error alone
// and the block goes back to the pool (task_scheduler.cpp).
void release_if_only_the_failure_is_kept(SchedulerCore* core, TaskHeader* task) noexcept;

// Drops `count` references held by the caller; the last frees the block
// back to its pool (or deletes a promise's state).
inline void release(TaskHeader* task, std::int32_t count = 1) noexcept {
  // acquire: if ours are the only references, nobody else can add or drop
  // one, so no read-modify-write is needed; acq_rel otherwise: the last
  // owner must see every other owner's writes (the result, the error)
  // before tearing the block down.
  if (task->refs.load(std::memory_order_acquire) == count) {
    destroy(task);
    return;
  }
  // Read before the decrement, after which another owner may free the
  // task: whether it failed (final once complete), and where.
  SchedulerCore* const failed_in = task->is_complete() && task->error ? task->core : nullptr;
  const std::int32_t before = task->refs.fetch_sub(count, std::memory_order_acq_rel);
  if (before == count) {
    destroy(task);
  } else if (failed_in != nullptr && before == count + 1) [[unlikely]] {
    release_if_only_the_failure_is_kept(failed_in, task);
  }
}

// Blocks until `task` is complete (see Future::wait).
void wait_for(const TaskHeader& task);

// get() is about to rethrow `task`'s error: wait(scheduler) no longer
// reports it (see SchedulerCore::observe). Only tasks' failures are
// recorded; nothing to do for a when-all or a promise.
void note_failure_observed(const TaskHeader& task) noexcept;

inline void retain(TaskHeader* task) noexcept {
  // relaxed: a new reference is made from an existing one, which keeps the
  // task alive meanwhile; only the last release needs ordering.
  task->refs.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace detail
}  // namespace weft

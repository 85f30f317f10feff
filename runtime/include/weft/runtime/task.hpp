// The in-memory form of a dynamic task (Kokkos report 2.3): one pool block
// holding a small header followed by the functor's bytes and its result, in
// the spirit of the DyND kernel prefix. Internal to the task-DAG; users see
// TaskScheduler, Future and TaskMember.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>

#include <weft/backends/initial_exec_tls.hpp>
#include <weft/backends/memory_space.hpp>
#include <weft/memory/memory_pool.hpp>
#include <weft/runtime/job.hpp>

namespace weft {

class WorkerContext;

// What a task's operator() receives: where it runs. On CPU workers a team is
// one thread (Kokkos' choice for "heavy" cores), so TaskTeam and TaskSingle
// tasks see team_size() == 1 and team_barrier() returns at once.
class TaskMember {
 public:
  explicit TaskMember(WorkerContext& worker) noexcept : worker_(&worker) {}
  int team_rank() const noexcept { return 0; }
  int team_size() const noexcept { return 1; }
  void team_barrier() const noexcept {}
  WorkerContext& worker() const noexcept { return *worker_; }

 private:
  WorkerContext* worker_;
};

// What get() throws for a task or graph run that was cancelled.
class Cancelled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

class SchedulerCore;
struct FutureAccess;

enum class TaskState : std::uint8_t { Waiting, Executing, Complete };
// Event: no functor; completed from outside the task-DAG (a graph run ending).
enum class TaskKind : std::uint8_t { Single, Team, WhenAll, Event };

inline const char* to_string(TaskState s) noexcept {
  return s == TaskState::Waiting ? "waiting" : s == TaskState::Executing ? "executing" : "complete";
}

struct TaskHeader;

// Per functor type: how to run the task and tear down its parts.
struct TaskOps {
  void (*execute)(TaskHeader& task, TaskMember& member);  // calls the functor
  void (*destroy_functor)(TaskHeader& task) noexcept;     // at completion
  void (*destroy_result)(TaskHeader& task) noexcept;  // when the last reference goes (null: nothing to do)
};

// One entry of a task's list of waiters. A task or an event waits through
// the node in its own header; a when-all has a node per dependence, so that
// it waits on all of them at once (see SchedulerCore::add_to_when_all).
struct WaitNode {
  WaitNode* next = nullptr;
  TaskHeader* waiter = nullptr;  // whom the node belongs to
};

struct TaskHeader : Job {
  explicit TaskHeader(Invoke run) noexcept : Job(run) { wait_node.waiter = this; }

  const TaskOps* ops = nullptr;       // null for when-all entities
  SchedulerCore* core = nullptr;      // its block returns to core->free_block()
  void* functor = nullptr;            // respawn() checks `this` against it
  void* result = nullptr;             // the value Future<T>::get() returns
  std::atomic<std::int32_t> refs{0};  // futures, dependents, and the scheduler until complete
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

// Drops `count` references held by the caller; the last frees the block
// back to its pool.
inline void release(TaskHeader* task, std::int32_t count = 1) noexcept {
  // acquire: if ours are the only references, nobody else can add or drop
  // one, so no read-modify-write is needed; acq_rel otherwise: the last
  // owner must see every other owner's writes (the result, the error)
  // before tearing the block down.
  if (task->refs.load(std::memory_order_acquire) == count ||
      task->refs.fetch_sub(count, std::memory_order_acq_rel) == count) {
    destroy(task);
  }
}

// Blocks until `task` is complete (see Future::wait).
void wait_for(const TaskHeader& task);

inline void retain(TaskHeader* task) noexcept {
  // relaxed: a new reference is made from an existing one, which keeps the
  // task alive meanwhile; only the last release needs ordering.
  task->refs.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace detail
}  // namespace weft

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

struct TaskHeader : Job {
  explicit TaskHeader(Invoke run) noexcept : Job(run) {}

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
  // Tasks and when-all entities waiting for this one: a lock-free LIFO list
  // linked through `next`, closed (kClosedList) once this one completed.
  std::atomic<TaskHeader*> waiters{nullptr};
  TaskHeader* next = nullptr;
  std::exception_ptr error;                   // set before `state` becomes Complete
  std::atomic<bool> cancel_requested{false};  // Future::cancel()
  // When-all entities: dependences follow the header; `scan` is the first
  // one not yet known complete.
  std::uint32_t dependence_count = 0;
  std::uint32_t scan = 0;

  TaskHeader** when_all_dependences() noexcept { return reinterpret_cast<TaskHeader**>(this + 1); }
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
  WorkerContext* worker = nullptr;
  BlockCache* cache = nullptr;
  bool completing = false;  // may `next` be set (only while completing)
  TaskHeader* next = nullptr;
};
inline thread_local constinit RunningTask tls_running{};
inline TaskHeader* current_task() noexcept { return tls_running.task; }

// A sentinel no task can have as an address: the waiters list is closed.
inline TaskHeader* closed_list() noexcept { return reinterpret_cast<TaskHeader*>(std::uintptr_t{1}); }

// Tears down a task whose last reference went; see release().
void destroy(TaskHeader* task) noexcept;

// Drops one reference; the last frees the block back to its pool.
inline void release(TaskHeader* task) noexcept {
  // acquire: if ours is the only reference, nobody else can add or drop one,
  // so no read-modify-write is needed; acq_rel otherwise: the last owner
  // must see every other owner's writes (the result, the error) before
  // tearing the block down.
  if (task->refs.load(std::memory_order_acquire) == 1 ||
      task->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
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

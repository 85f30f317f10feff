// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The dynamic task-DAG (Kokkos report 2.3 and 3.2): tasks spawned at run
// time, each a pool block, with one dependence (a task or a when-all), three
// priorities, respawn instead of blocking waits, and futures for results.
//
//   struct Fib {
//     using value_type = long;
//     weft::TaskScheduler sched;
//     weft::Future<long> fib[2];
//     long n;
//     void operator()(weft::TaskMember&, long& result) {
//       if (n < 2) { result = n; return; }
//       if (!fib[0].is_null()) { result = fib[0].get() + fib[1].get(); return; }
//       fib[0] = weft::task_spawn(weft::TaskSingle(sched, weft::TaskPriority::High), Fib{sched, {}, n - 2});
//       fib[1] = weft::task_spawn(weft::TaskSingle(sched), Fib{sched, {}, n - 1});
//       weft::TaskScheduler::respawn(this, sched.when_all(fib, 2), weft::TaskPriority::High);
//     }
//   };
//   weft::MemoryPool<weft::HostSpace> pool(weft::HostSpace{}, 64 << 20);
//   weft::TaskScheduler sched(executor, pool);
//   weft::Future<long> f = weft::host_spawn(weft::TaskSingle(sched), Fib{sched, {}, 25});
//   weft::wait(sched);   // every task, including those spawned by tasks
//   f.get();             // 75025
//
// Functors: `value_type` (optional; void when absent) and
// `void operator()(TaskMember&, value_type&)`, or `void operator()(TaskMember&)`
// for void. The functor is copied or moved into the task's block at spawn
// and destroyed when the task completes; the result lives until the last
// future referring to the task is gone.
//
// Life cycle (report 2.3.1): spawn allocates one block from the pool (no
// other allocation), constructs the functor and enqueues the task, waiting
// on its dependence if that is incomplete. A running task may request
// respawn(this, dependence or scheduler, priority): when operator() returns
// the task is not complete, its dependents keep waiting, and it is enqueued
// again. Otherwise it is complete, its waiters become ready, and its block
// is kept while a future refers to it.
//
// Errors (docs/tasks.md has examples):
//   - a spawn (or when_all) the pool cannot satisfy returns a null future and
//     changes nothing else: the scheduler stays usable;
//   - an exception thrown by a task completes that task with the exception:
//     get() rethrows it;
//   - a task spawned after a failed task (TaskSingle(future)) does not run:
//     it completes with the same exception, and so on down the graph; a
//     when-all completes once every one of its dependences has, with the
//     first failure among them;
//   - a task that respawned on a failed task (or on a when-all one of whose
//     dependences failed) runs again: get() on that dependence's future
//     rethrows, so it may catch the error and complete normally, or let it
//     propagate and fail with it;
//   - wait(scheduler) rethrows the first failure that no get() has observed
//     (rethrown) by then, and forgets the others: a failure a task caught
//     from a child's get() is not reported again; one whose futures were all
//     dropped is (unlike Taskflow, which drops it). Each failed task counts
//     on its own: get() on a task spawned after a failed one observes that
//     task's failure, not its dependence's, and get() on a when-all observes
//     none. A failed task keeps its block while a future or dependent can
//     still observe it; after that only its error is kept for wait();
//   - respawn() outside the task's own operator(), or twice in one call,
//     throws std::logic_error (which fails that task); so does wait() from
//     inside a task of the same scheduler, and spawning GPU-domain work on an
//     executor without GPU-priority workers.
//
// Memory: each task, when-all and event is one pool block. Workers keep a
// few freed blocks per size for the scheduler's next spawns (BlockCache):
// while tasks run, the pool's statistics count those as consumed; once
// wait(scheduler) returns, and after the scheduler is gone, the pool holds
// exactly the blocks that futures still refer to. live_blocks() and
// high_water_blocks() never count cached blocks. A worker whose allocation
// fails returns its own cached blocks and tries again; blocks cached by other
// workers are not available to it meanwhile, so a spawn can return null
// slightly before the pool is truly full. Each worker caches at most an
// eighth of the pool's blocks of a size divided by the number of workers
// (none in a pool too small for that; BlockCache::kCapacity at most), so
// all caches together hold at most an eighth of the pool; and nothing in a
// pool of fewer than 16 superblocks per worker, where cached blocks could
// keep superblocks from other block sizes.
//
// Priorities: see TaskPriority (job.hpp) for the exact guarantee. A High
// task made ready by a completion on a CPU worker runs next on that worker
// without a trip through its deque (the order the deque would give). A CPU
// worker that finishes a task and pops another task of the same scheduler
// from its own deques (the job its loop would take next) runs it without
// returning to its loop. Domains: a policy made with Domain::Gpu runs its
// task on a GPU-priority worker (host virtual devices on machines without a
// GPU).
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <weft/backends/memory_space.hpp>
#include <weft/memory/memory_pool.hpp>
#include <weft/runtime/detail/scheduler_core.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/future.hpp>
#include <weft/runtime/task.hpp>

namespace weft {

class TaskScheduler;

// What a spawn needs: which scheduler, the dependence, priority and domain.
// Made by TaskSingle / TaskTeam; use it right away (it does not own anything).
struct TaskPolicy {
  detail::SchedulerCore* core = nullptr;
  detail::TaskHeader* dependence = nullptr;
  TaskPriority priority = TaskPriority::Regular;
  Domain domain = Domain::Cpu;
  detail::TaskKind kind = detail::TaskKind::Single;
};

class TaskScheduler {
 public:
  using member_type = TaskMember;
  using memory_pool = MemoryPool<HostSpace>;

  TaskScheduler() noexcept = default;  // null: cannot spawn
  // Tasks run on `executor` and live in `pool`; both must outlive the
  // scheduler, and the scheduler every future of its tasks (checked in
  // debug builds and with WEFT_CHECK_LIFETIMES=1: docs/tasks.md).
  TaskScheduler(Executor& executor, const memory_pool& pool)
      : core_(std::make_shared<detail::SchedulerCore>(executor, pool)) {}

  // Copies share the scheduler (Kokkos' shared ownership), except copies
  // made inside one of its own running tasks: those only refer to it, which
  // spares every spawned functor two atomic updates of one shared counter.
  // They are safe wherever the task's functor keeps them, since a scheduler
  // cannot go away while its tasks are incomplete; do not let such a copy
  // escape the task into longer-lived storage.
  TaskScheduler(const TaskScheduler& other) : core_(share(other.core_)) {}
  TaskScheduler(TaskScheduler&&) noexcept = default;
  TaskScheduler& operator=(const TaskScheduler& other) {
    core_ = share(other.core_);
    return *this;
  }
  TaskScheduler& operator=(TaskScheduler&&) noexcept = default;
  // When the last shared copy goes while tasks are incomplete (an exception
  // between a spawn and wait(scheduler), say), it waits for them and says so
  // on stderr; from inside one of its own tasks it cannot, and terminates.
  ~TaskScheduler() = default;

  bool is_null() const noexcept { return core_ == nullptr; }
  const memory_pool* memory() const noexcept { return core_ ? &core_->pool() : nullptr; }
  Executor& executor() const { return core().executor(); }

  // A future complete when every one of `count` futures is (null ones count
  // as complete). It takes one pool block of sizeof(detail::TaskHeader) +
  // 16 * count bytes (112 + 16 * count on x86-64), and is null if the pool
  // has no such block (beyond the pool's largest block size, always).
  template <class T>
  Future<> when_all(const Future<T>* futures, std::size_t count) const;
  // The same over futures generated by gen(i) for i in [0, count).
  template <class Generator>
  Future<> when_all(std::size_t count, Generator&& gen) const;

  // From inside a running task's operator(), with `this`: run the task again
  // once `dependence` is complete (or as soon as possible, given a scheduler).
  template <class F, class T>
  static void respawn(F* self, const Future<T>& dependence, TaskPriority priority = TaskPriority::Regular) {
    request_respawn(self, detail::FutureAccess::task(dependence), priority, false);
  }
  // The same, taking over the future's reference (it is left null): one
  // reference count increment and decrement fewer, as for
  // `respawn(this, sched.when_all(...))` or `respawn(this, std::move(f))`.
  // If the request throws, the future keeps its reference.
  template <class F, class T>
  static void respawn(F* self, Future<T>&& dependence, TaskPriority priority = TaskPriority::Regular) {
    request_respawn(self, detail::FutureAccess::task(dependence), priority, true);
    detail::FutureAccess::forget(dependence);
  }
  template <class F>
  static void respawn(F* self, const TaskScheduler&, TaskPriority priority = TaskPriority::Regular) {
    request_respawn(self, nullptr, priority, false);
  }

  // See SchedulerCore::track_memory.
  void track_memory(bool on) const { core().track_memory(on); }
  std::int64_t live_blocks() const { return core().live_blocks(); }
  std::int64_t high_water_blocks() const { return core().high_water_blocks(); }
  void reset_high_water() const { core().reset_high_water(); }
  std::int64_t failed_allocations() const { return core().failed_allocations(); }
  std::int64_t active_tasks() const { return core().active_tasks(); }

  detail::SchedulerCore& core() const {
    if (core_ == nullptr)
      throw std::logic_error("TaskScheduler: this scheduler is null (default-constructed)");
    return *core_;
  }

 private:
  static std::shared_ptr<detail::SchedulerCore> share(const std::shared_ptr<detail::SchedulerCore>& core) {
    if (core != nullptr && detail::current_core() == core.get()) {
      return std::shared_ptr<detail::SchedulerCore>(std::shared_ptr<void>(), core.get());  // non-owning
    }
    return core;
  }
  // adopt: the caller's reference on `dependence` passes to the task
  // (otherwise the task takes one of its own).
  static void request_respawn(const void* self, detail::TaskHeader* dependence, TaskPriority priority,
                              bool adopt);
  std::shared_ptr<detail::SchedulerCore> core_;
};

inline TaskPolicy TaskSingle(const TaskScheduler& scheduler, TaskPriority priority = TaskPriority::Regular,
                             Domain domain = Domain::Cpu) {
  return {&scheduler.core(), nullptr, priority, domain, detail::TaskKind::Single};
}
// After `dependence` completes; on the scheduler that spawned it.
template <class T>
TaskPolicy TaskSingle(const Future<T>& dependence, TaskPriority priority = TaskPriority::Regular,
                      Domain domain = Domain::Cpu) {
  detail::TaskHeader* task = detail::FutureAccess::task(dependence);
  if (task == nullptr) throw std::invalid_argument("TaskSingle: the dependence future is null");
  if (task->core == nullptr) {
    throw std::invalid_argument(
        "TaskSingle: the dependence future has no scheduler (it comes from a Promise or a graph run); "
        "name one: TaskSingle(scheduler, future)");
  }
  return {task->core, task, priority, domain, detail::TaskKind::Single};
}
// On `scheduler`, after `dependence` completes (a task of any scheduler, a
// Promise's future, a graph run); a null dependence counts as complete.
template <class T>
TaskPolicy TaskSingle(const TaskScheduler& scheduler, const Future<T>& dependence,
                      TaskPriority priority = TaskPriority::Regular, Domain domain = Domain::Cpu) {
  return {&scheduler.core(), detail::FutureAccess::task(dependence), priority, domain,
          detail::TaskKind::Single};
}
// A task for a thread team; on CPU workers a team is one thread (TaskMember).
inline TaskPolicy TaskTeam(const TaskScheduler& scheduler, TaskPriority priority = TaskPriority::Regular,
                           Domain domain = Domain::Cpu) {
  TaskPolicy p = TaskSingle(scheduler, priority, domain);
  p.kind = detail::TaskKind::Team;
  return p;
}
template <class T>
TaskPolicy TaskTeam(const Future<T>& dependence, TaskPriority priority = TaskPriority::Regular,
                    Domain domain = Domain::Cpu) {
  TaskPolicy p = TaskSingle(dependence, priority, domain);
  p.kind = detail::TaskKind::Team;
  return p;
}

namespace detail {

template <class F>
auto spawn(const TaskPolicy& policy, F&& functor) {
  using Functor = std::decay_t<F>;
  using R = typename task_value<Functor>::type;
  using Block = TaskBlock<Functor, R>;
  static_assert(alignof(Block) <= 64, "task functors may need at most 64-byte alignment");
  if (policy.core == nullptr) throw std::invalid_argument("spawn: the task policy has no scheduler");
  SchedulerCore& core = *policy.core;
  if (policy.domain == Domain::Gpu && core.executor().gpu_worker_count() == 0) {
    throw std::logic_error(
        "spawn: a GPU-domain task needs GPU-priority workers, and this scheduler's executor " +
        core.executor().no_gpu_workers_reason() + ", or spawn it with Domain::Cpu");
  }
  void* memory = core.allocate(sizeof(Block));
  if (memory == nullptr) return FutureAccess::adopt<R>(nullptr);
  Block* block;
  try {
    block = ::new (memory) Block(std::forward<F>(functor));
  } catch (...) {
    core.free_block(memory, sizeof(Block));
    throw;
  }
  block->ops = &Block::kOps;
  block->core = &core;
  block->functor = &block->body;
  block->result = &block->value;
  block->kind = policy.kind;
  block->priority = policy.priority;
  block->domain = policy.domain;
  block->block_size = static_cast<std::uint32_t>(sizeof(Block));
  // One reference for the future returned, one the scheduler drops at completion.
  block->refs.store(2, std::memory_order_relaxed);
  if (policy.dependence != nullptr) retain(policy.dependence);
  core.spawn(block, policy.dependence);
  return FutureAccess::adopt<R>(block);
}

}  // namespace detail

// Spawns from outside any task (the host's main thread, say).
template <class F>
auto host_spawn(const TaskPolicy& policy, F&& functor) {
  return detail::spawn(policy, std::forward<F>(functor));
}

// Spawns from inside a running task.
template <class F>
// Always inline: one call layer fewer on the hottest path of a task graph.
[[gnu::always_inline]] inline auto task_spawn(const TaskPolicy& policy, F&& functor) {
  if (detail::current_task() == nullptr) {
    throw std::logic_error("task_spawn: called outside a running task; use host_spawn");
  }
  return detail::spawn(policy, std::forward<F>(functor));
}

namespace detail {

// Builds a when-all entity in one pool block, waiting for the futures
// dependence(i) returns (null ones count as complete). Each is handed over
// while the future holds its task, which is all the entity needs: it joins
// the task's list of waiters (or counts it done) and never looks at it again.
template <class DependenceAt>
Future<> make_when_all(SchedulerCore& core, std::size_t count, DependenceAt&& dependence) {
  // An empty when-all waits for one null dependence: it completes at once.
  const std::size_t slots = std::max<std::size_t>(count, 1);
  TaskHeader* entity = core.allocate_when_all(slots);
  if (entity == nullptr) return Future<>();
  std::size_t added = 0;
  try {
    for (; added < count; ++added) {
      const auto& future = dependence(added);
      core.add_to_when_all(entity, added, FutureAccess::task(future));
    }
  } catch (...) {
    // The rest count as complete, so that the entity completes (and its
    // block goes back) once the dependences it joined have.
    for (std::size_t i = added; i < slots; ++i) core.add_to_when_all(entity, i, nullptr);
    release(entity);
    throw;
  }
  if (count == 0) core.add_to_when_all(entity, 0, nullptr);
  return FutureAccess::adopt<void>(entity);
}

}  // namespace detail

// when_all over an array of futures, on the scheduler of the first task
// among them. Null when every future is null (there is nothing to wait
// for) or the pool is exhausted. Futures of promises (graph runs) may be
// among them, but not alone: they have no scheduler (use
// TaskScheduler::when_all, which throws std::invalid_argument saying so).
template <class T>
Future<> when_all(const Future<T>* futures, std::size_t count) {
  bool any = false;
  for (std::size_t i = 0; i < count; ++i) {
    detail::TaskHeader* t = detail::FutureAccess::task(futures[i]);
    any = any || t != nullptr;
    if (t != nullptr && t->core != nullptr) {
      return detail::make_when_all(*t->core, count,
                                   [&](std::size_t k) -> const Future<T>& { return futures[k]; });
    }
  }
  if (any) {
    throw std::invalid_argument(
        "when_all: none of the futures is a task's, so there is no scheduler to make the when-all on; use "
        "scheduler.when_all(futures, count)");
  }
  return Future<>();
}

template <class T>
Future<> TaskScheduler::when_all(const Future<T>* futures, std::size_t count) const {
  return detail::make_when_all(core(), count, [&](std::size_t k) -> const Future<T>& { return futures[k]; });
}

template <class Generator>
Future<> TaskScheduler::when_all(std::size_t count, Generator&& gen) const {
  return detail::make_when_all(core(), count, [&](std::size_t k) { return gen(k); });
}

// Blocks until every task of the scheduler, including those spawned by
// running tasks, is complete; then rethrows the first failure since the
// last wait that no get() has rethrown (see Errors above), and forgets the
// rest. On a worker thread it keeps running other jobs.
inline void wait(const TaskScheduler& scheduler) { scheduler.core().wait(); }

}  // namespace weft

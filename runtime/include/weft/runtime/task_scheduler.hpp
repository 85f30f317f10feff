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
// Errors:
//   - a spawn (or when_all) the pool cannot satisfy returns a null future and
//     changes nothing else: the scheduler stays usable;
//   - an exception thrown by a task completes that task with the exception:
//     get() rethrows it, and wait(scheduler) rethrows the first one;
//   - tasks depending on a failed task do not run: they complete with the
//     same exception, and so on down the graph; a when-all completes once
//     every one of its dependences has, with the first failure among them;
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
#include <weft/runtime/executor.hpp>
#include <weft/runtime/future.hpp>
#include <weft/runtime/task.hpp>

namespace weft {

class TaskScheduler;

namespace detail {

// A worker's stash of free pool blocks for one scheduler, by block size
// (the pool's smallest block size times 1, 2, 4, 8), reused newest first:
// a task's block is usually still in this core's cache when the next spawn
// wants one, and taking it costs no atomic operation. Used only by the worker
// while it runs one of the scheduler's tasks (`busy` held, see
// SchedulerCore::invoke); returned to the pool when a size's stash
// overflows, when a pool allocation fails, by wait() and by the scheduler's
// destructor (see SchedulerCore::flush_caches).
struct alignas(64) BlockCache {
  static constexpr std::size_t kSizes = 4;
  static constexpr std::uint32_t kCapacity = 32;  // blocks per size
  std::atomic<bool> busy{false};
  std::uint32_t count[kSizes] = {};
  void* blocks[kSizes][kCapacity];
};

// The scheduler's shared state; see task_scheduler.cpp.
class SchedulerCore {
 public:
  SchedulerCore(Executor& executor, const MemoryPool<HostSpace>& pool);
  ~SchedulerCore();
  SchedulerCore(const SchedulerCore&) = delete;
  SchedulerCore& operator=(const SchedulerCore&) = delete;

  Executor& executor() const noexcept { return executor_; }
  const MemoryPool<HostSpace>& pool() const noexcept { return pool_; }

  // One block of at least `bytes`, or nullptr (counted as a failed spawn).
  // Inside one of this scheduler's tasks it comes from the worker's block
  // cache when that has one of the right size.
  void* allocate(std::size_t bytes) noexcept {
    if (BlockCache* cache = local_cache()) {
      const std::size_t c = size_class(bytes);
      if (c < BlockCache::kSizes && cache->count[c] != 0) {
        note_allocated();
        return cache->blocks[c][--cache->count[c]];
      }
    }
    return allocate_from_pool(bytes);
  }
  // Gives back a block from allocate(bytes): to the worker's cache inside
  // one of this scheduler's tasks, else to the pool.
  void free_block(void* block, std::size_t bytes) noexcept {
    if (BlockCache* cache = local_cache();
        cache != nullptr && !track_memory_.load(std::memory_order_relaxed)) {
      const std::size_t c = size_class(bytes);
      if (c < BlockCache::kSizes && cache->count[c] < cache_limit_[c]) {
        cache->blocks[c][cache->count[c]++] = block;
        return;
      }
    }
    free_block_slowly(block, bytes);
  }

  // Enqueues a freshly spawned task on `dependence` (a reference the task now
  // owns; null for none). Counts it as incomplete until it completes.
  void spawn(TaskHeader* task, TaskHeader* dependence) {
    WorkerContext* worker = calling_worker();
    count(worker, +1);
    if (dependence == nullptr && worker != nullptr) {
      worker->push(task, task->domain, task->priority);
      return;
    }
    schedule(task, dependence, worker);
  }

  // True when every spawned task has completed (see the counting below).
  bool all_complete() const noexcept;

  // A when-all entity waiting for `count` dependences, or nullptr when the
  // pool is exhausted. The caller then hands it each dependence once, with
  // add_to_when_all(entity, i, dependence) for i in [0, count); it completes
  // once every one of them has.
  TaskHeader* allocate_when_all(std::size_t count) noexcept;
  // `dependence` (null counts as complete) must stay alive during the call
  // (the caller holds a future to it); the entity takes no reference to it.
  void add_to_when_all(TaskHeader* entity, std::size_t i, TaskHeader* dependence);

  // A dependence outside this scheduler (a task of another one, a
  // promise), which `waiter` (one of ours) waited for, completed (with
  // `error`, if set): the waiter becomes ready, or the when-all counts it.
  void dependence_done_elsewhere(TaskHeader* waiter, const std::exception_ptr& error);

  void wait();

  // Memory use, for tests and benchmarks: off by default (it costs an atomic
  // update per allocation); high_water counts blocks live at once: blocks
  // holding a task, a when-all or an event, not blocks waiting in a cache.
  void track_memory(bool on) noexcept { track_memory_.store(on, std::memory_order_relaxed); }
  std::int64_t live_blocks() const noexcept { return live_blocks_.load(std::memory_order_relaxed); }
  std::int64_t high_water_blocks() const noexcept { return high_water_.load(std::memory_order_relaxed); }
  void reset_high_water() noexcept { high_water_.store(live_blocks(), std::memory_order_relaxed); }
  std::int64_t failed_allocations() const noexcept {
    return failed_allocations_.load(std::memory_order_relaxed);
  }
  // Tasks spawned and not complete (a snapshot while tasks run).
  std::int64_t active_tasks() const noexcept;

  static void invoke(Job& job, WorkerContext& worker);

  // Returns every cached block to the pool, skipping caches in use by a task
  // running right now (there are none once all tasks are complete).
  void flush_caches() noexcept;

 private:
  // Counting incomplete tasks without a shared hot counter: each worker
  // owns a shard it alone writes (a load and a release store, no
  // read-modify-write); threads outside the pool share one more. A shard
  // packs a version (high 32 bits, bumped by every change) and the shard's
  // net count (low 32 bits, wrapping: only the sum over shards means
  // anything, and it is below 2^32). all_complete() reads every shard twice;
  // if no version moved in between, the first reading was one consistent
  // moment, and its sum is the number of incomplete tasks then. (A task is
  // spawned before it completes, and the acquire reads see the spawn's
  // shard write whenever they see the completion's.)
  struct alignas(64) Shard {
    std::atomic<std::uint64_t> word{0};
  };
  void count(WorkerContext* worker, std::int32_t delta) noexcept {
    if (worker == nullptr) {
      count_external(delta);
      return;
    }
    std::atomic<std::uint64_t>& word = shards_[static_cast<std::size_t>(worker->index())].word;
    const std::uint64_t old = word.load(std::memory_order_relaxed);  // we are its only writer
    const std::uint64_t version = (old >> 32) + 1;
    const std::uint32_t net = static_cast<std::uint32_t>(old) + static_cast<std::uint32_t>(delta);
    // release: pairs with the acquire reads in read_counts(); whoever sees
    // this count also sees the task's effects (and, for a completion, its
    // spawn's count, which happened before it).
    word.store((version << 32) | net, std::memory_order_release);
  }
  void count_external(std::int32_t delta) noexcept;
  void read_counts(std::uint32_t& sum, std::uint64_t& version_sum) const noexcept;

  // The worker running the calling thread, if it is one of the executor's.
  WorkerContext* calling_worker() const noexcept {
    if (tls_running.worker != nullptr && tls_running.core == this) return tls_running.worker;
    return executor_.this_worker();
  }
  // The calling worker's cache, if it runs one of this scheduler's tasks and holds it.
  BlockCache* local_cache() const noexcept {
    return tls_running.cache != nullptr && tls_running.core == this ? tls_running.cache : nullptr;
  }
  // Which of a cache's stashes holds blocks for `bytes` (>= kSizes: none).
  std::size_t size_class(std::size_t bytes) const noexcept {
    if (bytes <= (std::size_t{1} << min_block_lg2_)) return 0;
    return static_cast<std::size_t>(std::bit_width(bytes - 1)) - min_block_lg2_;
  }
  void free_block_slowly(void* block, std::size_t bytes) noexcept;
  void spill(BlockCache& cache, std::size_t size_class, std::uint32_t keep) noexcept;
  void* allocate_from_pool(std::size_t bytes) noexcept;
  void note_allocated() noexcept {
    if (track_memory_.load(std::memory_order_relaxed)) note_allocated_slowly();
  }
  void note_allocated_slowly() noexcept;

  // Returns whether the task was pushed as ready (no dependence, or a
  // complete one), rather than left waiting on the dependence.
  bool schedule(TaskHeader* task, TaskHeader* dependence, WorkerContext* worker);
  // Runs `task` once: true when it completed, false when it asked to be
  // respawned (on `respawn_dependence`, which the caller schedules).
  // The per-task path (run, became_ready, finish) is inlined into invoke().
  [[gnu::always_inline]] inline bool run(TaskHeader* task, WorkerContext& worker,
                                         TaskHeader*& respawn_dependence);
  [[gnu::cold, gnu::noinline]] static void execute_traced(TaskHeader& task, TaskMember& member,
                                                          WorkerContext& worker);
  void push_ready(TaskHeader* task, WorkerContext* worker);
  [[gnu::always_inline]] inline void became_ready(TaskHeader* waiter, WorkerContext* worker);
  // Completes `task` with `error`, which it did not run or which threw;
  // returns true (completed), as run() does.
  bool fail(TaskHeader* task, std::exception_ptr error, WorkerContext& worker);
  // Completes `task`, with *error when that is not null (it is moved from).
  void complete(TaskHeader* task, std::exception_ptr* error, WorkerContext* worker);
  // complete()'s last part, all of it for a task that ran without error
  // once its functor is gone: publishes the completion, tells the waiters,
  // drops the scheduler's reference.
  [[gnu::always_inline]] inline void finish(TaskHeader* task, WorkerContext* worker);
  // One of the when-all's dependences completed (with `error`, if set).
  void when_all_dependence_done(TaskHeader* entity, const std::exception_ptr& error, WorkerContext* worker);
  void record_error(const std::exception_ptr& error) noexcept;

  Executor& executor_;
  const MemoryPool<HostSpace>& pool_;
  unsigned min_block_lg2_ = 0;                          // the pool's smallest block, log2
  std::uint32_t cache_limit_[BlockCache::kSizes] = {};  // blocks a worker may cache, per size (<= kCapacity)
  std::unique_ptr<Shard[]> shards_;                     // one per worker of the executor
  std::unique_ptr<BlockCache[]> caches_;                // one per worker of the executor
  Shard external_;                                      // spawns from threads outside the pool
  alignas(64) std::atomic<bool> track_memory_{false};
  std::atomic<std::int64_t> live_blocks_{0};
  std::atomic<std::int64_t> high_water_{0};
  std::atomic<std::int64_t> failed_allocations_{0};
  std::atomic<bool> has_error_{false};
  std::exception_ptr first_error_;
};

template <class F>
struct task_value {
  using type = void;
};
template <class F>
requires requires { typename F::value_type; }
struct task_value<F> {
  using type = typename F::value_type;
};

struct NoResult {};

template <class F, class R>
struct TaskBlock : TaskHeader {
  using Result = std::conditional_t<std::is_void_v<R>, NoResult, R>;

  template <class G>
  explicit TaskBlock(G&& f) : TaskHeader(&SchedulerCore::invoke), body(std::forward<G>(f)), value() {}

  static void execute(TaskHeader& task, TaskMember& member) {
    auto& self = static_cast<TaskBlock&>(task);
    if constexpr (std::is_void_v<R>) {
      self.body(member);
    } else {
      self.body(member, self.value);
    }
  }
  static void destroy_functor(TaskHeader& task) noexcept { static_cast<TaskBlock&>(task).body.~F(); }
  static void destroy_result(TaskHeader& task) noexcept { static_cast<TaskBlock&>(task).value.~Result(); }
  // Null destroy_result: nothing to call for a trivially destructible result.
  static constexpr TaskOps kOps{&execute, &destroy_functor,
                                std::is_trivially_destructible_v<Result> ? nullptr : &destroy_result};

  F body;        // the user's functor
  Result value;  // what operator() writes; Future<R>::get() reads
};

}  // namespace detail

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
  // scheduler and every future of its tasks.
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
        "spawn: a GPU-domain task needs GPU-priority workers, and this scheduler's executor has none");
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
// running tasks, is complete; rethrows the first exception a task threw
// since the last wait. On a worker thread it keeps running other jobs.
inline void wait(const TaskScheduler& scheduler) { scheduler.core().wait(); }

}  // namespace weft

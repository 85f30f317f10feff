// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The task-DAG's shared state (SchedulerCore) and the in-memory form of a
// task with its functor (TaskBlock): what TaskScheduler, spawn and
// when_all run on (task_scheduler.hpp). Internal: users see TaskScheduler.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <type_traits>

#include <weft/backends/memory_space.hpp>
#include <weft/memory/memory_pool.hpp>
#include <weft/runtime/detail/task_header.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/task.hpp>

namespace weft {

class TaskScheduler;

namespace detail {

struct FailureLog;

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

  // Blocks until every task is complete; then rethrows the first failure no
  // get() observed (see record_failure), forgetting the others.
  void wait();
  // get() rethrew `task`'s failure: wait() no longer reports it.
  void observe(const TaskHeader& task) noexcept;
  // If the failure log holds `task`'s last reference (no future can observe
  // it any more), keeps only its error and frees its block.
  void keep_only_the_error(TaskHeader* task) noexcept;

  // Memory use, for tests and benchmarks: off by default (it costs an atomic
  // update per allocation) unless lifetimes are checked; high_water counts
  // blocks live at once: blocks holding a task, a when-all or an event, not
  // blocks waiting in a cache. Turning it off ends the lifetime check.
  void track_memory(bool on) noexcept {
    if (!on) tracked_throughout_.store(false, std::memory_order_relaxed);
    track_memory_.store(on, std::memory_order_relaxed);
  }
  // Whether a scheduler destroyed while futures still hold its blocks
  // aborts, saying so (docs/tasks.md, "Lifetimes"): in debug builds, or
  // with WEFT_CHECK_LIFETIMES=1 (=0 turns it off); memory is then tracked
  // from the start.
  static bool lifetimes_checked() noexcept;
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
  // fail() with the error of `dependence` (whose reference the task held),
  // for a task spawned after it; out of line, off the path of run().
  [[gnu::cold, gnu::noinline]] bool fail_without_running(TaskHeader* task, TaskHeader* dependence,
                                                         WorkerContext& worker);
  // Completes `task`, with *error when that is not null (it is moved from).
  void complete(TaskHeader* task, std::exception_ptr* error, WorkerContext* worker);
  // complete()'s last part, all of it for a task that ran without error
  // once its functor is gone: publishes the completion, tells the waiters,
  // drops the scheduler's reference.
  [[gnu::always_inline]] inline void finish(TaskHeader* task, WorkerContext* worker);
  // One of the when-all's dependences completed (with `error`, if set).
  void when_all_dependence_done(TaskHeader* entity, const std::exception_ptr& error, WorkerContext* worker);
  // Keeps failed `task` (a reference) for wait() until a get() observes it.
  void record_failure(TaskHeader* task) noexcept;
  // Drops every kept failure; rethrows the first of them, if any.
  void rethrow_unobserved();

  Executor& executor_;
  const MemoryPool<HostSpace>& pool_;
  unsigned min_block_lg2_ = 0;                          // the pool's smallest block, log2
  std::uint32_t cache_limit_[BlockCache::kSizes] = {};  // blocks a worker may cache, per size (<= kCapacity)
  std::unique_ptr<Shard[]> shards_;                     // one per worker of the executor
  std::unique_ptr<BlockCache[]> caches_;                // one per worker of the executor
  Shard external_;                                      // spawns from threads outside the pool
  alignas(64) std::atomic<bool> track_memory_{false};
  std::atomic<bool> tracked_throughout_{false};  // live_blocks_ counts every block since construction
  std::atomic<std::int64_t> live_blocks_{0};
  std::atomic<std::int64_t> high_water_{0};
  std::atomic<std::int64_t> failed_allocations_{0};
  std::unique_ptr<FailureLog> failures_;  // failed tasks no get() observed yet
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

}  // namespace weft

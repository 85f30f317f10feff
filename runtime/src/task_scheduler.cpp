// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/runtime/task_scheduler.hpp>

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace weft {
namespace detail {

// Failed tasks that no get() has observed yet, each with the order it
// failed in, for wait(scheduler); see SchedulerCore::record_failure.
struct FailureLog {
  std::mutex mutex;
  std::unordered_map<TaskHeader*, std::uint64_t> unobserved;  // each entry holds a reference
  std::uint64_t failures = 0;                                 // recorded so far: the next one's order
  std::exception_ptr unrecorded;  // the first failure there was no memory to record
  // Failures whose every future was dropped: the error and its order, the
  // task's block already back in the pool.
  std::vector<std::pair<std::uint64_t, std::exception_ptr>> orphaned;
};

namespace {

// Puts `node` on `dependence`'s list of waiters, which the dependence
// drains when it completes; false when the list is closed (it completed).
bool join_waiters(TaskHeader& dependence, WaitNode& node) noexcept {
  WaitNode* head = dependence.waiters.load(std::memory_order_acquire);
  while (head != closed_list()) {
    node.next = head;
    // release: publishes the node (and its waiter) to whoever drains the
    // list; acquire on failure: re-reads the current head.
    if (dependence.waiters.compare_exchange_weak(head, &node, std::memory_order_release,
                                                 std::memory_order_acquire)) {
      return true;
    }
  }
  // acquire: seeing the list closed makes the dependence's error visible.
  return false;
}

}  // namespace

SchedulerCore::SchedulerCore(Executor& executor, const MemoryPool<HostSpace>& pool)
    : executor_(executor),
      pool_(pool),
      min_block_lg2_(
          pool.min_block_size() == 0 ? 0u : static_cast<unsigned>(std::countr_zero(pool.min_block_size()))),
      // Guests run tasks too (a task group's callable that spawns): a shard
      // and a cache for every context.
      shards_(std::make_unique<Shard[]>(static_cast<std::size_t>(executor.context_count()))),
      caches_(std::make_unique<BlockCache[]>(static_cast<std::size_t>(executor.context_count()))),
      failures_(std::make_unique<FailureLog>()) {
  if (lifetimes_checked()) {
    track_memory_.store(true, std::memory_order_relaxed);
    tracked_throughout_.store(true, std::memory_order_relaxed);
  }
  // A worker's cached blocks are out of the other workers' reach, so each
  // worker may cache at most an eighth of the pool's blocks of a size,
  // shared among the workers: a small pool is not emptied into caches (none
  // at all when that rounds to zero), a large one gets full caches. Cached
  // blocks also keep their superblocks from serving other block sizes, so a
  // pool with few superblocks per worker caches nothing.
  const auto workers = static_cast<std::size_t>(std::max(1, executor.worker_count()));
  if (pool.superblock_count() < 16 * workers) return;
  for (std::size_t c = 0; c < BlockCache::kSizes; ++c) {
    const std::size_t block = std::size_t{1} << (min_block_lg2_ + c);
    const std::size_t share = pool.capacity() / block / (8 * workers);
    cache_limit_[c] = static_cast<std::uint32_t>(std::min<std::size_t>(share, BlockCache::kCapacity));
  }
}

SchedulerCore::~SchedulerCore() {
  if (!all_complete()) {
    // Tasks still point here; letting them run on past it would corrupt
    // memory. Most often an exception left the scope between a spawn and
    // wait(scheduler): wait for them, so the exception can be caught, and
    // say so. From inside one of its own tasks that would wait for itself.
    if (current_core() == this) {
      std::fprintf(stderr,
                   "weft: TaskScheduler destroyed inside one of its own tasks with %lld tasks still "
                   "incomplete, which cannot wait for itself; keep a copy of the scheduler outside its tasks "
                   "and call wait(scheduler) before it goes away\n",
                   static_cast<long long>(active_tasks()));
      std::terminate();
    }
    std::fprintf(stderr,
                 "weft: TaskScheduler destroyed with %lld tasks still incomplete; waiting for them (call "
                 "wait(scheduler) before the last copy of the scheduler goes away)\n",
                 static_cast<long long>(active_tasks()));
    executor_.wait_until([this] { return all_complete(); });
  }
  // Failures that neither a get() nor a wait() reported: said, not lost in silence.
  FailureLog& log = *failures_;
  if (!log.unobserved.empty() || !log.orphaned.empty() || log.unrecorded) {
    std::fprintf(stderr,
                 "weft: TaskScheduler destroyed with %zu task failures that no get() or wait(scheduler) "
                 "reported\n",
                 log.unobserved.size() + log.orphaned.size() + (log.unrecorded ? 1 : 0));
  }
  // Taken out first: a release can come back to the log (keep_only_the_error).
  const auto kept = std::exchange(log.unobserved, {});
  for (const auto& [task, order] : kept) release(task);
  flush_caches();
  // Every task is complete and nothing is cached: a block still live is
  // held by a future, a when-all or an event, which will free it through
  // this scheduler, gone by then.
  const std::int64_t held = live_blocks();
  if (held > 0 && tracked_throughout_.load(std::memory_order_relaxed)) {
    std::fprintf(
        stderr,
        "weft: TaskScheduler destroyed while %lld futures (or when-alls, events) still refer to its "
        "tasks; using or dropping them would touch freed memory: drop every future of a scheduler's "
        "tasks before its last copy goes away (checked because %s)\n",
        static_cast<long long>(held),
        std::getenv("WEFT_CHECK_LIFETIMES") != nullptr ? "WEFT_CHECK_LIFETIMES is set" : "a debug build");
    std::abort();
  }
}

bool SchedulerCore::lifetimes_checked() noexcept {
  static const bool checked = [] {
    const char* setting = std::getenv("WEFT_CHECK_LIFETIMES");
    if (setting != nullptr && setting[0] != '\0') return std::string_view(setting) != "0";
#ifdef NDEBUG
    return false;
#else
    return true;
#endif
  }();
  return checked;
}

// ---- blocks ----------------------------------------------------------------
//
// Task, when-all and event blocks come from the pool, through a per-worker
// cache (BlockCache). Why: a spawn's block is then usually one a task of
// this worker freed moments ago, still in its CPU cache, and taking or
// returning it costs no atomic operation; the pool's per-thread hints, by
// contrast, move on to the next superblock whenever the current one is full,
// so a long run walks through the whole pool and misses the CPU cache on
// nearly every block.
//
// Ownership: worker i alone uses caches_[i], and only while it runs one of
// this scheduler's tasks: invoke() takes the cache's `busy` flag (one
// exchange) before the task and gives it back (a release store) before the
// task is counted complete or rescheduled. Whoever else flushes a cache takes
// the same flag, so a flush never overlaps a worker's use.
//
// What stays truthful: the scheduler's live-block count and high-water mark
// count blocks in use, never cached ones. The pool's statistics count cached
// blocks as consumed until they are flushed back, which happens when a
// size's stash is full (half of it goes back), when the pool cannot serve an
// allocation (the calling worker's whole cache goes back, then it retries),
// in wait() once every task is complete, and in the destructor. So after
// wait(scheduler) returns, the pool holds exactly the blocks that futures
// still refer to; while tasks run, up to cache_limit_ blocks of each
// size per worker may sit in caches.

void SchedulerCore::note_allocated_slowly() noexcept {
  const std::int64_t live = live_blocks_.fetch_add(1, std::memory_order_relaxed) + 1;
  std::int64_t seen = high_water_.load(std::memory_order_relaxed);
  while (live > seen && !high_water_.compare_exchange_weak(seen, live, std::memory_order_relaxed)) {
  }
}

void* SchedulerCore::allocate_from_pool(std::size_t bytes) noexcept {
  void* memory = pool_.allocate(bytes);
  if (memory == nullptr) {
    // Blocks of other sizes in this worker's cache may be what the pool lacks.
    if (BlockCache* cache = local_cache()) {
      for (std::size_t c = 0; c < BlockCache::kSizes; ++c) spill(*cache, c, 0);
      memory = pool_.allocate(bytes);
    }
  }
  if (memory == nullptr) {
    failed_allocations_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  note_allocated();
  return memory;
}

void SchedulerCore::free_block_slowly(void* block, std::size_t bytes) noexcept {
  if (track_memory_.load(std::memory_order_relaxed)) live_blocks_.fetch_sub(1, std::memory_order_relaxed);
  if (BlockCache* cache = local_cache()) {
    const std::size_t c = size_class(bytes);
    if (c < BlockCache::kSizes && cache_limit_[c] > 0) {
      if (cache->count[c] >= cache_limit_[c]) spill(*cache, c, cache_limit_[c] / 2);
      cache->blocks[c][cache->count[c]++] = block;
      return;
    }
  }
  pool_.deallocate(block, bytes);
}

void SchedulerCore::spill(BlockCache& cache, std::size_t size_class, std::uint32_t keep) noexcept {
  // The oldest blocks go (the bottom of the stash): the newest are the ones
  // most likely still in the CPU cache. The size given is the class's block
  // size, which fits every block of the class (the pool checks it fits).
  const std::size_t bytes = std::size_t{1} << (min_block_lg2_ + size_class);
  void** blocks = cache.blocks[size_class];
  const std::uint32_t count = cache.count[size_class];
  if (count <= keep) return;
  const std::uint32_t gone = count - keep;
  for (std::uint32_t i = 0; i < gone; ++i) pool_.deallocate(blocks[i], bytes);
  std::memmove(blocks, blocks + gone, keep * sizeof(void*));
  cache.count[size_class] = keep;
}

void SchedulerCore::flush_caches() noexcept {
  const auto n = static_cast<std::size_t>(executor_.context_count());
  for (std::size_t i = 0; i < n; ++i) {
    BlockCache& cache = caches_[i];
    // acquire: pairs with the release store in invoke(), so the worker's
    // last changes to the cache are visible; a busy cache belongs to a task
    // running right now and is left alone.
    if (cache.busy.exchange(true, std::memory_order_acquire)) continue;
    for (std::size_t c = 0; c < BlockCache::kSizes; ++c) spill(cache, c, 0);
    // release: pairs with the acquire exchange in invoke().
    cache.busy.store(false, std::memory_order_release);
  }
}

void SchedulerCore::count_external(std::int32_t delta) noexcept {
  // Threads outside the pool share a shard; a spawn bumps version and count
  // together. seq_cst orders it like the workers' release stores.
  external_.word.fetch_add((std::uint64_t{1} << 32) + static_cast<std::uint32_t>(delta),
                           std::memory_order_seq_cst);
}

void SchedulerCore::read_counts(std::uint32_t& sum, std::uint64_t& version_sum) const noexcept {
  sum = 0;
  version_sum = 0;
  const int n = executor_.context_count();
  for (int i = 0; i <= n; ++i) {
    const std::uint64_t word =
        (i < n ? shards_[static_cast<std::size_t>(i)].word : external_.word).load(std::memory_order_acquire);
    sum += static_cast<std::uint32_t>(word);
    version_sum += word >> 32;  // versions only grow: equal sums mean no shard changed
  }
}

bool SchedulerCore::all_complete() const noexcept {
  std::uint32_t sum_a = 0, sum_b = 0;
  std::uint64_t versions_a = 0, versions_b = 0;
  read_counts(sum_a, versions_a);
  if (sum_a != 0) return false;
  read_counts(sum_b, versions_b);
  return sum_b == 0 && versions_a == versions_b;
}

std::int64_t SchedulerCore::active_tasks() const noexcept {
  std::uint32_t sum = 0;
  std::uint64_t versions = 0;
  read_counts(sum, versions);
  return static_cast<std::int32_t>(sum);
}

bool SchedulerCore::schedule(TaskHeader* task, TaskHeader* dependence, WorkerContext* worker) {
  task->dependence = dependence;
  if (dependence == nullptr) {
    push_ready(task, worker);
    return true;
  }
  // Join the dependence's waiters unless it has completed (list closed).
  if (join_waiters(*dependence, task->wait_node)) return false;
  push_ready(task, worker);
  return true;
}

void SchedulerCore::push_ready(TaskHeader* task, WorkerContext* worker) {
  if (worker != nullptr) {
    worker->push(task, task->domain, task->priority);
  } else {
    executor_.submit(task, task->domain, task->priority);
  }
}

void SchedulerCore::became_ready(TaskHeader* waiter, WorkerContext* worker) {
  // A continuation: a task that waited for the one this worker is completing
  // (a respawned parent, say). When it is a High-priority CPU task, this
  // worker runs it right after, in the same invoke(), instead of pushing it
  // onto its deque and popping it back: the push would put it at the bottom
  // of the High deque, the first place this worker looks, so the order is
  // the same (the priority guarantee holds: nothing is taken before a ready
  // High task), minus a push, a pop, their fences and a wake-up check.
  // Thieves cannot take it meanwhile; it is one task and this worker is
  // about to run it. Only while completing (never for a spawn: a task may
  // wait for what it spawned), one at a time; others are pushed.
  if (tls_running.completing && tls_running.next == nullptr && tls_running.worker == worker &&
      waiter->core == tls_running.core && waiter->priority == TaskPriority::High &&
      waiter->domain == Domain::Cpu && worker->domain() == Domain::Cpu) {
    tls_running.next = waiter;
    return;
  }
  push_ready(waiter, worker);
}

// ---- when-all ---------------------------------------------------------------
//
// A when-all entity counts its dependences down in `pending`. It has one
// wait node per dependence and joins every dependence's list of waiters at
// once, when it is made; a dependence that completes counts it down, and the
// one that brings the count to zero completes it. It holds no reference to
// its dependences: it touches a dependence only while joining its list (the
// caller's future keeps it alive then) and while that dependence completes
// and drains the list (the scheduler's reference keeps it alive then). So a
// when-all over n incomplete tasks costs n joins and at most n - 1 counter
// updates, the last dependence finding the count at one.
//
// Errors: a failed dependence claims the entity's error with the
// kWhenAllFailed bit (the first to claim it writes `error`, then counts
// down); the entity completes with that error once every dependence has
// completed, and its dependents complete with it without running.

TaskHeader* SchedulerCore::allocate_when_all(std::size_t count) noexcept {
  if (count >= TaskHeader::kWhenAllFailed) return nullptr;  // the count needs the bit
  const std::size_t bytes = sizeof(TaskHeader) + count * sizeof(WaitNode);
  void* memory = allocate(bytes);
  if (memory == nullptr) return nullptr;
  // A when-all is never executed as a job: the last dependence completes it.
  auto* entity = ::new (memory) TaskHeader(nullptr);
  entity->core = this;
  entity->kind = TaskKind::WhenAll;
  entity->block_size = static_cast<std::uint32_t>(bytes);
  WaitNode* nodes = entity->when_all_nodes();
  for (std::size_t i = 0; i < count; ++i) ::new (nodes + i) WaitNode{nullptr, entity};
  entity->pending.store(static_cast<std::uint32_t>(count), std::memory_order_relaxed);
  // The future returned, and the scheduler's until the entity completes.
  entity->refs.store(2, std::memory_order_relaxed);
  return entity;
}

void SchedulerCore::add_to_when_all(TaskHeader* entity, std::size_t i, TaskHeader* dependence) {
  if (dependence == nullptr) {
    when_all_dependence_done(entity, nullptr, calling_worker());
  } else if (!join_waiters(*dependence, entity->when_all_nodes()[i])) {
    // Complete already: count it now (the caller's future keeps it alive).
    when_all_dependence_done(entity, dependence->error, calling_worker());
  }  // else counted down when it completes
}

void SchedulerCore::when_all_dependence_done(TaskHeader* entity, const std::exception_ptr& error,
                                             WorkerContext* worker) {
  constexpr std::uint32_t kFailed = TaskHeader::kWhenAllFailed;
  if (error) [[unlikely]] {
    // Claim first, write, then count down (release): whoever counts down
    // last sees the error.
    if ((entity->pending.fetch_or(kFailed, std::memory_order_acq_rel) & kFailed) == 0) entity->error = error;
  }
  // Each dependence counts down exactly once, so one that finds the count
  // at one is the last and needs no read-modify-write (acquire: it sees
  // every other dependence's count-down, and the error written before it).
  if ((entity->pending.load(std::memory_order_acquire) & ~kFailed) == 1 ||
      (entity->pending.fetch_sub(1, std::memory_order_acq_rel) & ~kFailed) == 1) {
    complete(entity, nullptr, worker);
  }
}

void SchedulerCore::invoke(Job& job, WorkerContext& worker) {
  auto* task = static_cast<TaskHeader*>(&job);
  SchedulerCore& core = *task->core;
  // This worker's block cache, unless a task further out on this thread
  // (one waiting inside Future::wait) or a flush holds it. acquire: pairs
  // with the release store below and in flush_caches().
  BlockCache& cache = core.caches_[static_cast<std::size_t>(worker.index())];
  const bool owns_cache = !cache.busy.exchange(true, std::memory_order_acquire);
  const RunningTask outer = tls_running;
  // A CPU worker goes on with the next job of its own deques when that is
  // one of this scheduler's tasks: the job its loop would take next anyway,
  // without giving the cache back and taking it again.
  const bool chain = worker.domain() == Domain::Cpu;
  // Tasks completed here and not counted yet: counted once, when this
  // invoke() returns (the last thing it does with the scheduler). Until
  // then the count overstates what is incomplete, which only keeps wait()
  // waiting, and the task this worker goes on with is incomplete anyway.
  std::int32_t completions = 0;
  // One task, then the continuations its completion made ready (see
  // became_ready), then the tasks this worker pops next.
  while (true) {
    tls_running = RunningTask{task, &core, &worker, owns_cache ? &cache : nullptr, false, nullptr};
    TaskHeader* respawn_dependence = nullptr;
    const bool completed = core.run(task, worker, respawn_dependence);
    TaskHeader* next = tls_running.next;
    // Which job follows. Taken before this task is counted complete or
    // rescheduled: from then on another worker may complete everything,
    // wait() return and the scheduler (and the cache) go away, unless this
    // worker holds another incomplete task of the scheduler, which keeps it.
    // A respawned task waiting for an incomplete dependence is not ready, so
    // popping first changes no order; one that is ready at once is pushed
    // first (it may be the most urgent), and the worker loop pops after it.
    Job* popped = nullptr;
    TaskPriority popped_from = TaskPriority::Regular;
    bool chained = false;  // next is the popped job
    if (next == nullptr && chain &&
        (completed || (respawn_dependence != nullptr && !respawn_dependence->is_complete()))) {
      popped = worker.pop_local(popped_from);
      if (popped != nullptr && popped->invoke == &SchedulerCore::invoke &&
          static_cast<TaskHeader*>(popped)->core == &core) {
        next = static_cast<TaskHeader*>(popped);
        popped = nullptr;
        chained = true;
      }
    }
    if (next == nullptr) {
      tls_running = outer;
      // release: pairs with the acquire exchange of the cache's next user.
      if (owns_cache) cache.busy.store(false, std::memory_order_release);
    }
    if (completed) {
      ++completions;
    } else if (core.schedule(task, respawn_dependence, &worker) && (chained || popped != nullptr)) {
      // The dependence completed after the check above, so the task went
      // onto this worker's deque after the job taken from it: a High task
      // would wait behind a Regular one. Put the job back (it was the newest
      // of its deque) and let the worker loop choose. A chained job, an
      // incomplete task of this scheduler held here, kept the scheduler and
      // the cache alive until now; once it is back in the deque they may go.
      Job* taken = chained ? static_cast<Job*>(next) : popped;
      if (chained) {
        tls_running = outer;
        if (owns_cache) cache.busy.store(false, std::memory_order_release);
      }
      worker.push(taken, Domain::Cpu, popped_from);
      // Last: once counted, wait() may return and the scheduler and pool go away.
      if (completions != 0) core.count(&worker, -completions);
      return;
    }
    if (chained) worker.count_job_run();
    if (next == nullptr) {
      // Not one of this scheduler's tasks: the worker runs it next.
      if (popped != nullptr) worker.run_next(popped);
      // Last, as above.
      if (completions != 0) core.count(&worker, -completions);
      return;
    }
    if (completions >= (1 << 24)) {  // a long chain: `next`, incomplete, keeps the scheduler
      core.count(&worker, -completions);
      completions = 0;
    }
    task = next;
  }
}

bool SchedulerCore::run(TaskHeader* task, WorkerContext& worker, TaskHeader*& respawn_dependence) {
  if (TaskHeader* dep = task->dependence) {
    task->dependence = nullptr;
    // The dependence is complete (that is how we got here). A failed one
    // fails a task spawned after it, which then does not run; a task that
    // respawned on it runs again and sees the failure through get().
    if (dep->error && !task->respawn_requested) [[unlikely]] {
      return fail_without_running(task, dep, worker);
    }
    release(dep);
  }
  if (task->cancel_requested.load(std::memory_order_relaxed)) [[unlikely]] {
    return fail(task, std::make_exception_ptr(Cancelled("the task was cancelled before it ran")), worker);
  }
  task->state.store(TaskState::Executing, std::memory_order_relaxed);
  task->respawn_requested = false;
  TaskMember member(worker);
  try {
    if (worker.tracing()) [[unlikely]] {
      execute_traced(*task, member, worker);
    } else {
      task->ops->execute(*task, member);
    }
  } catch (...) {
    return fail(task, std::current_exception(), worker);
  }
  if (task->respawn_requested) {
    task->priority = task->respawn_priority;
    task->state.store(TaskState::Waiting, std::memory_order_relaxed);
    respawn_dependence = std::exchange(task->respawn_dependence, nullptr);
    return false;
  }
  tls_running.completing = true;
  // complete() without the error and kind checks: the functor's job is
  // done; it may hold futures and schedulers.
  task->ops->destroy_functor(*task);
  finish(task, &worker);
  tls_running.completing = false;
  return true;
}

void SchedulerCore::execute_traced(TaskHeader& task, TaskMember& member, WorkerContext& worker) {
  const std::int64_t start = worker.trace_clock();
  try {
    task.ops->execute(task, member);
  } catch (...) {
    worker.trace("task", task.domain, start);
    throw;
  }
  worker.trace("task", task.domain, start);
}

bool SchedulerCore::fail_without_running(TaskHeader* task, TaskHeader* dependence, WorkerContext& worker) {
  std::exception_ptr error = dependence->error;
  release(dependence);
  return fail(task, std::move(error), worker);
}

bool SchedulerCore::fail(TaskHeader* task, std::exception_ptr error, WorkerContext& worker) {
  if (TaskHeader* unused = std::exchange(task->respawn_dependence, nullptr)) release(unused);
  tls_running.completing = true;
  complete(task, &error, &worker);
  tls_running.completing = false;
  return true;
}

void SchedulerCore::complete(TaskHeader* task, std::exception_ptr* error, WorkerContext* worker) {
  const bool is_task = task->kind == TaskKind::Single || task->kind == TaskKind::Team;
  if (is_task) {
    // The functor's job is done; it may hold futures and schedulers.
    task->ops->destroy_functor(*task);
  }
  if (error != nullptr && *error) [[unlikely]] {
    task->error = std::move(*error);
    // Recorded before the completion is published, so that any get() that
    // sees the failure finds it recorded.
    if (is_task) record_failure(task);
  }
  finish(task, worker);
}

void SchedulerCore::finish(TaskHeader* task, WorkerContext* worker) {
  // release: the result and error are visible to anyone who sees Complete.
  task->state.store(TaskState::Complete, std::memory_order_release);
  // acq_rel: acquire pairs with the release CAS of each waiter that joined.
  WaitNode* node = task->waiters.exchange(closed_list(), std::memory_order_acq_rel);
  // A waiting task holds a reference to this one, its dependence, which it
  // would drop first thing when it runs. Unless there is an error to pass
  // on, it is dropped here instead, with the scheduler's: when nobody else
  // holds this task (a when_all a task respawned on, say), that takes no
  // atomic update at all. Until it is made ready the waiter is ours alone.
  std::int32_t references = 1;  // the scheduler's
  while (node != nullptr) {
    // Read both first: once told, the waiter may run, relink or go away.
    WaitNode* next = node->next;
    TaskHeader* waiter = node->waiter;
    if (waiter->kind != TaskKind::WhenAll && waiter->dependence == task && !task->error) {
      waiter->dependence = nullptr;
      ++references;
    }
    if (waiter->core != this) [[unlikely]] {
      waiter->core->dependence_done_elsewhere(waiter, task->error);
    } else if (waiter->kind == TaskKind::WhenAll) {
      when_all_dependence_done(waiter, task->error, worker);
    } else {
      became_ready(waiter, worker);
    }
    node = next;
  }
  // This scheduler and its pool are still alive: whoever completes a task
  // of it holds it (invoke() counts the task complete last; a completion on
  // behalf of another scheduler counts itself, see dependence_done_elsewhere).
  release(task, references);
}

void SchedulerCore::dependence_done_elsewhere(TaskHeader* waiter, const std::exception_ptr& error) {
  // The caller completed a task of another scheduler or a promise, and may run on a
  // worker of another executor, holding nothing of this scheduler: once the
  // waiter is ready, this scheduler's tasks could all complete, wait()
  // return and the scheduler go away under us. Counting one more task in
  // flight meanwhile prevents that; the count back is the last touch.
  WorkerContext* worker = executor_.this_worker();
  count(worker, +1);
  if (waiter->kind == TaskKind::WhenAll) {
    when_all_dependence_done(waiter, error, worker);
  } else {
    push_ready(waiter, worker);
  }
  count(worker, -1);
}

// ---- failures -------------------------------------------------------------
//
// wait() rethrows a failure only if no get() observed it. Every task that
// fails (it threw, it was cancelled, or a dependence it was spawned after
// failed) is recorded here with a reference, so that its error outlives
// the futures (one whose future was dropped is reported too); get()
// rethrowing a task's error erases its entry (observe()), and wait() takes
// what is left. Under one mutex, off every path that does not fail: a
// failure is recorded before its task is published complete, and get()
// only rethrows an error it saw published, so an observation always finds
// the entry it erases; an entry is erased at most once, by the first get()
// or by wait(). A kept failure holds its task's block until then, or until
// the log's reference is the last (every future dropped: nothing can observe
// it any more), when keep_only_the_error() keeps the error alone.

void SchedulerCore::record_failure(TaskHeader* task) noexcept {
  FailureLog& log = *failures_;
  const std::lock_guard<std::mutex> lock(log.mutex);
  try {
    log.unobserved.emplace(task, log.failures++);
    retain(task);
    return;
  } catch (const std::bad_alloc&) {
  }
  // No memory for an entry: kept as an error get() cannot observe, so it
  // is never lost.
  if (!log.unrecorded) log.unrecorded = task->error;
}

void SchedulerCore::observe(const TaskHeader& task) noexcept {
  TaskHeader* held = nullptr;
  {
    FailureLog& log = *failures_;
    const std::lock_guard<std::mutex> lock(log.mutex);
    const auto entry = log.unobserved.find(const_cast<TaskHeader*>(&task));
    if (entry == log.unobserved.end()) return;  // observed before, or collected by wait()
    held = entry->first;
    log.unobserved.erase(entry);
  }
  release(held);  // not the last reference: the caller's future holds one
}

void SchedulerCore::keep_only_the_error(TaskHeader* task) noexcept {
  {
    FailureLog& log = *failures_;
    const std::lock_guard<std::mutex> lock(log.mutex);
    const auto entry = log.unobserved.find(task);
    // Not there: observed, or taken by wait(). Held elsewhere too: a future
    // (or a dependent) may still observe it. The pointer is compared only
    // until the entry proves the task alive (it holds a reference).
    if (entry == log.unobserved.end() || task->refs.load(std::memory_order_acquire) != 1) return;
    try {
      log.orphaned.emplace_back(entry->second, task->error);
    } catch (const std::bad_alloc&) {
      return;  // no memory to keep the error apart: the task keeps its block instead
    }
    log.unobserved.erase(entry);
  }
  release(task);  // the last reference: the block goes back to the pool
}

void release_if_only_the_failure_is_kept(SchedulerCore* core, TaskHeader* task) noexcept {
  core->keep_only_the_error(task);
}

void SchedulerCore::rethrow_unobserved() {
  std::unordered_map<TaskHeader*, std::uint64_t> kept;
  std::vector<std::pair<std::uint64_t, std::exception_ptr>> orphaned;
  std::exception_ptr first;
  {
    FailureLog& log = *failures_;
    const std::lock_guard<std::mutex> lock(log.mutex);
    kept.swap(log.unobserved);
    orphaned.swap(log.orphaned);
    first = std::exchange(log.unrecorded, nullptr);
  }
  std::uint64_t first_order = std::numeric_limits<std::uint64_t>::max();
  for (const auto& [task, order] : kept) {
    if (order < first_order) {
      first_order = order;
      first = task->error;
    }
  }
  for (const auto& [order, error] : orphaned) {
    if (order < first_order) {
      first_order = order;
      first = error;
    }
  }
  for (const auto& [task, order] : kept) release(task);
  if (first) std::rethrow_exception(first);
}

void note_failure_observed(const TaskHeader& task) noexcept {
  if (task.core != nullptr && (task.kind == TaskKind::Single || task.kind == TaskKind::Team)) {
    task.core->observe(task);
  }
}

void SchedulerCore::wait() {
  if (current_core() == this) {
    throw std::logic_error(
        "wait(scheduler): called from inside one of the scheduler's own tasks, which would wait for "
        "itself; respawn with a dependence instead");
  }
  executor_.wait_until([this] { return all_complete(); });
  flush_caches();
  rethrow_unobserved();
}

}  // namespace detail

void TaskScheduler::request_respawn(const void* self, detail::TaskHeader* dependence, TaskPriority priority,
                                    bool adopt) {
  detail::TaskHeader* task = detail::current_task();
  if (task == nullptr || task->functor != self) {
    throw std::logic_error("respawn: call it from inside the task's own operator(), passing `this`");
  }
  if (task->respawn_requested)
    throw std::logic_error("respawn: requested twice in one execution of the task");
  task->respawn_requested = true;
  task->respawn_priority = priority;
  if (dependence != nullptr && !adopt) detail::retain(dependence);
  task->respawn_dependence = dependence;
}

}  // namespace weft

#include <weft/runtime/task_scheduler.hpp>

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <utility>

namespace weft {
namespace detail {

namespace {

// Sets the running task for respawn() and task_spawn(), restoring the outer
// one afterwards (a worker may run a task while helping inside another).
class CurrentTask {
 public:
  explicit CurrentTask(TaskHeader* task) noexcept : outer_(std::exchange(tls_current_task, task)) {}
  ~CurrentTask() { tls_current_task = outer_; }
  CurrentTask(const CurrentTask&) = delete;
  CurrentTask& operator=(const CurrentTask&) = delete;

 private:
  TaskHeader* outer_;
};

}  // namespace

void release(TaskHeader* task) noexcept {
  // acquire: if ours is the only reference, nobody else can add or drop one,
  // so no read-modify-write is needed; acq_rel otherwise: the last owner
  // must see every other owner's writes (the result, the error) before
  // tearing the block down.
  if (task->refs.load(std::memory_order_acquire) != 1 &&
      task->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) {
    return;
  }
  if (task->ops != nullptr) task->ops->destroy_result(*task);
  const MemoryPool<HostSpace>* pool = task->pool;
  SchedulerCore* core = task->core;
  const std::uint32_t size = task->block_size;
  task->~TaskHeader();
  pool->deallocate(task, size);
  core->note_deallocated();
}

void wait_for(const TaskHeader& task) {
  if (task.is_complete()) return;
  if (task.core == nullptr) throw std::logic_error("Future::wait: the task has no scheduler");
  if (current_task() == &task) throw std::logic_error("Future::wait: a task cannot wait for itself");
  // Woken when a worker runs out of work (and every few ms regardless).
  task.core->executor().wait_until([&task] { return task.is_complete(); });
}

SchedulerCore::SchedulerCore(Executor& executor, const MemoryPool<HostSpace>& pool)
    : executor_(executor),
      pool_(pool),
      shards_(std::make_unique<Shard[]>(static_cast<std::size_t>(executor.worker_count()))) {}

SchedulerCore::~SchedulerCore() {
  if (!all_complete()) {
    // Tasks still point here; letting them run on would corrupt memory.
    std::fprintf(stderr,
                 "weft: TaskScheduler destroyed with %lld tasks still incomplete; call wait(scheduler) "
                 "before the last copy of the scheduler goes away\n",
                 static_cast<long long>(active_tasks()));
    std::terminate();
  }
}

void SchedulerCore::count(WorkerContext* worker, std::int32_t delta) noexcept {
  if (worker == nullptr) {
    // Threads outside the pool share a shard; a spawn bumps version and
    // count together. seq_cst orders it like the workers' release stores.
    external_.word.fetch_add((std::uint64_t{1} << 32) + static_cast<std::uint32_t>(delta),
                             std::memory_order_seq_cst);
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

void SchedulerCore::read_counts(std::uint32_t& sum, std::uint64_t& version_sum) const noexcept {
  sum = 0;
  version_sum = 0;
  const int n = executor_.worker_count();
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

void* SchedulerCore::allocate(std::size_t bytes) noexcept {
  void* memory = pool_.allocate(bytes);
  if (memory == nullptr) {
    failed_allocations_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  if (track_memory_.load(std::memory_order_relaxed)) {
    const std::int64_t live = live_blocks_.fetch_add(1, std::memory_order_relaxed) + 1;
    std::int64_t seen = high_water_.load(std::memory_order_relaxed);
    while (live > seen && !high_water_.compare_exchange_weak(seen, live, std::memory_order_relaxed)) {
    }
  }
  return memory;
}

void SchedulerCore::note_deallocated() noexcept {
  if (track_memory_.load(std::memory_order_relaxed)) live_blocks_.fetch_sub(1, std::memory_order_relaxed);
}

void SchedulerCore::spawn(TaskHeader* task, TaskHeader* dependence) {
  WorkerContext* worker = executor_.this_worker();
  count(worker, +1);
  schedule(task, dependence, worker);
}

void SchedulerCore::schedule(TaskHeader* task, TaskHeader* dependence, WorkerContext* worker) {
  task->dependence = dependence;
  if (dependence == nullptr) {
    push_ready(task, worker);
    return;
  }
  // Join the dependence's waiters unless it has completed (list closed).
  TaskHeader* head = dependence->waiters.load(std::memory_order_acquire);
  do {
    if (head == closed_list()) {
      push_ready(task, worker);
      return;
    }
    task->next = head;
    // release: publishes task->next (and the task) to whoever drains the
    // list; acquire on failure: re-reads the current head.
  } while (!dependence->waiters.compare_exchange_weak(head, task, std::memory_order_release,
                                                      std::memory_order_acquire));
}

void SchedulerCore::push_ready(TaskHeader* task, WorkerContext* worker) {
  if (worker != nullptr) {
    worker->push(task, task->domain, task->priority);
  } else {
    executor_.submit(task, task->domain, task->priority);
  }
}

void SchedulerCore::became_ready(TaskHeader* waiter, WorkerContext* worker) {
  if (waiter->kind == TaskKind::WhenAll) {
    advance_when_all(waiter, worker);
  } else {
    push_ready(waiter, worker);
  }
}

TaskHeader* SchedulerCore::allocate_when_all(std::size_t count) noexcept {
  const std::size_t bytes = sizeof(TaskHeader) + count * sizeof(TaskHeader*);
  void* memory = allocate(bytes);
  if (memory == nullptr) return nullptr;
  // A when-all is never executed as a job: it advances when a dependence completes.
  auto* entity = ::new (memory) TaskHeader(nullptr);
  entity->core = this;
  entity->pool = &pool_;
  entity->kind = TaskKind::WhenAll;
  entity->block_size = static_cast<std::uint32_t>(bytes);
  entity->dependence_count = static_cast<std::uint32_t>(count);
  // The future returned, and the scheduler's until the entity completes.
  entity->refs.store(2, std::memory_order_relaxed);
  return entity;
}

TaskHeader* SchedulerCore::make_event() noexcept {
  void* memory = allocate(sizeof(TaskHeader));
  if (memory == nullptr) return nullptr;
  auto* event = ::new (memory) TaskHeader(nullptr);  // never executed as a job
  event->core = this;
  event->pool = &pool_;
  event->kind = TaskKind::Event;
  event->block_size = static_cast<std::uint32_t>(sizeof(TaskHeader));
  event->refs.store(2, std::memory_order_relaxed);
  return event;
}

void SchedulerCore::complete_event(TaskHeader* event, std::exception_ptr error) {
  complete(event, std::move(error), executor_.this_worker());
}

void SchedulerCore::start_when_all(TaskHeader* entity) { advance_when_all(entity, executor_.this_worker()); }

void SchedulerCore::advance_when_all(TaskHeader* entity, WorkerContext* worker) {
  // Only one thread advances an entity at a time: the one that drained it
  // from a completed dependence's list (or its creator, at first).
  TaskHeader** deps = entity->when_all_dependences();
  while (entity->scan < entity->dependence_count) {
    TaskHeader* dep = deps[entity->scan];
    if (dep == nullptr) {
      ++entity->scan;
      continue;
    }
    if (dep->is_complete()) {
      if (dep->error) {
        complete(entity, dep->error, worker);
        return;
      }
      ++entity->scan;
      continue;
    }
    TaskHeader* head = dep->waiters.load(std::memory_order_acquire);
    bool waiting = false;
    while (head != closed_list()) {
      entity->next = head;
      if (dep->waiters.compare_exchange_weak(head, entity, std::memory_order_release,
                                             std::memory_order_acquire)) {
        waiting = true;
        break;
      }
    }
    if (waiting) return;  // called again when dep completes
    // dep completed meanwhile: look at it again (its error, if any).
  }
  complete(entity, nullptr, worker);
}

void SchedulerCore::invoke(Job& job, WorkerContext& worker) {
  auto* task = static_cast<TaskHeader*>(&job);
  SchedulerCore& core = *task->core;
  if (TaskHeader* dep = std::exchange(task->dependence, nullptr)) {
    // The dependence is complete (that is how we got here); a failure
    // propagates without running this task.
    std::exception_ptr inherited = dep->error;
    release(dep);
    if (inherited) {
      core.complete(task, std::move(inherited), &worker);
      return;
    }
  }
  if (task->cancel_requested.load(std::memory_order_relaxed)) {
    core.complete(task, std::make_exception_ptr(Cancelled("the task was cancelled before it ran")), &worker);
    return;
  }
  task->state.store(TaskState::Executing, std::memory_order_relaxed);
  task->respawn_requested = false;
  std::exception_ptr error;
  {
    CurrentTask running(task);
    TaskMember member(worker);
    const bool traced = worker.tracing();
    const std::int64_t start = traced ? worker.trace_clock() : 0;
    try {
      task->ops->execute(*task, member);
    } catch (...) {
      error = std::current_exception();
    }
    if (traced) worker.trace("task", task->domain, start);
  }
  if (!error && task->respawn_requested) {
    task->priority = task->respawn_priority;
    task->state.store(TaskState::Waiting, std::memory_order_relaxed);
    core.schedule(task, std::exchange(task->respawn_dependence, nullptr), &worker);
    return;
  }
  if (TaskHeader* unused = std::exchange(task->respawn_dependence, nullptr)) release(unused);
  core.complete(task, std::move(error), &worker);
}

void SchedulerCore::complete(TaskHeader* task, std::exception_ptr error, WorkerContext* worker) {
  const bool is_task = task->kind == TaskKind::Single || task->kind == TaskKind::Team;
  if (is_task) {
    // The functor's job is done; it may hold futures and schedulers.
    task->ops->destroy_functor(*task);
  } else if (task->kind == TaskKind::WhenAll) {
    TaskHeader** deps = task->when_all_dependences();
    for (std::uint32_t i = 0; i < task->dependence_count; ++i) {
      if (deps[i] != nullptr) release(std::exchange(deps[i], nullptr));
    }
  }
  if (error) {
    if (is_task) record_error(error);
    task->error = std::move(error);
  }
  // release: the result and error are visible to anyone who sees Complete.
  task->state.store(TaskState::Complete, std::memory_order_release);
  // acq_rel: acquire pairs with the release CAS of each waiter that joined.
  TaskHeader* waiter = task->waiters.exchange(closed_list(), std::memory_order_acq_rel);
  while (waiter != nullptr) {
    TaskHeader* next = waiter->next;  // read first: the waiter may be relinked at once
    became_ready(waiter, worker);
    waiter = next;
  }
  release(task);  // the scheduler's reference; the pool is still alive: we are not counted done yet
  // Last: once counted, wait() may return and the scheduler and pool go away.
  if (is_task) count(worker, -1);
}

void SchedulerCore::record_error(const std::exception_ptr& error) noexcept {
  // The first error wins; wait() reads it after seeing every task counted
  // complete, which the release store in count() orders after this write.
  if (!has_error_.exchange(true, std::memory_order_acq_rel)) first_error_ = error;
}

void SchedulerCore::wait() {
  if (TaskHeader* running = current_task(); running != nullptr && running->core == this) {
    throw std::logic_error(
        "wait(scheduler): called from inside one of the scheduler's own tasks, which would wait for "
        "itself; respawn with a dependence instead");
  }
  executor_.wait_until([this] { return all_complete(); });
  if (has_error_.load(std::memory_order_acquire)) {
    std::exception_ptr error = std::exchange(first_error_, nullptr);
    has_error_.store(false, std::memory_order_relaxed);
    std::rethrow_exception(error);
  }
}

}  // namespace detail

void TaskScheduler::request_respawn(const void* self, detail::TaskHeader* dependence, TaskPriority priority) {
  detail::TaskHeader* task = detail::current_task();
  if (task == nullptr || task->functor != self) {
    throw std::logic_error("respawn: call it from inside the task's own operator(), passing `this`");
  }
  if (task->respawn_requested)
    throw std::logic_error("respawn: requested twice in one execution of the task");
  task->respawn_requested = true;
  task->respawn_priority = priority;
  if (dependence != nullptr) detail::retain(dependence);
  task->respawn_dependence = dependence;
}

}  // namespace weft

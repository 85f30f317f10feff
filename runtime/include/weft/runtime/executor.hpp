// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The work-stealing Executor: a pool of workers with a CPU or a GPU domain
// priority (Ripple section 6), each owning Chase-Lev deques, stealing when
// idle and sleeping on an event count when there is nothing to steal.
//
//   weft::Executor executor({.cpu_workers = 2});
//   weft::TaskGroup group(executor);
//   group.run([] { std::puts("on a worker"); });
//   group.wait();                        // rethrows a job's exception
//
// Jobs (weft::Job) must be ready when submitted; the Executor runs each once
// and never pushes one back. CPU jobs run on any worker. GPU jobs run only on
// GPU-priority workers, which exist when CUDA devices or host virtual devices
// are in use (ExecutorConfig::virtual_devices; a default config has one
// without a GPU), and which prefer GPU work.
//
// Threads outside the pool submit through lock-free MPMC queues; workers push
// onto their own deques. Waiting on a worker thread never idles it: it keeps
// running other ready jobs until what it waits for is done. A thread outside
// the pool that runs a TaskGroup borrows a guest context (borrow_guest()),
// whose deque the workers steal from and whose leftovers it runs itself
// while it waits, as oneTBB's waiting threads do.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <weft/backends/device_registry.hpp>
#include <weft/runtime/chase_lev_deque.hpp>
#include <weft/runtime/detail/futex.hpp>
#include <weft/runtime/event_count.hpp>
#include <weft/runtime/executor_config.hpp>
#include <weft/runtime/job.hpp>
#include <weft/runtime/observer.hpp>
#include <weft/runtime/trace.hpp>
#include <weft/runtime/worker_stats.hpp>

namespace weft {

class Executor;

// The most waits one worker runs one inside another. A wait on a worker
// runs other jobs on the same stack, and one of those may wait in turn; the
// wait past this depth throws std::logic_error instead of overflowing the
// stack (about 16,000 deep on an 8 MiB stack; docs/waiting.md).
inline constexpr int kMaxNestedWaits = 1000;

// The generation a run began in (Executor::begin_run()): wait_for_all()
// waits for the runs of the generation it closes, not for later ones.
enum class RunEpoch : std::uint8_t { even = 0, odd = 1 };

// A worker as the jobs it runs see it: where they push follow-up work.
class WorkerContext {
 public:
  int index() const noexcept { return index_; }
  Domain domain() const noexcept { return domain_; }
  Executor& executor() const noexcept { return *executor_; }
  // A guest is a thread outside the pool running jobs while it waits for a
  // TaskGroup it ran (Executor::borrow_guest()); its index() is
  // worker_count() or more, and its domain CPU.
  bool guest() const noexcept { return guest_; }

  // The observers attached to this worker's executor (observer.hpp), or
  // null: the one check a job makes while nobody observes. A job reads it
  // once and sends both its begin and its end to the list it read. The
  // worker holds that list until its next call here or until it is between
  // jobs, so use the pointer within the job, before any other call here.
  const ObserverList* observers() const noexcept;
  // The same list, shared, for work that reports after the job returned (a
  // GPU node's device span).
  std::shared_ptr<const ObserverList> share_observers() const noexcept;
  // For jobs that report themselves once they ended (tasks, task-group
  // jobs): is anyone observing, the clock, and one node that began at
  // `start_ns` and ends now (its begin and end events, sent together).
  bool tracing() const noexcept { return observers() != nullptr; }
  std::int64_t trace_clock() const noexcept { return observer_clock(); }
  void trace(const char* name, Domain domain, std::int64_t start_ns) const noexcept;
  // The name of the graph node this worker runs, innermost, while observers
  // watch its run (else null): a parallel loop started inside names its
  // helper jobs after it (loop_trace_name in trace.hpp). The work-DAG sets
  // it around an observed node's call and puts the outer one back after.
  const char* node_name() const noexcept { return node_name_; }
  const char* exchange_node_name(const char* name) noexcept { return std::exchange(node_name_, name); }

  // Whether a wait starting now on this worker would be nested deeper than
  // kMaxNestedWaits; check_nested_wait() then throws std::logic_error naming
  // `waiter`. Every wait that runs other jobs meanwhile checks before it starts.
  bool wait_too_deep() const noexcept { return depth_ > kMaxNestedWaits; }
  void check_nested_wait(const char* waiter) const {
    if (wait_too_deep()) [[unlikely]]
      refuse_nested_wait(waiter);
  }
  [[noreturn]] static void refuse_nested_wait(const char* waiter);

  // Makes a ready job runnable. CPU jobs go onto this worker's deque of that
  // priority; GPU jobs onto its GPU deques when it has them, else to the GPU
  // submission queue.
  void push(Job* job, Domain domain = Domain::Cpu, TaskPriority priority = TaskPriority::Regular);

  // For jobs that go on to run what the worker would run next themselves
  // (the task-DAG, which so skips a return to the worker loop per task): the
  // job a CPU-priority worker would take next, popped from its own deques
  // (the most urgent, newest first), or null when they are empty. A caller
  // that runs it itself calls count_job_run(); one that does not hands it
  // back with run_next(), and the worker runs it as soon as the current job
  // returns, before it looks anywhere else. Not for GPU-priority workers
  // (they look at their GPU work first). Null as well inside a job run by a
  // wait on this worker (Executor::run_one): such a wait checks its
  // condition after every job.
  // `from` is set to the priority of the deque it came from, for a caller
  // that has to push it back.
  Job* pop_local(TaskPriority& from) noexcept;
  void count_job_run() noexcept { jobs_run_.add(); }
  void run_next(Job* job) noexcept { next_job_ = job; }

 private:
  friend class Executor;
  WorkerContext(Executor& ex, int index, Domain domain, bool guest = false);

  Executor* executor_;
  int index_;
  Domain domain_;
  bool guest_;
  // A guest's borrower: the address of a thread-local of the thread that
  // borrowed it, null while it is free.
  std::atomic<const void*> borrower_{nullptr};
  // One deque per priority, most urgent first.
  using PriorityDeques = std::array<ChaseLevDeque<Job*>, kTaskPriorities>;
  PriorityDeques cpu_deques_;
  std::unique_ptr<PriorityDeques> gpu_deques_;  // GPU-priority workers only
  // The owner's pop of the most urgent job of its deques (newest first), or
  // null; sets *from, if given, to the priority of the deque it came from.
  static Job* pop_most_urgent(PriorityDeques& deques, TaskPriority* from = nullptr) noexcept;
  // The same over the CPU deques and newest_high_ (which comes first).
  Job* pop_most_urgent_cpu(TaskPriority* from = nullptr) noexcept;
  // The newest High-priority CPU job pushed here, kept out of the High deque
  // (see push_high()). Only the owner stores a job; the owner and thieves
  // take it with an exchange.
  // On its own cache line: thieves read it, the owner writes it often.
  alignas(64) std::atomic<Job*> newest_high_{nullptr};
  void push_high(Job* job) noexcept;
  Job* take_newest_high() noexcept {
    if (newest_high_.load(std::memory_order_relaxed) == nullptr) return nullptr;
    // acquire: pairs with the release in push_high(), for the job's contents.
    return newest_high_.exchange(nullptr, std::memory_order_acquire);
  }
  alignas(64) std::vector<int> victims_;  // steal order (topological)
  std::uint64_t rng_state_;               // random steal strategy
  int round_robin_cursor_;
  Job* next_job_ = nullptr;          // see run_next()
  const char* node_name_ = nullptr;  // see node_name()
  // The list observers() last handed out, held so that the executor may let
  // it go at any time (see Executor::attach); dropped between jobs once stale.
  mutable std::shared_ptr<const ObserverList> held_observers_;
  void hold_current_observers() const noexcept;
  void drop_stale_observers() noexcept;
  int depth_ = 0;              // jobs running on this thread, one inside another's wait
  std::atomic<int> core_{-1};  // written by the worker when pinning fails, read by stats()
  OwnerCounter jobs_run_, steals_, failed_steals_, sleeps_;
  std::thread thread_;
};

class Executor {
 public:
  // Starts the workers. Throws std::invalid_argument for a bad config, and
  // std::system_error (the system's error code; what() names how many worker
  // threads it was starting and how many had started) when the system cannot
  // start a thread (too many, or no memory for a stack): the threads that did
  // start are stopped and joined first, so nothing is left running.
  explicit Executor(ExecutorConfig config = {});
  ~Executor();  // runs every queued job, waits for all runs, then joins the workers

  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Submits a ready job from any thread. Throws std::logic_error for a GPU
  // job when there are no GPU-priority workers. From a worker of this
  // executor it is a push onto that worker's deque of `priority`; from other
  // threads it goes through a submission queue that workers take from in
  // arrival order (the priority applies once the job reaches a deque).
  void submit(Job* job, Domain domain = Domain::Cpu, TaskPriority priority = TaskPriority::Regular);

  // Returns once done() is true. On a worker of this executor it runs other
  // ready jobs meanwhile; elsewhere it sleeps until notify_completion() is
  // called (runs call it when they finish, and every worker calls it when it
  // runs out of work) and checks again, and at least every few milliseconds.
  template <class Pred>
  void wait_until(Pred done);

  // Wakes threads blocked in wait_until() so they re-check their predicate.
  // Touches only the executor, so the caller may have just released the
  // object the waiter will destroy.
  void notify_completion() noexcept;

  // Like wait_until(), for a done() that only turns true just before some
  // run's end_run() on this executor (a task group's count, a blocking
  // work-graph run's): a thread outside the pool then sleeps until a run
  // ends, through the other completions notify_completion() reports. It has
  // no periodic re-check: a done() that can turn true without an end_run()
  // following it would sleep forever, and must use wait_until().
  template <class Pred>
  void wait_until_run_ends(Pred done);

  // Runs (task groups, work-graph executions, graph runs from submission
  // on) register here, so that wait_for_all() and the destructor can wait
  // for them. begin_run() answers the generation the run began in, which
  // its end_run() hands back.
  RunEpoch begin_run() noexcept;
  void end_run(RunEpoch epoch) noexcept;
  // Returns once every run begun before it has ended: graph runs submitted
  // before it, queued ones included, and task groups' callables (a task
  // group is one run from its first pending callable until none is left).
  // Runs begun meanwhile, on other threads, do not hold it up. From inside
  // a job running on this executor it would wait for itself, and throws
  // std::logic_error instead.
  void wait_for_all();

  int worker_count() const noexcept { return static_cast<int>(workers_.size()); }
  int cpu_worker_count() const noexcept { return cpu_workers_; }
  int gpu_worker_count() const noexcept { return worker_count() - cpu_workers_; }
  // Guest contexts (ExecutorConfig::guests). WorkerContext indices run from
  // 0 to context_count() - 1: the workers, then the guests; per-worker
  // state that guests' jobs may touch is sized by context_count().
  int guest_count() const noexcept { return static_cast<int>(guests_.size()); }
  int context_count() const noexcept { return worker_count() + guest_count(); }
  const DeviceRegistry& devices() const noexcept { return devices_; }
  // For errors about GPU work on an executor without GPU-priority workers:
  // "has none (why); give it some with ..." (the config fields that fix it).
  std::string no_gpu_workers_reason() const;
  const ExecutorConfig& config() const noexcept { return config_; }

  std::vector<WorkerStats> stats() const;
  void reset_stats() noexcept;

  // Observers (observer.hpp), attached and detached from any thread at any
  // time, also while runs are in flight and from inside callbacks. Each call
  // publishes a new list of observers atomically, and every job reads the
  // list once (a work-DAG run: once, as it starts), so an observer sees the
  // jobs and runs that start after attach() returned, and no more of those
  // that start after detach() returned; jobs and runs already in flight
  // keep the list they read (and it keeps the observer alive), so once
  // detach() returned, wait for the runs you started (or wait_for_all())
  // before the observer's own state goes. A list is freed, and with it the
  // executor's share of its observers, once the runs and jobs that read it
  // have let go of it: a run as it ends, a worker once it is between jobs.
  // So a detached observer is destroyed by whichever of them lets go last
  // (the detaching thread when none uses it), never kept until the executor
  // goes. Attaching an observer twice, or detaching one that is not
  // attached, throws std::invalid_argument.
  void attach(std::shared_ptr<Observer> observer);
  void detach(const std::shared_ptr<Observer>& observer);
  // The list attached now, or null. Only a check: the list may be freed at
  // any moment once detached; jobs read WorkerContext::observers(), and a
  // run that reports to one list throughout shares it with share_observers().
  const ObserverList* observers() const noexcept {
    // acquire: pairs with the release in update_observers(), for the list's contents.
    return observers_.load(std::memory_order_acquire);
  }
  std::shared_ptr<const ObserverList> share_observers() const;

  // Execution traces (trace.hpp): the tracer is an observer, attached by
  // start_trace() and detached by stop_trace(). write_trace() stops tracing
  // and writes Chrome trace-event JSON; call these only while no run is in flight.
  void start_trace();
  void stop_trace() noexcept;
  bool tracing() const noexcept { return tracer_->active(); }
  void write_trace(const std::string& path);
  Tracer& tracer() noexcept { return *tracer_; }

  // Runs a graph (or anything with run_on(executor, count, until)): once,
  // n times (n >= 0), or until pred() says stop, which it asks before each
  // pass, the first included. Runs of one graph queue: each starts once the
  // runs submitted before it have ended. Returns a Future<void> that
  // completes when the runs are done; Future::cancel() stops it.
  template <class Runnable>
  auto run(Runnable& graph) {
    return graph.run_on(*this, 1, nullptr);
  }
  template <class Runnable>
  auto run_n(Runnable& graph, long n) {
    if (n < 0) {
      throw std::invalid_argument("Executor::run_n: the run count " + std::to_string(n) +
                                  " is negative (expected 0 or more)");
    }
    return graph.run_on(*this, n, nullptr);
  }
  template <class Runnable, class Pred>
  auto run_until(Runnable& graph, Pred&& pred) {
    return graph.run_on(*this, -1, std::forward<Pred>(pred));
  }

  // One object of type T per executor, made on first use with T(executor)
  // and destroyed after the workers stopped: how upper layers attach their
  // per-executor state (the graph layer's driver scheduler, say).
  template <class T>
  T& extension();

  // The worker running the calling thread if it belongs to this executor, else null.
  WorkerContext* this_worker() const noexcept;
  // The worker running the calling thread, of whichever executor (null on
  // threads that are not workers): how code inside a job finds its executor.
  static WorkerContext* current_worker() noexcept;

  // Tries once to find a ready job for `worker` and runs it. For helpers that
  // wait on a worker thread; returns whether a job ran.
  bool run_one(WorkerContext& worker);

  // Guests (docs/waiting.md): a thread outside the pool borrows a context
  // without a thread of its own, pushes its work onto that context's deques
  // (WorkerContext::push), which idle workers steal from, and, while it
  // waits, runs what is left there itself (help_as_guest()). borrow_guest()
  // answers null when all guests (ExecutorConfig::guests) are borrowed; the borrowing thread
  // alone pushes onto a guest and runs its jobs (borrowed_here()).
  // return_guest() hands what is still on its deques to the workers.
  WorkerContext* borrow_guest() noexcept;
  void return_guest(WorkerContext& guest) noexcept;
  static bool borrowed_here(const WorkerContext& guest) noexcept;
  // On the thread that borrowed `guest`: runs the jobs on its deques, newest
  // first, until done() or until they are empty, with the calling thread
  // counted as the guest (this_worker(), current_worker()) during each.
  // Runs nothing while observers are attached: they know only the workers.
  template <class Pred>
  void help_as_guest(WorkerContext& guest, Pred done);

 private:
  friend class WorkerContext;
  struct Shared;  // lock-free submission queues (Boost.Lockfree), kept out of this header

  // On a worker of this executor: runs other jobs until done(), and returns
  // true. Elsewhere: checks done() detail::kChecksBeforeSleep times, a yield
  // apart, and returns whether it came true (if not, the caller sleeps).
  template <class Pred>
  bool wait_without_sleeping(Pred& done);

  // runs_: the runs in flight (bits 32-63) and, in the futex word of its low
  // half, a count of run ends (bits 0-29) and whether some thread sleeps
  // until a run ends (bit 30) or until none (or none of an old generation)
  // is left (bit 31). One word, so that end_run() learns whom to wake from
  // its own update, its last touch of the executor (docs/waiting.md).
  static constexpr std::uint64_t kOneRun = std::uint64_t{1} << 32;
  static constexpr std::uint64_t kRunEndSleepers = std::uint64_t{1} << 30;
  static constexpr std::uint64_t kNoRunSleepers = std::uint64_t{1} << 31;
  static constexpr std::uint64_t kRunEndCount = kRunEndSleepers - 1;
  static constexpr std::uint64_t runs_in_flight(std::uint64_t word) noexcept { return word >> 32; }
  // Marks the caller as sleeping on runs_ (kRunEndSleepers or
  // kNoRunSleepers) and returns the word it then expects.
  std::uint64_t announce_run_sleeper(std::uint64_t sleepers) noexcept {
    // seq_cst: one total order with end_run()'s update; see there.
    return runs_.fetch_or(sleepers, std::memory_order_seq_cst) | sleepers;
  }
  // Sleeps on runs_ while its low half is what `expected` holds, until an
  // end_run() wakes the kind of sleeper given (the caller's mark).
  void sleep_on_runs(std::uint64_t expected, std::uint64_t sleepers) noexcept;
  // Sleeps as `sleepers` (kRunEndSleepers: done() may turn true at any
  // run's end; kNoRunSleepers: only at the end of the last run of all or of
  // its generation) until done().
  template <class Pred>
  void sleep_on_runs_until(Pred& done, std::uint64_t sleepers);
  void wait_for_no_runs();

  // run_epochs_: the current generation (bit 63: odd) and the runs in
  // flight that began in each, even (bits 0-30) and odd (bits 32-62).
  // wait_for_all() turns the generation over and waits for the old one to
  // drain, so runs begun after it never hold it up (docs/waiting.md).
  static constexpr std::uint64_t kOddEpoch = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kEpochCount = (std::uint64_t{1} << 31) - 1;
  static constexpr RunEpoch epoch_of(std::uint64_t word) noexcept {
    return (word & kOddEpoch) != 0 ? RunEpoch::odd : RunEpoch::even;
  }
  static constexpr int epoch_shift(RunEpoch epoch) noexcept { return epoch == RunEpoch::odd ? 32 : 0; }
  static constexpr std::uint64_t runs_in_epoch(std::uint64_t word, RunEpoch epoch) noexcept {
    return (word >> epoch_shift(epoch)) & kEpochCount;
  }

  void worker_main(WorkerContext& worker);
  // One job from a guest's own deques, run with the calling thread as the
  // guest; false when there is none or observers are attached.
  bool run_guest_job(WorkerContext& guest);
  Job* steal_from_guests() noexcept;
  Job* find_job(WorkerContext& worker);
  void submit_to_inbox(Job* job, Domain domain);
  Job* steal_from_others(WorkerContext& worker, Domain domain);
  // One job of `victim`'s deques of `domain`, the most urgent first, or null.
  static Job* steal_most_urgent(WorkerContext& victim, Domain domain) noexcept;
  int next_victim(WorkerContext& worker);
  void execute(WorkerContext& worker, Job* job);
  void wake_for(Domain domain) noexcept;

  ExecutorConfig config_;
  DeviceRegistry devices_;
  int cpu_workers_ = 0;
  int steal_attempts_ = 0;
  std::vector<std::unique_ptr<WorkerContext>> workers_;
  std::vector<std::unique_ptr<WorkerContext>> guests_;  // indexed after the workers
  std::unique_ptr<Shared> shared_;
  EventCount cpu_sleep_;  // CPU-priority workers sleep here
  EventCount gpu_sleep_;  // GPU-priority workers sleep here
  std::atomic<bool> stopping_{false};
  // How many guests are borrowed: idle workers look at guests only then.
  alignas(64) std::atomic<int> guests_borrowed_{0};
  alignas(64) std::atomic<std::uint64_t> runs_{0};
  std::atomic<std::uint64_t> run_epochs_{0};  // beside runs_: begin_run() and end_run() touch both
  alignas(64) std::atomic<std::uint32_t> completions_{0};
  std::atomic<std::uint32_t> external_waiters_{0};
  // One wait_for_all() turns the generation at a time. On a line of its
  // own: locking it must not bounce the completion count's line.
  alignas(64) std::mutex epoch_turn_;

  // Observers: the published list (null: none), for the check every job
  // makes, on a line of its own, away from the counters above; and the
  // executor's share of it, which holders copy under the mutex.
  alignas(64) std::atomic<const ObserverList*> observers_{nullptr};
  mutable std::mutex observers_mutex_;  // serialises attach, detach and sharing
  std::shared_ptr<const ObserverList> current_observers_;
  // Publishes the list with `observer` added (attach) or removed; false,
  // changing nothing, when it already is (or is not) attached.
  bool update_observers(const std::shared_ptr<Observer>& observer, bool attach);

  std::shared_ptr<Tracer> tracer_;
  std::string trace_path_;  // from WEFT_TRACE: written when the executor goes

  std::mutex extensions_mutex_;
  std::vector<std::pair<const void*, std::shared_ptr<void>>> extensions_;

  // Sleeps while completions_ == generation, for at most a few milliseconds.
  void sleep_on_completions(std::uint32_t generation) noexcept;

  // Starts a thread per worker. When the system refuses one, throws
  // std::system_error (its error code, naming how many of how many threads
  // started) after stopping and joining those that did start.
  void start_workers();
  // Wakes every worker, tells it to leave, and joins every started thread.
  void stop_workers() noexcept;
};

// ---- inline hot paths -------------------------------------------------------

inline const ObserverList* WorkerContext::observers() const noexcept {
  if (executor_->observers() != held_observers_.get()) [[unlikely]]
    hold_current_observers();
  return held_observers_.get();
}

inline void WorkerContext::push(Job* job, Domain domain, TaskPriority priority) {
  const auto p = static_cast<std::size_t>(priority);
  if (domain == Domain::Cpu) {
    if (priority == TaskPriority::High) {
      push_high(job);
    } else {
      cpu_deques_[p].push(job);
    }
    executor_->wake_for(Domain::Cpu);
  } else if (gpu_deques_ != nullptr) {
    (*gpu_deques_)[p].push(job);
    executor_->wake_for(Domain::Gpu);
  } else {
    executor_->submit_to_inbox(job, Domain::Gpu);  // a CPU worker hands GPU work to GPU workers
  }
}

inline Job* WorkerContext::pop_most_urgent(PriorityDeques& deques, TaskPriority* from) noexcept {
  for (std::size_t p = 0; p < deques.size(); ++p) {
    // The owner's emptiness check is exact enough: bottom is its own, and a
    // stale top only makes the deque look fuller. Skipping empty deques
    // saves pop()'s fence.
    if (deques[p].empty_hint()) continue;
    if (auto job = deques[p].pop()) {
      if (from != nullptr) *from = static_cast<TaskPriority>(p);
      return *job;
    }
  }
  return nullptr;
}

// A High CPU job is most often taken back by the worker that pushed it, at
// once (a task-DAG parent's High child, say), and that worker's High deque
// is then often empty: a Chase-Lev pop would cost a fence and, for the
// deque's last job, a CAS. So the newest one waits in newest_high_, which
// its owner takes back with one exchange, and a push there is a plain store
// while the slot is empty (only the owner fills it). Order is unchanged:
// the slot is the High deque's bottom, taken first by the owner and last by
// thieves (after the deque's older High jobs), so it is never hidden.
inline void WorkerContext::push_high(Job* job) noexcept {
  if (newest_high_.load(std::memory_order_relaxed) == nullptr) {
    // release: publishes the job's contents to whoever takes it.
    newest_high_.store(job, std::memory_order_release);
  } else if (Job* older = newest_high_.exchange(job, std::memory_order_acq_rel)) {
    cpu_deques_[static_cast<std::size_t>(TaskPriority::High)].push(older);
  }
}

inline Job* WorkerContext::pop_most_urgent_cpu(TaskPriority* from) noexcept {
  if (Job* job = take_newest_high()) {
    if (from != nullptr) *from = TaskPriority::High;
    return job;
  }
  return pop_most_urgent(cpu_deques_, from);
}

inline Job* WorkerContext::pop_local(TaskPriority& from) noexcept {
  return depth_ == 1 ? pop_most_urgent_cpu(&from) : nullptr;
}

inline void Executor::wake_for(Domain domain) noexcept {
  // Costs a compiler barrier and two loads while nobody sleeps (see
  // EventCount); the fence comes before reading either count's waiters.
  // (Under TSan notify's read-modify-write is what orders, so it always runs.)
  cpu_sleep_.publish_fence();
  if (!kThreadSanitizer && cpu_sleep_.waiters() == 0 && gpu_sleep_.waiters() == 0) return;
  if (domain == Domain::Gpu) {
    gpu_sleep_.notify_one_fenced();
    return;
  }
  // CPU work wakes a sleeping CPU worker; the event count guarantees one
  // notices it. When no CPU worker sleeps but a GPU worker does, wake that
  // one instead (GPU workers run CPU jobs when they have no GPU work), and
  // always when there are no CPU workers at all.
  if (cpu_workers_ == 0 || (cpu_sleep_.waiters() == 0 && gpu_sleep_.waiters() != 0)) {
    gpu_sleep_.notify_one_fenced();
  } else {
    cpu_sleep_.notify_one_fenced();
  }
}

template <class T>
T& Executor::extension() {
  static const char key = 0;  // one address per T
  std::lock_guard<std::mutex> lock(extensions_mutex_);
  for (auto& [k, object] : extensions_) {
    if (k == &key) return *static_cast<T*>(object.get());
  }
  auto object = std::make_shared<T>(*this);
  T& ref = *object;
  extensions_.emplace_back(&key, std::move(object));
  return ref;
}

template <class Pred>
bool Executor::wait_without_sleeping(Pred& done) {
  if (WorkerContext* self = this_worker()) {
    while (!done()) {
      if (!run_one(*self)) std::this_thread::yield();
    }
    return true;
  }
  // A few yields before sleeping: most waits outside the pool are short (one
  // small graph's run).
  for (int round = 0; round < detail::kChecksBeforeSleep; ++round) {
    if (done()) return true;
    std::this_thread::yield();
  }
  return false;
}

template <class Pred>
void Executor::help_as_guest(WorkerContext& guest, Pred done) {
  while (!done() && run_guest_job(guest)) {
  }
}

template <class Pred>
void Executor::wait_until(Pred done) {
  if (wait_without_sleeping(done)) return;
  // seq_cst: pairs with notify_completion(); see there.
  external_waiters_.fetch_add(1, std::memory_order_seq_cst);
  while (true) {
    // Read the generation before the predicate: a completion between the two
    // changes it, so the sleep below returns at once instead of missing it.
    const std::uint32_t generation = completions_.load(std::memory_order_seq_cst);
    if (done()) break;
    sleep_on_completions(generation);
  }
  external_waiters_.fetch_sub(1, std::memory_order_relaxed);
}

template <class Pred>
void Executor::sleep_on_runs_until(Pred& done, std::uint64_t sleepers) {
  if (wait_without_sleeping(done)) return;
  while (true) {
    // Announce first, then check: a run that ends after the check either
    // sees the mark and wakes us, or changes the word we sleep on.
    const std::uint64_t expected = announce_run_sleeper(sleepers);
    if (done()) return;
    sleep_on_runs(expected, sleepers);
  }
}

template <class Pred>
void Executor::wait_until_run_ends(Pred done) {
  sleep_on_runs_until(done, kRunEndSleepers);
}

}  // namespace weft

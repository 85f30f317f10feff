// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/runtime/executor.hpp>

#include <boost/lockfree/queue.hpp>

#include <cstdlib>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include <weft/backends/initial_exec_tls.hpp>
#include <weft/memory/memory_pool_hook.hpp>
#include <weft/runtime/detail/futex.hpp>
#include <weft/runtime/nvtx_observer.hpp>
#include <weft/runtime/topology.hpp>

namespace weft {

namespace {

// The worker running on this thread, whichever executor it belongs to (or
// the guest it runs a job as).
WEFT_INITIAL_EXEC_TLS thread_local WorkerContext* tls_worker = nullptr;

// Its address names the thread that borrowed a guest.
WEFT_INITIAL_EXEC_TLS thread_local char tls_borrower_mark = 0;

// Rounds of looking for work (with a yield between) before a worker sleeps:
// short gaps between bursts of work are common (futex.hpp).
constexpr int kIdleRoundsBeforeSleep = detail::kChecksBeforeSleep;

std::uint64_t xorshift(std::uint64_t& s) noexcept {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

// Pool allocations reach the observers of the executor whose worker makes
// them (memory/ knows no executors; threads that are not workers have no
// executor to report to).
void observe_pool_event(const void* pool, const char* space, const void* ptr, std::size_t size,
                        bool allocated) noexcept {
  const WorkerContext* worker = Executor::current_worker();
  if (worker == nullptr) return;
  const ObserverList* observers = worker->observers();
  if (observers == nullptr) return;
  const AllocationEvent event{observer_clock(), worker->index(), pool, space, ptr, size};
  allocated ? observers->allocate(event) : observers->deallocate(event);
}

// The pool hook is set while some executor has observers, so that pools
// pay nothing more than its check otherwise.
void count_observed_executor(int change) noexcept {
  static std::mutex mutex;
  static int observed = 0;
  std::lock_guard<std::mutex> lock(mutex);
  const int before = std::exchange(observed, observed + change);
  if (before == 0 && observed > 0) set_memory_pool_hook(&observe_pool_event);
  if (before > 0 && observed == 0) set_memory_pool_hook(nullptr);
}

}  // namespace

const char* to_string(StealStrategy s) noexcept {
  switch (s) {
    case StealStrategy::round_robin:
      return "round_robin";
    case StealStrategy::random:
      return "random";
    case StealStrategy::topological:
      return "topological";
  }
  return "unknown";
}

StealStrategy steal_strategy_from_string(const std::string& name) {
  if (name == "round_robin") return StealStrategy::round_robin;
  if (name == "random") return StealStrategy::random;
  if (name == "topological") return StealStrategy::topological;
  throw std::invalid_argument("unknown steal strategy '" + name +
                              "' (expected round_robin, random or topological)");
}

// Submissions from threads outside the pool. Boost.Lockfree's MPMC queue:
// any number of producers and of consuming workers, no locks.
struct Executor::Shared {
  boost::lockfree::queue<Job*> cpu_inbox{1024};
  boost::lockfree::queue<Job*> gpu_inbox{256};
};

WorkerContext::WorkerContext(Executor& ex, int index, Domain domain, bool guest)
    : executor_(&ex),
      index_(index),
      domain_(domain),
      guest_(guest),
      gpu_deques_(domain == Domain::Gpu ? std::make_unique<PriorityDeques>() : nullptr),
      rng_state_(0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(index + 1)),
      round_robin_cursor_(index) {}

void WorkerContext::refuse_nested_wait(const char* waiter) {
  throw std::logic_error(std::string(waiter) + ": " + std::to_string(kMaxNestedWaits) +
                         " waits are already nested on this worker (each runs other jobs on the same "
                         "stack, which would overflow); wait for fewer things one inside another, e.g. "
                         "respawn a task on its children's future or use when_all instead of waiting "
                         "inside the task");
}

Executor::Executor(ExecutorConfig config)
    : config_(config),
      devices_(planned_virtual_devices(config), config.use_cuda),
      shared_(std::make_unique<Shared>()) {
  const Topology& topo = Topology::system();
  const int cores =
      topo.usable() ? topo.core_count() : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // WEFT_NUM_THREADS is read only where the config leaves it a say.
  const char* num_threads =
      config_.cpu_workers == ExecutorConfig::automatic ? std::getenv(kNumThreadsVariable) : nullptr;
  const WorkerCounts counts = plan_workers(config_, cores, devices_.gpu_count(), num_threads);
  cpu_workers_ = counts.cpu;
  const int total = counts.cpu + counts.gpu;
  steal_attempts_ = config_.steal_attempts != ExecutorConfig::automatic ? std::max(1, config_.steal_attempts)
                                                                        : std::max(1, 2 * total);

  bool pin = config_.pin_threads;
  if (pin && !topo.usable()) {
    std::fprintf(stderr, "weft: pin_threads requested but %s\n", topo.warning().c_str());
    pin = false;
  }
  for (int i = 0; i < total; ++i) {
    workers_.push_back(std::unique_ptr<WorkerContext>(
        new WorkerContext(*this, i, i < cpu_workers_ ? Domain::Cpu : Domain::Gpu)));
    if (pin || config_.steal_strategy == StealStrategy::topological)
      workers_.back()->core_.store(i % cores, std::memory_order_relaxed);
  }
  if (config_.steal_strategy == StealStrategy::topological) {
    // Nearest victims first: those sharing an L2, then an L3, then a NUMA node.
    for (auto& w : workers_) {
      for (int v = 0; v < total; ++v)
        if (v != w->index_) w->victims_.push_back(v);
      if (topo.usable()) {
        std::stable_sort(w->victims_.begin(), w->victims_.end(), [&](int a, int b) {
          const auto core_of = [&](int v) {
            return workers_[static_cast<std::size_t>(v)]->core_.load() % cores;
          };
          return topo.cache_distance(core_of(w->index_), core_of(a)) <
                 topo.cache_distance(core_of(w->index_), core_of(b));
        });
      }
    }
  }
  if (!pin) {
    for (auto& w : workers_) w->core_.store(-1, std::memory_order_relaxed);
  }
  for (int g = 0; g < config_.guests; ++g) {
    guests_.push_back(std::unique_ptr<WorkerContext>(new WorkerContext(*this, total + g, Domain::Cpu, true)));
  }
  tracer_ = std::make_shared<Tracer>(total);
  if (const char* path = std::getenv("WEFT_TRACE"); path != nullptr && *path != '\0') {
    // Several executors in one process: path.json, path.1.json, path.2.json, ...
    static std::atomic<int> traced_executors{0};
    const int n = traced_executors.fetch_add(1, std::memory_order_relaxed);
    trace_path_ = numbered_trace_path(path, n);
    start_trace();
  }
  (void)attach_nvtx_if_requested(*this);  // WEFT_NVTX=1: Nsight Systems shows the nodes
  start_workers();
}

void Executor::start_workers() {
  std::size_t started = 0;
  try {
    for (auto& w : workers_) {
      WorkerContext* ctx = w.get();
      ctx->thread_ = std::thread([this, ctx] { worker_main(*ctx); });
      ++started;
    }
  } catch (const std::system_error& e) {
    // The workers already running use this executor: they must be gone
    // before the unwinding destroys it (and a joinable std::thread destroyed
    // by the unwinding would call std::terminate).
    stop_workers();
    throw std::system_error(e.code(), "Executor: could not start all " + std::to_string(workers_.size()) +
                                          " worker threads (started " + std::to_string(started) +
                                          ", stopped and joined them again)");
  } catch (...) {
    stop_workers();
    throw;
  }
}

void Executor::stop_workers() noexcept {
  // seq_cst store: pairs with the worker's prepare_wait() + load of
  // stopping_ (the same Dekker pattern as the event count itself).
  stopping_.store(true, std::memory_order_seq_cst);
  cpu_sleep_.notify_all();
  gpu_sleep_.notify_all();
  for (auto& w : workers_) {
    if (w->thread_.joinable()) w->thread_.join();
  }
}

void Executor::attach(std::shared_ptr<Observer> observer) {
  if (observer == nullptr) throw std::invalid_argument("Executor::attach: the observer is null");
  if (!update_observers(observer, true)) {
    throw std::invalid_argument(
        "Executor::attach: the observer is already attached to this executor (detach it before attaching it "
        "again)");
  }
}

void Executor::detach(const std::shared_ptr<Observer>& observer) {
  if (!update_observers(observer, false)) {
    throw std::invalid_argument("Executor::detach: the observer is not attached to this executor");
  }
}

bool Executor::update_observers(const std::shared_ptr<Observer>& observer, bool attach) {
  // Declared before the lock, so let go of after the unlock: it may destroy observers.
  std::shared_ptr<const ObserverList> old;
  std::lock_guard<std::mutex> lock(observers_mutex_);
  std::vector<std::shared_ptr<Observer>> next;
  if (current_observers_ != nullptr) next = current_observers_->observers();
  const auto found = std::find(next.begin(), next.end(), observer);
  if ((found != next.end()) == attach) return false;
  if (attach) {
    next.push_back(observer);
  } else {
    next.erase(found);
  }
  std::shared_ptr<const ObserverList> list;
  if (!next.empty()) list = std::make_shared<const ObserverList>(std::move(next));
  const bool was_observed = current_observers_ != nullptr;
  // release: pairs with the acquire in observers(). Jobs and runs that read
  // the old list hold their own share of it (see attach()).
  observers_.store(list.get(), std::memory_order_release);
  old = std::exchange(current_observers_, std::move(list));
  if (was_observed != (current_observers_ != nullptr)) count_observed_executor(was_observed ? -1 : 1);
  return true;
}

std::shared_ptr<const ObserverList> Executor::share_observers() const {
  std::lock_guard<std::mutex> lock(observers_mutex_);
  return current_observers_;
}

void WorkerContext::hold_current_observers() const noexcept {
  std::shared_ptr<const ObserverList> stale = executor_->share_observers();
  held_observers_.swap(stale);  // the stale one goes here, outside the executor's lock
}

std::shared_ptr<const ObserverList> WorkerContext::share_observers() const noexcept {
  observers();
  return held_observers_;
}

void WorkerContext::drop_stale_observers() noexcept {
  // relaxed: a worker only needs to notice a detach eventually.
  if (held_observers_.get() != executor_->observers_.load(std::memory_order_relaxed)) held_observers_.reset();
}

void WorkerContext::trace(const char* name, Domain domain, std::int64_t start_ns) const noexcept {
  const ObserverList* observers = this->observers();
  if (observers == nullptr) return;
  NodeEvent event;
  event.time_ns = start_ns;
  event.worker = index_;
  event.domain = domain;
  event.name = name;
  observers->node_begin(event);
  event.time_ns = observer_clock();
  observers->node_end(event);
}

void Executor::start_trace() {
  tracer_->start();
  update_observers(tracer_, true);  // false: started already
}

void Executor::stop_trace() noexcept {
  tracer_->stop();
  try {
    update_observers(tracer_, false);
  } catch (...) {
    // No memory for the new list: the tracer stays attached, stopped, and records nothing.
  }
}

void Executor::write_trace(const std::string& path) {
  stop_trace();
  std::vector<Domain> domains;
  for (const auto& w : workers_) domains.push_back(w->domain_);
  tracer_->write_chrome_json(path, domains);
}

Executor::~Executor() {
  // Every run, those that runs in flight begin meanwhile included.
  wait_for_no_runs();
  stop_workers();
  if (!trace_path_.empty()) {
    try {
      write_trace(trace_path_);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "weft: WEFT_TRACE: %s\n", e.what());
    }
  }
  if (observers_.load(std::memory_order_relaxed) != nullptr) count_observed_executor(-1);
  // Extensions (schedulers of upper layers) go while the executor is whole.
  while (!extensions_.empty()) extensions_.pop_back();
}

void Executor::submit(Job* job, Domain domain, TaskPriority priority) {
  if (domain == Domain::Gpu && gpu_worker_count() == 0) {
    throw std::logic_error(
        "Executor::submit: a GPU-domain job needs GPU-priority workers, and this executor " +
        no_gpu_workers_reason() + ", or submit the job as Domain::Cpu");
  }
  if (WorkerContext* self = this_worker()) {
    self->push(job, domain, priority);
    return;
  }
  submit_to_inbox(job, domain);
}

void Executor::submit_to_inbox(Job* job, Domain domain) {
  auto& inbox = domain == Domain::Cpu ? shared_->cpu_inbox : shared_->gpu_inbox;
  while (!inbox.push(job)) std::this_thread::yield();  // only fails if node allocation fails
  wake_for(domain);
}

std::string Executor::no_gpu_workers_reason() const {
  std::string why = "has none (";
  std::string fix = "ExecutorConfig::virtual_devices = 1 (a host virtual device: no GPU needed)";
  if (config_.gpu_workers == 0) {
    why += "ExecutorConfig::gpu_workers = 0, which ExecutorConfig::cpu_only() sets";
    fix = devices_.device_count() > 0 ? "ExecutorConfig::gpu_workers = ExecutorConfig::automatic"
                                      : fix + " and gpu_workers = ExecutorConfig::automatic";
  } else {
    why += "no CUDA device in use and ExecutorConfig::virtual_devices = 0";
    if (config_.virtual_devices == ExecutorConfig::automatic) {
      why += "; only a config that leaves both worker counts automatic gets a virtual device by itself";
    }
  }
  return why + "); give it some with " + fix;
}

WorkerContext* Executor::current_worker() noexcept { return tls_worker; }

WorkerContext* Executor::this_worker() const noexcept {
  return tls_worker != nullptr && tls_worker->executor_ == this ? tls_worker : nullptr;
}

void Executor::notify_completion() noexcept {
  // seq_cst (a release, and in one total order with the waiter's seq_cst
  // increment of external_waiters_ and load of completions_): either we see
  // the waiter and wake it, or its load of the generation sees our bump and
  // it does not sleep. Whatever made its predicate true is visible to it.
  completions_.fetch_add(1, std::memory_order_seq_cst);
  if (external_waiters_.load(std::memory_order_seq_cst) != 0)
    detail::futex_wake(detail::futex_word(completions_));
}

void Executor::sleep_on_completions(std::uint32_t generation) noexcept {
  // With a timeout: predicates that become true without a notification (a
  // task scheduler's sharded counters, say) are re-checked at least every
  // 2 ms. Spurious returns only cost a re-check.
  detail::futex_wait(detail::futex_word(completions_), generation, detail::kAllWakeKinds, 2'000'000);
}

void Executor::sleep_on_runs(std::uint64_t expected, std::uint64_t sleepers) noexcept {
  // The futex is the word's low half: the run-end count and the sleeper
  // marks. It returns at once if that changed since `expected` was read.
  // Each kind of sleeper sleeps for its own kind of wake-up (its mark).
  detail::futex_wait(detail::futex_word_low_half(runs_), static_cast<std::uint32_t>(expected),
                     static_cast<detail::WakeKinds>(sleepers));
}

RunEpoch Executor::begin_run() noexcept {
  // One update counts the run in the generation it reads, so a turn of the
  // generation never splits the two. relaxed: a run begun before a
  // wait_for_all() precedes its turn in the word's order anyway.
  std::uint64_t word = run_epochs_.load(std::memory_order_relaxed);
  while (!run_epochs_.compare_exchange_weak(word, word + (std::uint64_t{1} << epoch_shift(epoch_of(word))),
                                            std::memory_order_relaxed)) {
  }
  runs_.fetch_add(kOneRun, std::memory_order_relaxed);
  return epoch_of(word);
}

void Executor::end_run(RunEpoch epoch) noexcept {
  // Wake the generic waiters while the executor is surely whole.
  notify_completion();
  // The run leaves its generation first. seq_cst: one total order with the
  // wait_for_all() sleeper's announcement on runs_ below and its check of
  // this word; it drained a generation that wait_for_all() turned away from.
  const std::uint64_t epochs =
      run_epochs_.fetch_sub(std::uint64_t{1} << epoch_shift(epoch), std::memory_order_seq_cst);
  const bool drained = runs_in_epoch(epochs, epoch) == 1 && epoch_of(epochs) != epoch;
  // Then one update of runs_ does the rest: one run fewer, one more run end
  // counted, and the marks cleared of the sleepers it wakes (those waiting
  // for any run's end, and, if this run was the last or the last of an old
  // generation, those waiting for none to be left). It is the last touch of
  // the executor, which ~Executor may destroy as soon as it sees it (runs
  // end on threads the executor does not own, too: a CUDA callback, the MPI
  // progress thread). The futex wake after it only hands the kernel an
  // address: were the memory reused, that is at worst a spurious wake-up of
  // whoever sleeps there, which every futex user must tolerate anyway.
  const std::uint32_t* const futex =
      detail::futex_word_low_half(runs_);  // taken while the executor is surely whole
  std::uint64_t word = runs_.load(std::memory_order_relaxed);
  std::uint64_t woken = 0;
  std::uint64_t next = 0;
  do {
    const bool last = runs_in_flight(word) == 1;
    woken = word & (last || drained ? kRunEndSleepers | kNoRunSleepers : kRunEndSleepers);
    next = (word - kOneRun) & ~(woken | kRunEndCount);
    next |= (word + 1) & kRunEndCount;
    // seq_cst: one total order with the sleepers' announcements: either a
    // sleeper's mark is in `word`, or its announcement reads `next` (and the
    // run's effects, released here) and it does not sleep on the old word.
  } while (!runs_.compare_exchange_weak(word, next, std::memory_order_seq_cst, std::memory_order_relaxed));
  // The marks are the wake-up kinds: a run's end does not wake those that
  // wait for no run to be left while others are in flight.
  if (woken != 0) detail::futex_wake(futex, static_cast<detail::WakeKinds>(woken));
}

void Executor::wait_for_all() {
  if (this_worker() != nullptr) {
    throw std::logic_error(
        "Executor::wait_for_all: called from inside a job (a graph node, a task, a TaskGroup callable) "
        "running on this executor, which would wait for itself; wait for that work's own future instead");
  }
  // acquire: the runs' effects happen before wait_for_all() returns.
  if (runs_in_flight(runs_.load(std::memory_order_acquire)) == 0) return;
  // Turn the generation: runs begun from here on count in the new one, and
  // the old one only drains. Waiters turn one at a time, so a generation is
  // never reopened while a waiter still waits for it to drain.
  std::lock_guard<std::mutex> turn(epoch_turn_);
  const RunEpoch old = epoch_of(run_epochs_.fetch_xor(kOddEpoch, std::memory_order_seq_cst));
  // seq_cst: see end_run(); acquire: the runs' effects.
  auto drained = [&] { return runs_in_epoch(run_epochs_.load(std::memory_order_seq_cst), old) == 0; };
  sleep_on_runs_until(drained, kNoRunSleepers);
}

void Executor::wait_for_no_runs() {
  // acquire: the runs' effects happen before the caller goes on.
  auto none = [this] { return runs_in_flight(runs_.load(std::memory_order_acquire)) == 0; };
  sleep_on_runs_until(none, kNoRunSleepers);
}

WorkerContext* Executor::borrow_guest() noexcept {
  for (auto& guest : guests_) {
    const void* free = nullptr;
    if (guest->borrower_.load(std::memory_order_relaxed) != nullptr) continue;
    // acquire: the last borrower's use of the deques happens before ours.
    if (guest->borrower_.compare_exchange_strong(free, &tls_borrower_mark, std::memory_order_acquire,
                                                 std::memory_order_relaxed)) {
      // seq_cst: before the first push's fence, so a worker that announces
      // its sleep after that fence looks at the guests (see wake_for()).
      guests_borrowed_.fetch_add(1, std::memory_order_seq_cst);
      return guest.get();
    }
  }
  return nullptr;
}

void Executor::return_guest(WorkerContext& guest) noexcept {
  // Whatever its jobs pushed and nobody ran yet (a task spawned and not
  // waited for, say) goes to the workers. The borrower is done with the
  // deques, so whichever thread returns it may pop them.
  while (Job* job = guest.pop_most_urgent_cpu()) submit_to_inbox(job, Domain::Cpu);
  guest.held_observers_.reset();
  guests_borrowed_.fetch_sub(1, std::memory_order_relaxed);
  // release: our use of the deques happens before the next borrower's.
  guest.borrower_.store(nullptr, std::memory_order_release);
}

bool Executor::borrowed_here(const WorkerContext& guest) noexcept {
  return guest.borrower_.load(std::memory_order_relaxed) == &tls_borrower_mark;
}

bool Executor::run_guest_job(WorkerContext& guest) {
  // Observers are told worker indices, and a trace has a row per worker:
  // while someone observes, the workers run it all.
  if (observers() != nullptr) return false;
  Job* job = guest.pop_most_urgent_cpu();
  if (job == nullptr) return false;
  WorkerContext* const outer = std::exchange(tls_worker, &guest);
  execute(guest, job);
  tls_worker = outer;
  if (guest.held_observers_ != nullptr) guest.drop_stale_observers();
  return true;
}

Job* Executor::steal_from_guests() noexcept {
  for (auto& guest : guests_) {
    if (guest->borrower_.load(std::memory_order_relaxed) == nullptr) continue;
    if (Job* job = steal_most_urgent(*guest, Domain::Cpu)) return job;
  }
  return nullptr;
}

bool Executor::run_one(WorkerContext& worker) {
  // A guest waiting inside one of its jobs runs no more while observed (see run_guest_job()).
  if (worker.guest_ && observers() != nullptr) return false;
  Job* job = find_job(worker);
  if (job == nullptr) return false;
  execute(worker, job);
  return true;
}

void Executor::execute(WorkerContext& worker, Job* job) {
  try {
    // A job may hand back one it popped and did not run (run_next()): the
    // job find_job() would have returned next.
    ++worker.depth_;
    do {
      job->invoke(*job, worker);
      worker.jobs_run_.add();
      job = std::exchange(worker.next_job_, nullptr);
    } while (job != nullptr);
    --worker.depth_;
  } catch (const std::exception& e) {
    // Job implementations capture their own exceptions (TaskGroup, work
    // graphs, tasks); one escaping here is a bug in a job type.
    std::fprintf(stderr, "weft: a job's invoke function threw '%s'; jobs must capture their exceptions\n",
                 e.what());
    std::terminate();
  } catch (...) {
    std::fprintf(stderr, "weft: a job's invoke function threw; jobs must capture their exceptions\n");
    std::terminate();
  }
}

Job* Executor::find_job(WorkerContext& w) {
  Job* job = nullptr;
  if (w.gpu_deques_ != nullptr) {  // GPU-priority workers prefer GPU work
    if ((job = WorkerContext::pop_most_urgent(*w.gpu_deques_)) != nullptr) return job;
    if (shared_->gpu_inbox.pop(job)) return job;
    if ((job = steal_from_others(w, Domain::Gpu)) != nullptr) return job;
  }
  if ((job = w.pop_most_urgent_cpu()) != nullptr) return job;
  if (shared_->cpu_inbox.pop(job)) return job;
  return steal_from_others(w, Domain::Cpu);
}

int Executor::next_victim(WorkerContext& w) {
  const int n = worker_count();
  switch (config_.steal_strategy) {
    case StealStrategy::random: {
      const int r = static_cast<int>(xorshift(w.rng_state_) % static_cast<std::uint64_t>(n - 1));
      return r >= w.index_ ? r + 1 : r;
    }
    case StealStrategy::topological: {
      const int v = w.victims_[static_cast<std::size_t>(w.round_robin_cursor_ % (n - 1))];
      ++w.round_robin_cursor_;
      return v;
    }
    case StealStrategy::round_robin:
    default: {
      w.round_robin_cursor_ = (w.round_robin_cursor_ + 1) % n;
      if (w.round_robin_cursor_ == w.index_) w.round_robin_cursor_ = (w.round_robin_cursor_ + 1) % n;
      return w.round_robin_cursor_;
    }
  }
}

Job* Executor::steal_from_others(WorkerContext& w, Domain domain) {
  Job* stolen = nullptr;
  if (w.guest_) {  // a guest waiting inside one of its jobs: each worker once
    for (auto& victim : workers_) {
      if ((stolen = steal_most_urgent(*victim, domain)) != nullptr) break;
    }
  } else if (worker_count() >= 2 && (domain == Domain::Cpu || gpu_worker_count() >= 2)) {
    // (GPU jobs wait only in GPU-priority workers' deques: a lone one has no victim.)
    // Topological stealing restarts from the nearest victim every round.
    if (config_.steal_strategy == StealStrategy::topological) w.round_robin_cursor_ = 0;
    for (int attempt = 0; attempt < steal_attempts_; ++attempt) {
      if ((stolen = steal_most_urgent(*workers_[static_cast<std::size_t>(next_victim(w))], domain)) !=
          nullptr)
        break;
      w.failed_steals_.add();
    }
  }
  // Then the borrowed guests' task-group callables. seq_cst: pairs with borrow_guest().
  if (stolen == nullptr && domain == Domain::Cpu && guests_borrowed_.load(std::memory_order_seq_cst) != 0)
    stolen = steal_from_guests();
  if (stolen != nullptr) w.steals_.add();
  return stolen;
}

Job* Executor::steal_most_urgent(WorkerContext& victim, Domain domain) noexcept {
  WorkerContext::PriorityDeques* deques =
      domain == Domain::Cpu ? &victim.cpu_deques_ : victim.gpu_deques_.get();
  if (deques == nullptr) return nullptr;        // a CPU worker has no GPU deques
  for (ChaseLevDeque<Job*>& deque : *deques) {  // the victim's most urgent work first
    if (!deque.empty_hint()) {
      if (auto job = deque.steal()) return *job;
    }
    // The victim's newest High CPU job comes after its older ones.
    if (domain == Domain::Cpu && &deque == &deques->front()) {
      if (Job* job = victim.take_newest_high()) return job;
    }
  }
  return nullptr;
}

void Executor::worker_main(WorkerContext& w) {
  tls_worker = &w;
  if (const int core = w.core_.load(std::memory_order_relaxed); core >= 0) {
    std::string why;
    if (!Topology::system().pin_current_thread(core, &why)) {
      std::fprintf(stderr, "weft: worker %d runs unpinned: %s\n", w.index_, why.c_str());
      w.core_.store(-1, std::memory_order_relaxed);
    }
  }
  EventCount& sleep = w.domain_ == Domain::Gpu ? gpu_sleep_ : cpu_sleep_;
  int idle_rounds = 0;
  bool ran_since_idle = false;
  while (true) {
    if (Job* job = find_job(w)) {
      execute(w, job);
      if (w.held_observers_ != nullptr) w.drop_stale_observers();  // a detached list goes
      idle_rounds = 0;
      ran_since_idle = true;
      continue;
    }
    if (ran_since_idle) {
      // Out of work: whatever external waiters wait for may be done now.
      ran_since_idle = false;
      notify_completion();
      w.held_observers_.reset();  // nothing to report to while idle
    }
    if (++idle_rounds < kIdleRoundsBeforeSleep) {
      std::this_thread::yield();
      continue;
    }
    const EventCount::Key key = sleep.prepare_wait();
    if (Job* job = find_job(w)) {  // work that arrived while we announced ourselves
      sleep.cancel_wait();
      execute(w, job);
      if (w.held_observers_ != nullptr) w.drop_stale_observers();
      idle_rounds = 0;
      ran_since_idle = true;
      continue;
    }
    // seq_cst: pairs with the store in stop_workers(); see there.
    if (stopping_.load(std::memory_order_seq_cst)) {
      sleep.cancel_wait();
      break;
    }
    w.sleeps_.add();
    sleep.commit_wait(key);
    idle_rounds = 0;
  }
  tls_worker = nullptr;
}

std::vector<WorkerStats> Executor::stats() const {
  std::vector<WorkerStats> out;
  for (const auto& w : workers_) {
    WorkerStats s;
    s.worker = w->index_;
    s.domain = w->domain_;
    s.jobs_run = w->jobs_run_.get();
    s.steals = w->steals_.get();
    s.failed_steals = w->failed_steals_.get();
    s.sleeps = w->sleeps_.get();
    s.core = w->core_.load(std::memory_order_relaxed);
    out.push_back(s);
  }
  for (const auto& g : guests_) {
    if (g->jobs_run_.get() == 0) continue;
    WorkerStats s;
    s.worker = g->index_;
    s.guest = true;
    s.jobs_run = g->jobs_run_.get();
    s.steals = g->steals_.get();
    s.failed_steals = g->failed_steals_.get();
    out.push_back(s);
  }
  return out;
}

void Executor::reset_stats() noexcept {
  for (auto* list : {&workers_, &guests_}) {
    for (auto& w : *list) {
      w->jobs_run_.reset();
      w->steals_.reset();
      w->failed_steals_.reset();
      w->sleeps_.reset();
    }
  }
}

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/runtime/work_graph_policy.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace weft {

Executor& default_executor() {
  static Executor executor;
  return executor;
}

namespace detail {

template <class Index>
WorkGraphEngine<Index>::WorkGraphEngine(Crs<Index> dag, std::vector<Domain> domains,
                                        std::vector<std::uint8_t> conditions)
    : dag_(std::move(dag)), domains_(std::move(domains)), conditions_(std::move(conditions)) {
  validate_crs(dag_, "WorkGraphPolicy");
  const Index n = dag_.num_rows();
  const auto nodes = static_cast<std::size_t>(n);
  if (!domains_.empty() && domains_.size() != nodes) {
    throw std::invalid_argument("WorkGraphPolicy: " + std::to_string(domains_.size()) +
                                " domains given for " + std::to_string(n) + " nodes");
  }
  if (!conditions_.empty() && conditions_.size() != nodes) {
    throw std::invalid_argument("WorkGraphPolicy: " + std::to_string(conditions_.size()) +
                                " condition flags given for " + std::to_string(n) + " nodes");
  }
  if (std::none_of(conditions_.begin(), conditions_.end(), [](std::uint8_t c) { return c != 0; }))
    conditions_.clear();  // no condition node: the faster mode

  // A node's join counts its strong predecessors; a root has no
  // predecessor at all (a node that only condition nodes reach is not one).
  in_degree_.assign(nodes, 0);
  std::vector<Index> all_in_degree;
  if (conditions_.empty()) {
    for (Index j : dag_.entries) ++in_degree_[static_cast<std::size_t>(j)];
  } else {
    all_in_degree.assign(nodes, 0);
    for (Index i = 0; i < n; ++i) {
      const bool weak = conditions_[static_cast<std::size_t>(i)] != 0;
      for (Index k = dag_.row_begin(i); k < dag_.row_end(i); ++k) {
        const auto j = static_cast<std::size_t>(dag_.entries[static_cast<std::size_t>(k)]);
        ++all_in_degree[j];
        if (!weak) ++in_degree_[j];
      }
    }
  }
  const std::vector<Index>& any_in_degree = conditions_.empty() ? in_degree_ : all_in_degree;
  for (Index i = 0; i < n; ++i)
    if (any_in_degree[static_cast<std::size_t>(i)] == 0) roots_.push_back(i);
  check_acyclic(in_degree_);

  for (Index i = 0; i < n; ++i)
    if (dag_.row_begin(i) == dag_.row_end(i)) ++sinks_;
  join_ = std::make_unique<std::atomic<Index>[]>(nodes);
  for (std::size_t i = 0; i < nodes; ++i) join_[i].store(in_degree_[i], std::memory_order_relaxed);
  jobs_.reserve(nodes);
  for (Index i = 0; i < n; ++i) jobs_.emplace_back(this);
  if (!roots_.empty()) {
    const Index count = static_cast<Index>(roots_.size());
    const Index grain = std::clamp<Index>(count / 256, 1, 256);
    seeds_.reserve(static_cast<std::size_t>(2 * (count / grain) + 2));
    build_seeds(0, count, grain);
  }
}

template <class Index>
void WorkGraphEngine<Index>::set_node_labels(const void* graph, std::vector<NodeLabel> labels) {
  if (!labels.empty() && labels.size() != static_cast<std::size_t>(dag_.num_rows())) {
    throw std::invalid_argument("WorkGraphPolicy::set_node_labels: " + std::to_string(labels.size()) +
                                " labels given for " + std::to_string(dag_.num_rows()) + " nodes");
  }
  graph_ = graph != nullptr ? graph : this;
  labels_ = std::move(labels);
  labeler_ = nullptr;
}

template <class Index>
void WorkGraphEngine<Index>::set_node_labeler(const void* graph, Labeler labeler, const void* context) {
  graph_ = graph != nullptr ? graph : this;
  labels_.clear();
  labeler_ = labeler;
  labeler_context_ = context;
}

template <class Index>
void WorkGraphEngine<Index>::check_acyclic(const std::vector<Index>& strong_in_degree) {
  // Kahn's algorithm over the strong edges: without a strong cycle every
  // node reaches in-degree zero.
  const Index n = dag_.num_rows();
  std::vector<Index> remaining = strong_in_degree;
  std::vector<Index> ready;
  for (Index i = 0; i < n; ++i)
    if (remaining[static_cast<std::size_t>(i)] == 0) ready.push_back(i);
  Index visited = 0;
  while (!ready.empty()) {
    const Index i = ready.back();
    ready.pop_back();
    ++visited;
    if (!conditions_.empty() && conditions_[static_cast<std::size_t>(i)] != 0) continue;  // weak edges
    for (Index k = dag_.row_begin(i); k < dag_.row_end(i); ++k) {
      const Index j = dag_.entries[static_cast<std::size_t>(k)];
      if (--remaining[static_cast<std::size_t>(j)] == 0) ready.push_back(j);
    }
  }
  if (visited != n) throw_cycle(remaining);
}

template <class Index>
int WorkGraphEngine<Index>::build_seeds(Index lo, Index hi, Index grain) {
  const int id = static_cast<int>(seeds_.size());
  seeds_.emplace_back(this, lo, hi);
  if (hi - lo > grain) {
    const Index mid = lo + (hi - lo) / 2;
    const int left = build_seeds(lo, mid, grain);
    const int right = build_seeds(mid, hi, grain);
    seeds_[static_cast<std::size_t>(id)].left = left;
    seeds_[static_cast<std::size_t>(id)].right = right;
  }
  return id;
}

template <class Index>
void WorkGraphEngine<Index>::throw_cycle(const std::vector<Index>& remaining) const {
  // Nodes Kahn's algorithm could not free all wait on some other such node
  // through a strong edge, so walking those predecessors inside that set
  // must come back to a node seen.
  Crs<Index> preds;
  transpose_crs(preds, dag_);
  const Index n = dag_.num_rows();
  const auto strong = [this](Index from) {
    return conditions_.empty() || conditions_[static_cast<std::size_t>(from)] == 0;
  };
  Index start = 0;
  while (remaining[static_cast<std::size_t>(start)] == 0) ++start;
  std::vector<Index> seen_at(static_cast<std::size_t>(n), -1);
  std::vector<Index> path;
  Index v = start;
  while (seen_at[static_cast<std::size_t>(v)] < 0) {
    seen_at[static_cast<std::size_t>(v)] = static_cast<Index>(path.size());
    path.push_back(v);
    for (Index k = preds.row_begin(v); k < preds.row_end(v); ++k) {
      const Index u = preds.entries[static_cast<std::size_t>(k)];
      if (remaining[static_cast<std::size_t>(u)] > 0 && strong(u)) {
        v = u;
        break;
      }
    }
  }
  // path[seen_at[v]..] walks the cycle backwards; print it along the edges.
  std::vector<Index> cycle(path.begin() + seen_at[static_cast<std::size_t>(v)], path.end());
  std::reverse(cycle.begin(), cycle.end());
  std::string text;
  for (Index node : cycle) text += std::to_string(node) + " -> ";
  text += std::to_string(cycle.front());
  throw std::invalid_argument("WorkGraphPolicy: the dependence graph has a cycle: " + text +
                              " (nothing was run)");
}

template <class Index>
void WorkGraphEngine<Index>::run_calls(Executor& executor, const NodeCall* calls,
                                       const std::atomic<bool>* cancel) {
  execute_run(executor, nullptr, nullptr, calls, cancel);
}

template <class Index>
void WorkGraphEngine<Index>::run(Executor& executor, const void* functor, Call call,
                                 const std::atomic<bool>* cancel) {
  if (!conditions_.empty()) {
    throw std::logic_error(
        "parallel_for(WorkGraphPolicy, f): the policy has condition nodes, whose calls return the "
        "successor to run; run them with WorkGraphPolicy::run and a NodeCall per node");
  }
  execute_run(executor, functor, call, nullptr, cancel);
}

template <class Index>
void WorkGraphEngine<Index>::execute_run(Executor& executor, const void* functor, Call call,
                                         const NodeCall* calls, const std::atomic<bool>* cancel) {
  if (WorkerContext* worker = Executor::current_worker()) worker->check_nested_wait("WorkGraphPolicy::run");
  if (!begin(executor, functor, call, calls, cancel, nullptr, nullptr, nullptr)) {
    if (std::exception_ptr error = finish_run()) std::rethrow_exception(error);
    return;
  }
  // acquire: pairs with the acq_rel decrement that ended the run.
  executor.wait_until_run_ends([this] { return pending_.load(std::memory_order_acquire) == 0; });
  if (std::exception_ptr error = finish_run()) std::rethrow_exception(error);
}

template <class Index>
void WorkGraphEngine<Index>::start_calls(Executor& executor, const NodeCall* calls,
                                         const std::atomic<bool>* cancel, OnDone done, void* context,
                                         const WaitScope* scope) {
  if (!begin(executor, nullptr, nullptr, calls, cancel, done, context, scope)) done(context, finish_run());
}

template <class Index>
bool WorkGraphEngine<Index>::begin(Executor& executor, const void* functor, Call call, const NodeCall* calls,
                                   const std::atomic<bool>* cancel, OnDone done, void* context,
                                   const WaitScope* scope) {
  if (busy_.exchange(true, std::memory_order_acquire)) {
    throw std::logic_error("WorkGraphPolicy: this policy is already running a parallel_for");
  }
  if (executor.gpu_worker_count() == 0) {
    const auto gpu = std::find(domains_.begin(), domains_.end(), Domain::Gpu);
    if (gpu != domains_.end()) {
      busy_.store(false, std::memory_order_release);
      throw std::logic_error("WorkGraphPolicy: node " + std::to_string(gpu - domains_.begin()) +
                             " (the first of Domain::Gpu) needs GPU-priority workers, and the executor " +
                             executor.no_gpu_workers_reason() + ", or give the nodes Domain::Cpu");
    }
  }
  executor_ = &executor;
  functor_ = functor;
  call_ = call;
  node_calls_ = calls;
  cancel_ = cancel;
  on_done_ = done;
  on_done_context_ = context;
  scope_ = scope;
  failed_.store(false, std::memory_order_relaxed);
  error_ = nullptr;
  // One list for the whole run, so that each observer sees all of it or none.
  // finish_run() lets go of it, so it is null here.
  if (executor.observers() != nullptr) run_observers_ = executor.share_observers();
  if (run_observers_ != nullptr && labels_.empty() && labeler_ != nullptr) {
    try {
      labels_ = labeler_(labeler_context_);  // paid once, by the first run anyone observes
    } catch (...) {
      run_observers_.reset();
      busy_.store(false, std::memory_order_release);
      throw;
    }
    if (labels_.size() != static_cast<std::size_t>(dag_.num_rows()))
      labels_.clear();  // a wrong labeler: "node"
  }
  run_ = runs_begun_++;
  if (run_observers_ != nullptr) run_observers_->run_begin(run_event());
  if (roots_.empty()) return false;  // no node, or none without a predecessor
  if (!conditions_.empty()) {
    // A node that did not run in the last pass (a branch not taken) may have
    // been counted down by some of its predecessors: every pass starts from
    // full counts. (Without condition nodes every node runs and resets its own.)
    for (std::size_t i = 0; i < in_degree_.size(); ++i)
      join_[i].store(in_degree_[i], std::memory_order_relaxed);
  }
  pending_.store(conditions_.empty() ? sinks_ : static_cast<Index>(roots_.size()), std::memory_order_relaxed);
  run_epoch_ = executor.begin_run();
  // Submitting publishes everything above to the workers (the deque's or the
  // inbox's release/acquire).
  executor.submit(&seeds_.front());
  return true;
}

template <class Index>
std::exception_ptr WorkGraphEngine<Index>::finish_run() noexcept {
  std::exception_ptr error = std::exchange(error_, nullptr);
  if (!error && cancel_ != nullptr && cancel_->load(std::memory_order_relaxed)) {
    error = std::make_exception_ptr(Cancelled("the run was cancelled; nodes not yet started were skipped"));
  }
  if (run_observers_ != nullptr) {
    run_observers_->run_end(run_event());
    run_observers_.reset();  // a detached observer goes with the last run that reads it
  }
  // release: the next run (possibly on another thread) sees this one's state settled.
  busy_.store(false, std::memory_order_release);
  return error;
}

template <class Index>
void WorkGraphEngine<Index>::execute(Index node, WorkerContext& worker, Index& owed) {
  const bool observed = run_observers_ != nullptr;
  if (conditions_.empty()) {
    observed ? execute_from<true, false>(node, worker, owed) : execute_from<false, false>(node, worker, owed);
  } else {
    observed ? execute_from<true, true>(node, worker, owed) : execute_from<false, true>(node, worker, owed);
  }
}

template <class Index>
void WorkGraphEngine<Index>::invoke_seed(Job& job, WorkerContext& worker) {
  const SeedJob* seed = static_cast<const SeedJob*>(&job);
  WorkGraphEngine& self = *seed->engine;
  WaitScope::Inside inside(self.scope_);
  while (seed->left >= 0) {  // keep the left half, offer the right half to thieves
    worker.push(&self.seeds_[static_cast<std::size_t>(seed->right)]);
    seed = &self.seeds_[static_cast<std::size_t>(seed->left)];
  }
  Index owed = 0;
  // One mode for the block of roots (observers, condition nodes).
  if (self.run_observers_ != nullptr) {
    self.conditions_.empty() ? self.template execute_roots<true, false>(*seed, worker, owed)
                             : self.template execute_roots<true, true>(*seed, worker, owed);
  } else {
    self.conditions_.empty() ? self.template execute_roots<false, false>(*seed, worker, owed)
                             : self.template execute_roots<false, true>(*seed, worker, owed);
  }
  if (owed > 0) self.finish(owed);
}

template <class Index>
template <bool Observed, bool Conditions>
void WorkGraphEngine<Index>::execute_roots(const SeedJob& seed, WorkerContext& worker, Index& owed) {
  // The bounds are copied first: once the last root is handed over (to a GPU
  // worker, say) the run may end and free this seed. Reading roots_[r] is
  // safe: while root r has not run, the run cannot end.
  const Index lo = seed.lo, hi = seed.hi;
  for (Index r = lo; r < hi; ++r)
    execute_from<Observed, Conditions>(roots_[static_cast<std::size_t>(r)], worker, owed);
}

template <class Index>
void WorkGraphEngine<Index>::invoke_node(Job& job, WorkerContext& worker) {
  WorkGraphEngine& self = *static_cast<NodeJob&>(job).engine;
  WaitScope::Inside inside(self.scope_);
  const Index node = static_cast<Index>(static_cast<NodeJob*>(&job) - self.jobs_.data());
  Index owed = 0;
  self.execute(node, worker, owed);
  if (owed > 0) self.finish(owed);
}

template <class Index>
template <bool Conditions>
Index WorkGraphEngine<Index>::release(Index from, Index to, WorkerContext& worker, Index& owed) {
  const Index* entries = dag_.entries.data();
  Index next = -1;
  for (Index k = from; k < to; ++k) {
    const Index succ = entries[k];
    // acq_rel: release publishes the node's effects to whoever runs succ;
    // acquire makes the other predecessors' effects visible if that is us.
    if (join_[static_cast<std::size_t>(succ)].fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if constexpr (Conditions) add_in_flight(owed);
      // Its call is read when it runs, soon and most likely here.
      if (node_calls_ != nullptr) __builtin_prefetch(&node_calls_[static_cast<std::size_t>(succ)]);
      if (next < 0) {
        next = succ;  // run one ready successor here, without a push
      } else {
        push_ready(worker, &jobs_[static_cast<std::size_t>(succ)]);
      }
    }
  }
  return next;
}

// What a job owes the pending count: without condition nodes, one for each
// sink it completed; with them, one for each node it finished, less one for
// each node it made ready (taken from the debt while there is one, else
// added to the shared count before the node is handed over). So the count
// never falls below the nodes truly in flight, and a chain of single
// successors touches it only once.
template <class Index>
template <bool Observed, bool Conditions>
void WorkGraphEngine<Index>::execute_from(Index node, WorkerContext& worker, Index& owed) {
  const Index* row_map = dag_.row_map.data();
  const ObserverList* const observers = Observed ? run_observers_.get() : nullptr;
  while (true) {
    const auto at = static_cast<std::size_t>(node);
    const Domain domain = domains_.empty() ? Domain::Cpu : domains_[at];
    if (domain == Domain::Gpu && worker.domain() != Domain::Gpu) {
      worker.push(&jobs_[at], Domain::Gpu);  // a GPU worker runs it
      return;
    }
    const Index begin = row_map[node], end = row_map[node + 1];
    const Index early = deferred_.empty() ? -1 : deferred_[at];
    const bool condition = Conditions && conditions_[at] != 0;
    // Ready the counter for the next time this node runs: nothing else
    // touches it until then (the next pass starts only after this one
    // ended; in a loop, only this node's strong predecessors, which run
    // after it).
    join_[at].store(in_degree_[at], std::memory_order_relaxed);
    // relaxed: heuristics; the first exception is kept whatever we read here,
    // and a cancellation only needs to be seen eventually.
    bool started = false;
    int choice = -1;
    if (!failed_.load(std::memory_order_relaxed) &&
        (cancel_ == nullptr || !cancel_->load(std::memory_order_relaxed))) {
      // Made before the call: once a deferred node with no early successor
      // is started, its completion may end the run and free this engine.
      NodeEvent event;
      [[maybe_unused]] NameBuffer name;
      [[maybe_unused]] const char* outer_name = nullptr;
      if constexpr (Observed) {
        event = node_event(node, worker, domain, name);
        observers->node_begin(event);
        outer_name = worker.exchange_node_name(event.name);  // loops inside name their helpers after it
        if (early >= 0) {
          // A deferred node may complete (and end the run) before its call
          // returns: the job holds the run open until it has reported the
          // end, and pays with the rest it owes. relaxed: as in add_in_flight().
          pending_.fetch_add(1, std::memory_order_relaxed);
          ++owed;
        }
      }
      try {
        if (condition) {
          choice = node_calls_[at].choose();
        } else {
          invoke_node_call(node);
        }
        started = true;
      } catch (...) {
        if (!failed_.exchange(true, std::memory_order_relaxed)) error_ = std::current_exception();
      }
      if constexpr (Observed) {
        event.time_ns = observer_clock();
        worker.exchange_node_name(outer_name);
        observers->node_end(event);
      }
    }
    Index next;
    if (condition) {
      ++owed;  // finished; a skipped condition node chooses nothing
      next = -1;
      if (choice >= 0 && choice < end - begin) {
        next = dag_.entries[static_cast<std::size_t>(begin + choice)];
        add_in_flight(owed);
      }
    } else if (early >= 0 && started) {
      // complete_deferred() releases the rest, and finishes the node.
      if (early == 0) return;
      next = release<Conditions>(begin, begin + early, worker, owed);
    } else {
      if (Conditions || begin == end) ++owed;  // finished (a sink, without conditions)
      next = release<Conditions>(begin, end, worker, owed);
    }
    if (next < 0) return;
    node = next;
  }
}

template <class Index>
void WorkGraphEngine<Index>::set_deferred(std::vector<Index> early) {
  const Index n = dag_.num_rows();
  if (!early.empty() && early.size() != static_cast<std::size_t>(n)) {
    throw std::invalid_argument("WorkGraphPolicy::set_deferred: " + std::to_string(early.size()) +
                                " entries given for " + std::to_string(n) + " nodes");
  }
  for (Index i = 0; i < static_cast<Index>(early.size()); ++i) {
    const Index k = early[static_cast<std::size_t>(i)];
    if (k < -1 || k > dag_.row_end(i) - dag_.row_begin(i)) {
      throw std::invalid_argument("WorkGraphPolicy::set_deferred: node " + std::to_string(i) + " has " +
                                  std::to_string(dag_.row_end(i) - dag_.row_begin(i)) +
                                  " successors, so it cannot release " + std::to_string(k) + " early");
    }
    if (k >= 0 && !conditions_.empty() && conditions_[static_cast<std::size_t>(i)] != 0) {
      throw std::invalid_argument("WorkGraphPolicy::set_deferred: node " + std::to_string(i) +
                                  " is a condition node, which cannot be deferred");
    }
  }
  deferred_ = std::move(early);
}

template <class Index>
void WorkGraphEngine<Index>::complete_deferred(Index node, std::exception_ptr error) noexcept {
  if (error && !failed_.exchange(true, std::memory_order_relaxed)) error_ = std::move(error);
  Executor& executor = *executor_;
  const auto at = static_cast<std::size_t>(node);
  const Index begin = dag_.row_begin(node) + deferred_[at], end = dag_.row_end(node);
  const bool counted = !conditions_.empty() || dag_.row_begin(node) == end;  // what finishing it pays
  // Possibly not a worker (a CUDA callback thread): submit, which wakes one.
  // Until this node is paid for the run cannot end, so reading the rows
  // stays safe; after that this engine is not touched.
  for (Index k = begin; k < end; ++k) {
    const Index succ = dag_.entries[static_cast<std::size_t>(k)];
    if (join_[static_cast<std::size_t>(succ)].fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // relaxed: as in add_in_flight(); up before the node is handed over.
      if (!conditions_.empty()) pending_.fetch_add(1, std::memory_order_relaxed);
      executor.submit(&jobs_[static_cast<std::size_t>(succ)],
                      domains_.empty() ? Domain::Cpu : domains_[static_cast<std::size_t>(succ)]);
    }
  }
  if (counted) finish(1);
}

template <class Index>
void WorkGraphEngine<Index>::finish(Index owed) {
  Executor& executor = *executor_;  // the engine may be reused or gone once pending hits zero
  const OnDone done = on_done_;
  void* const context = on_done_context_;
  const RunEpoch epoch = run_epoch_;
  // acq_rel: release publishes this worker's nodes (and error_) to the
  // waiter; acquire chains the other workers' releases into the last one.
  if (pending_.fetch_sub(owed, std::memory_order_acq_rel) != owed) return;
  if (done == nullptr) {
    executor.end_run(epoch);  // a blocking run(): the waiter settles the run
    return;
  }
  // A started run: settle it here, then hand over (the engine may restart at once).
  std::exception_ptr error = finish_run();
  executor.end_run(epoch);
  done(context, std::move(error));
}

template class WorkGraphEngine<std::int32_t>;
template class WorkGraphEngine<std::int64_t>;

}  // namespace detail
}  // namespace weft

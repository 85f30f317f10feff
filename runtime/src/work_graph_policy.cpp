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
WorkGraphEngine<Index>::WorkGraphEngine(Crs<Index> dag, std::vector<Domain> domains)
    : dag_(std::move(dag)), domains_(std::move(domains)) {
  validate_crs(dag_, "WorkGraphPolicy");
  const Index n = dag_.num_rows();
  if (!domains_.empty() && domains_.size() != static_cast<std::size_t>(n)) {
    throw std::invalid_argument("WorkGraphPolicy: " + std::to_string(domains_.size()) +
                                " domains given for " + std::to_string(n) + " nodes");
  }

  in_degree_.assign(static_cast<std::size_t>(n), 0);
  for (Index j : dag_.entries) ++in_degree_[static_cast<std::size_t>(j)];

  // Kahn's algorithm: a DAG lets every node reach in-degree zero.
  std::vector<Index> remaining = in_degree_;
  std::vector<Index> ready;
  for (Index i = 0; i < n; ++i)
    if (remaining[static_cast<std::size_t>(i)] == 0) ready.push_back(i);
  roots_ = ready;
  Index visited = 0;
  while (!ready.empty()) {
    const Index i = ready.back();
    ready.pop_back();
    ++visited;
    for (Index k = dag_.row_begin(i); k < dag_.row_end(i); ++k) {
      const Index j = dag_.entries[static_cast<std::size_t>(k)];
      if (--remaining[static_cast<std::size_t>(j)] == 0) ready.push_back(j);
    }
  }
  if (visited != n) throw_cycle(remaining);

  for (Index i = 0; i < n; ++i)
    if (dag_.row_begin(i) == dag_.row_end(i)) ++sinks_;
  join_ = std::make_unique<std::atomic<Index>[]>(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i)
    join_[static_cast<std::size_t>(i)].store(in_degree_[static_cast<std::size_t>(i)]);
  jobs_.reserve(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) jobs_.emplace_back(this);
  if (!roots_.empty()) {
    const Index count = static_cast<Index>(roots_.size());
    const Index grain = std::clamp<Index>(count / 256, 1, 256);
    seeds_.reserve(static_cast<std::size_t>(2 * (count / grain) + 2));
    build_seeds(0, count, grain);
  }
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
  // Nodes Kahn's algorithm could not free all wait on some other such node,
  // so walking predecessors inside that set must come back to a node seen.
  Crs<Index> preds;
  transpose_crs(preds, dag_);
  const Index n = dag_.num_rows();
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
      if (remaining[static_cast<std::size_t>(u)] > 0) {
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
  execute_run(executor, functor, call, nullptr, cancel);
}

template <class Index>
void WorkGraphEngine<Index>::execute_run(Executor& executor, const void* functor, Call call,
                                         const NodeCall* calls, const std::atomic<bool>* cancel) {
  if (!begin(executor, functor, call, calls, cancel, nullptr, nullptr)) return;
  // acquire: pairs with the acq_rel decrement that finished the last sink.
  executor.wait_until([this] { return pending_sinks_.load(std::memory_order_acquire) == 0; });
  if (std::exception_ptr error = finish_run()) std::rethrow_exception(error);
}

template <class Index>
void WorkGraphEngine<Index>::start_calls(Executor& executor, const NodeCall* calls,
                                         const std::atomic<bool>* cancel, OnDone done, void* context) {
  if (!begin(executor, nullptr, nullptr, calls, cancel, done, context)) done(context, finish_run());
}

template <class Index>
bool WorkGraphEngine<Index>::begin(Executor& executor, const void* functor, Call call, const NodeCall* calls,
                                   const std::atomic<bool>* cancel, OnDone done, void* context) {
  if (busy_.exchange(true, std::memory_order_acquire)) {
    throw std::logic_error("WorkGraphPolicy: this policy is already running a parallel_for");
  }
  for (Domain d : domains_) {
    if (d == Domain::Gpu && executor.gpu_worker_count() == 0) {
      busy_.store(false, std::memory_order_release);
      throw std::logic_error(
          "WorkGraphPolicy: the graph has GPU nodes and the executor has no GPU-priority workers");
    }
  }
  executor_ = &executor;
  functor_ = functor;
  call_ = call;
  node_calls_ = calls;
  cancel_ = cancel;
  on_done_ = done;
  on_done_context_ = context;
  failed_.store(false, std::memory_order_relaxed);
  error_ = nullptr;
  if (dag_.num_rows() == 0) return false;
  pending_sinks_.store(sinks_, std::memory_order_relaxed);
  executor.begin_run();
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
  // release: the next run (possibly on another thread) sees this one's state settled.
  busy_.store(false, std::memory_order_release);
  return error;
}

template <class Index>
void WorkGraphEngine<Index>::invoke_seed(Job& job, WorkerContext& worker) {
  const SeedJob* seed = static_cast<const SeedJob*>(&job);
  WorkGraphEngine& self = *seed->engine;
  while (seed->left >= 0) {  // keep the left half, offer the right half to thieves
    worker.push(&self.seeds_[static_cast<std::size_t>(seed->right)]);
    seed = &self.seeds_[static_cast<std::size_t>(seed->left)];
  }
  const Index lo = seed->lo, hi = seed->hi;
  Index sinks = 0;
  // Reading roots_[r] is safe: while root r has not run, the run cannot end.
  const bool traced = worker.tracing();  // once per block of roots
  for (Index r = lo; r < hi; ++r) {
    const Index root = self.roots_[static_cast<std::size_t>(r)];
    sinks += traced ? self.template execute_from<true>(root, worker)
                    : self.template execute_from<false>(root, worker);
  }
  if (sinks > 0) self.finish_sinks(sinks);
}

template <class Index>
void WorkGraphEngine<Index>::invoke_node(Job& job, WorkerContext& worker) {
  WorkGraphEngine& self = *static_cast<NodeJob&>(job).engine;
  const Index node = static_cast<Index>(static_cast<NodeJob*>(&job) - self.jobs_.data());
  const Index sinks = self.execute(node, worker);
  if (sinks > 0) self.finish_sinks(sinks);
}

template <class Index>
Index WorkGraphEngine<Index>::release(Index from, Index to, WorkerContext& worker) {
  const Index* entries = dag_.entries.data();
  Index next = -1;
  for (Index k = from; k < to; ++k) {
    const Index succ = entries[k];
    // acq_rel: release publishes the node's effects to whoever runs succ;
    // acquire makes the other predecessors' effects visible if that is us.
    if (join_[static_cast<std::size_t>(succ)].fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (next < 0) {
        next = succ;  // run one ready successor here, without a push
      } else {
        worker.push(&jobs_[static_cast<std::size_t>(succ)]);
      }
    }
  }
  return next;
}

template <class Index>
template <bool Traced>
Index WorkGraphEngine<Index>::execute_from(Index node, WorkerContext& worker) {
  const Index* row_map = dag_.row_map.data();
  Index sinks = 0;
  while (true) {
    const auto at = static_cast<std::size_t>(node);
    const Domain domain = domains_.empty() ? Domain::Cpu : domains_[at];
    if (domain == Domain::Gpu && worker.domain() != Domain::Gpu) {
      worker.push(&jobs_[at], Domain::Gpu);  // a GPU worker runs it
      return sinks;
    }
    const Index begin = row_map[node], end = row_map[node + 1];
    const Index early = deferred_.empty() ? -1 : deferred_[at];
    // Ready the counter for the next run now: nothing touches it again in
    // this run, and the next run starts only after this one completed.
    join_[at].store(in_degree_[at], std::memory_order_relaxed);
    // relaxed: heuristics; the first exception is kept whatever we read here,
    // and a cancellation only needs to be seen eventually.
    bool started = false;
    if (!failed_.load(std::memory_order_relaxed) &&
        (cancel_ == nullptr || !cancel_->load(std::memory_order_relaxed))) {
      // Read before the call: once a deferred node with no early successor
      // is started, its completion may end the run and free this engine.
      const char* name = trace_names_.empty() ? "node" : trace_names_[at];
      try {
        if constexpr (Traced) {
          const std::int64_t start = worker.trace_clock();
          invoke_node_call(node);
          worker.trace(name, domain, start);
        } else {
          invoke_node_call(node);
        }
        started = true;
      } catch (...) {
        if (!failed_.exchange(true, std::memory_order_relaxed)) error_ = std::current_exception();
      }
    }
    Index next;
    if (early >= 0 && started) {
      // complete_deferred() releases the rest and counts the sink.
      if (early == 0) return sinks;
      next = release(begin, begin + early, worker);
    } else {
      if (begin == end) ++sinks;
      next = release(begin, end, worker);
    }
    if (next < 0) return sinks;
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
  }
  deferred_ = std::move(early);
}

template <class Index>
void WorkGraphEngine<Index>::complete_deferred(Index node, std::exception_ptr error) noexcept {
  if (error && !failed_.exchange(true, std::memory_order_relaxed)) error_ = std::move(error);
  Executor& executor = *executor_;
  const auto at = static_cast<std::size_t>(node);
  const Index begin = dag_.row_begin(node) + deferred_[at], end = dag_.row_end(node);
  const bool sink = dag_.row_begin(node) == end;
  // Possibly not a worker (a CUDA callback thread): submit, which wakes one.
  // Until the last successor is released the run cannot end, so reading the
  // rows stays safe; after that this engine is not touched.
  for (Index k = begin; k < end; ++k) {
    const Index succ = dag_.entries[static_cast<std::size_t>(k)];
    if (join_[static_cast<std::size_t>(succ)].fetch_sub(1, std::memory_order_acq_rel) == 1) {
      executor.submit(&jobs_[static_cast<std::size_t>(succ)],
                      domains_.empty() ? Domain::Cpu : domains_[static_cast<std::size_t>(succ)]);
    }
  }
  if (sink) finish_sinks(1);
}

template <class Index>
void WorkGraphEngine<Index>::finish_sinks(Index completed) {
  Executor& executor = *executor_;  // the engine may be reused or gone once pending hits zero
  const OnDone done = on_done_;
  void* const context = on_done_context_;
  // acq_rel: release publishes this worker's nodes (and error_) to the
  // waiter; acquire chains the other workers' releases into the last one.
  if (pending_sinks_.fetch_sub(completed, std::memory_order_acq_rel) != completed) return;
  if (done == nullptr) {
    executor.end_run();  // a blocking run(): the waiter settles the run
    return;
  }
  // A started run: settle it here, then hand over (the engine may restart at once).
  std::exception_ptr error = finish_run();
  executor.end_run();
  done(context, std::move(error));
}

template class WorkGraphEngine<std::int32_t>;
template class WorkGraphEngine<std::int64_t>;

}  // namespace detail
}  // namespace weft

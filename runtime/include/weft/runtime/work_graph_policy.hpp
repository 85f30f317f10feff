// The static work-DAG (Kokkos report 2.4 and 3.3): call f(i) for every node
// of a DAG given in compressed rows, f(j) only after every f(i) with an edge
// i -> j has returned.
//
//   weft::Crs<int> dag;   // row i: the nodes that execute after i
//   ...
//   weft::WorkGraphPolicy<int> policy(dag);      // validates, finds cycles
//   weft::parallel_for(executor, policy, [&](int i) { value[i] = ...; });
//
// Everything a run needs (join counters, one job per node, root-seeding jobs)
// is prepared when the policy is built, so a run allocates nothing and a
// policy can be run many times. Each node resets its own join counter when it
// runs, so there is no reset pass between runs either.
//
// Errors: a malformed Crs or a cycle throws std::invalid_argument from the
// constructor, naming the problem (for a cycle, the nodes on it); nothing
// runs. If f throws, nodes already running finish, nodes not yet started are
// skipped (f is not called for them, but the DAG is still walked so the policy
// stays reusable), and parallel_for rethrows the first exception.
//
// One policy runs one parallel_for at a time; starting a second while the
// first runs throws std::logic_error. Copies of a policy share its state.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <weft/runtime/crs.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/task.hpp>

namespace weft {

// The executor used where none is named: default configuration, created on first use.
Executor& default_executor();

namespace detail {

template <class Index>
class WorkGraphEngine {
 public:
  using Call = void (*)(const void* functor, Index i);
  // One call per node, for callers that hold a different callable per node
  // (graphs): node i runs calls[i].fn(calls[i].state), one indirect call.
  struct NodeCall {
    void (*fn)(void*);
    void* state;
  };

  // domains: empty (every node on CPU workers) or one Domain per node.
  explicit WorkGraphEngine(Crs<Index> dag, std::vector<Domain> domains = {});
  WorkGraphEngine(const WorkGraphEngine&) = delete;
  WorkGraphEngine& operator=(const WorkGraphEngine&) = delete;

  // Runs call(functor, i) for every node in dependence order; blocks (on a
  // worker: keeps running other jobs) until all are done; rethrows. Once
  // *cancel is true, nodes not yet started are skipped and run() throws
  // weft::Cancelled at the end.
  void run(Executor& executor, const void* functor, Call call, const std::atomic<bool>* cancel = nullptr);
  // The same with one NodeCall per node (num_nodes() of them).
  void run_calls(Executor& executor, const NodeCall* calls, const std::atomic<bool>* cancel = nullptr);
  // Starts a run of `calls` and returns at once; the worker that finishes
  // it calls done(context, error) (error null on success, weft::Cancelled
  // when cancelled), after which the engine may be started again.
  using OnDone = void (*)(void* context, std::exception_ptr error);
  void start_calls(Executor& executor, const NodeCall* calls, const std::atomic<bool>* cancel, OnDone done,
                   void* context);

  // Names for traces: one interned name per node (intern_trace_name), or
  // empty for "node".
  void set_trace_names(std::vector<const char*> names) { trace_names_ = std::move(names); }

  // Deferred nodes: nodes whose call only starts their work (a GPU node
  // queues a kernel on a stream and returns) and which complete later, when
  // complete_deferred(node) is called from any thread (a CUDA host callback,
  // say). early: empty (no deferred node) or one entry per node: -1 for an
  // ordinary node; k >= 0 makes node i deferred, and the first k successors
  // in its row are released as soon as its call returns, because something
  // else already orders them after its work (the same stream, an event they
  // wait on). Its other successors, and the end of the run if it is a sink,
  // wait for complete_deferred(i). A deferred node whose call throws, or
  // that a failure or cancellation skips, completes at once, and
  // complete_deferred must not be called for it in that run. Set it while no
  // run is in flight; throws std::invalid_argument on a bad entry.
  void set_deferred(std::vector<Index> early);
  // Completes deferred node `node` of the run in flight (see set_deferred);
  // a non-null error fails the run as a node's exception would.
  void complete_deferred(Index node, std::exception_ptr error = nullptr) noexcept;

  Index num_nodes() const noexcept { return dag_.num_rows(); }
  Index num_roots() const noexcept { return static_cast<Index>(roots_.size()); }
  Index num_sinks() const noexcept { return sinks_; }
  const Crs<Index>& graph() const noexcept { return dag_; }

 private:
  struct NodeJob : Job {
    explicit NodeJob(WorkGraphEngine* e) : Job(&WorkGraphEngine::invoke_node), engine(e) {}
    WorkGraphEngine* engine;
  };
  // Roots are handed out by a binary tree of seeding jobs: a thief takes the
  // larger half of what is left, so independent nodes spread in O(log n) steals.
  struct SeedJob : Job {
    SeedJob(WorkGraphEngine* e, Index l, Index h)
        : Job(&WorkGraphEngine::invoke_seed), engine(e), lo(l), hi(h) {}
    WorkGraphEngine* engine;
    Index lo, hi;               // roots_[lo, hi)
    int left = -1, right = -1;  // children in seeds_, or -1 for a leaf
  };

  void execute_run(Executor& executor, const void* functor, Call call, const NodeCall* calls,
                   const std::atomic<bool>* cancel);
  // Sets a run up and submits its roots; false for an empty graph (nothing submitted).
  bool begin(Executor& executor, const void* functor, Call call, const NodeCall* calls,
             const std::atomic<bool>* cancel, OnDone done, void* context);
  std::exception_ptr finish_run() noexcept;  // the run's error (or Cancelled); frees the engine
  static void invoke_node(Job& job, WorkerContext& worker);
  static void invoke_seed(Job& job, WorkerContext& worker);
  template <bool Traced>
  Index execute_from(Index node, WorkerContext& worker);  // returns sinks completed
  // Releases the successors entries[k] for k in [from, to): pushes those
  // that became ready except the first, which it returns (or -1).
  Index release(Index from, Index to, WorkerContext& worker);
  Index execute(Index node, WorkerContext& worker) {
    return worker.tracing() ? execute_from<true>(node, worker) : execute_from<false>(node, worker);
  }
  void finish_sinks(Index completed);
  void invoke_node_call(Index node) {
    if (node_calls_ != nullptr) {
      const NodeCall& c = node_calls_[static_cast<std::size_t>(node)];
      c.fn(c.state);
    } else {
      call_(functor_, node);
    }
  }
  int build_seeds(Index lo, Index hi, Index grain);
  [[noreturn]] void throw_cycle(const std::vector<Index>& remaining_in_degree) const;

  Crs<Index> dag_;
  std::vector<Index> in_degree_;
  std::vector<Domain> domains_;  // empty: all CPU
  std::vector<const char*> trace_names_;
  std::vector<Index> deferred_;  // empty: no deferred node (see set_deferred)
  std::unique_ptr<std::atomic<Index>[]> join_;
  std::vector<NodeJob> jobs_;
  std::vector<Index> roots_;
  std::vector<SeedJob> seeds_;
  Index sinks_ = 0;

  // The run in progress.
  Executor* executor_ = nullptr;
  const void* functor_ = nullptr;
  Call call_ = nullptr;
  const NodeCall* node_calls_ = nullptr;
  OnDone on_done_ = nullptr;
  void* on_done_context_ = nullptr;
  const std::atomic<bool>* cancel_ = nullptr;
  std::atomic<bool> busy_{false};
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
  alignas(64) std::atomic<Index> pending_sinks_{0};
};

extern template class WorkGraphEngine<std::int32_t>;
extern template class WorkGraphEngine<std::int64_t>;

}  // namespace detail

template <class Index = std::int32_t>
class WorkGraphPolicy {
 public:
  using index_type = Index;
  using graph_type = Crs<Index>;
  using Engine = detail::WorkGraphEngine<Index>;

  // dependences: row i lists the nodes that execute after node i.
  explicit WorkGraphPolicy(const graph_type& dependences)
      : engine_(std::make_shared<detail::WorkGraphEngine<Index>>(dependences)) {}
  // The same, with a Domain per node (GPU nodes run on GPU-priority
  // workers); an rvalue graph is moved in rather than copied.
  WorkGraphPolicy(graph_type dependences, std::vector<Domain> domains)
      : engine_(
            std::make_shared<detail::WorkGraphEngine<Index>>(std::move(dependences), std::move(domains))) {}

  Index num_nodes() const noexcept { return engine_->num_nodes(); }
  Index num_roots() const noexcept { return engine_->num_roots(); }  // nodes with no predecessor
  Index num_sinks() const noexcept { return engine_->num_sinks(); }  // nodes with no successor
  const graph_type& graph() const noexcept { return engine_->graph(); }
  detail::WorkGraphEngine<Index>& engine() const noexcept { return *engine_; }

 private:
  std::shared_ptr<detail::WorkGraphEngine<Index>> engine_;
};

template <class Index, class F>
void parallel_for(Executor& executor, const WorkGraphPolicy<Index>& policy, const F& f) {
  static_assert(std::is_invocable_v<const F&, Index>, "parallel_for(WorkGraphPolicy, f) calls f(index)");
  policy.engine().run(executor, &f, [](const void* fn, Index i) { (*static_cast<const F*>(fn))(i); });
}

template <class Index, class F>
void parallel_for(const WorkGraphPolicy<Index>& policy, const F& f) {
  parallel_for(default_executor(), policy, f);
}

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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
// For callers with one callable per node (the graph layer): run() and
// start() take a NodeCall per node, start() returns at once and reports the
// end through a callback, deferred nodes complete later from any thread
// (set_deferred), and condition nodes choose which one successor runs
// (Taskflow's condition tasks): their edges are weak, so a condition node
// is no join predecessor, and a cycle through one is allowed.
//
// One policy runs one pass at a time; starting a second while the first
// runs throws std::logic_error. Copies of a policy share its state.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <weft/runtime/crs.hpp>
#include <weft/runtime/detail/work_graph_engine.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/task.hpp>
#include <weft/runtime/wait_scope.hpp>
#include <weft/runtime/work_graph_node_call.hpp>

namespace weft {

// The executor used where none is named: default configuration, created on first use.
Executor& default_executor();

template <class Index = std::int32_t>
class WorkGraphPolicy {
 public:
  using index_type = Index;
  using graph_type = Crs<Index>;
  using NodeCall = WorkGraphNodeCall;
  // Called once when a started pass has ended, by whichever thread ended it,
  // with its first error (null on success, weft::Cancelled when cancelled);
  // the policy may be started again from inside the call.
  using OnDone = void (*)(void* context, std::exception_ptr error);

  // dependences: row i lists the nodes that execute after node i.
  explicit WorkGraphPolicy(const graph_type& dependences)
      : engine_(std::make_shared<Engine>(dependences, std::vector<Domain>{}, std::vector<std::uint8_t>{})) {}
  // The same, with a Domain per node (GPU nodes run on GPU-priority workers)
  // or none, and optionally a flag per node marking condition nodes: a
  // condition node's call (NodeCall::condition) returns k, and only the
  // k-th successor in its row runs next (none when k is out of range). Its
  // edges are weak: they do not count towards a successor's join, so a node
  // runs when all its other (strong) predecessors ran in this pass, or
  // whenever a condition node chooses it. Roots are the nodes without any
  // predecessor; a cycle of strong edges is an error, one through a
  // condition node a loop. Passes with condition nodes end when no node is
  // left in flight. An rvalue graph is moved in rather than copied.
  WorkGraphPolicy(graph_type dependences, std::vector<Domain> domains,
                  std::vector<std::uint8_t> conditions = {})
      : engine_(std::make_shared<Engine>(std::move(dependences), std::move(domains), std::move(conditions))) {
  }

  Index num_nodes() const noexcept { return engine_->num_nodes(); }
  Index num_roots() const noexcept { return engine_->num_roots(); }  // nodes with no predecessor
  Index num_sinks() const noexcept { return engine_->num_sinks(); }  // nodes with no successor
  const graph_type& graph() const noexcept { return engine_->graph(); }

  // Runs calls[i] for every node (num_nodes() of them) in dependence order;
  // blocks until all are done (on a worker: running other jobs meanwhile);
  // rethrows the first exception. Once *cancel is true, nodes not yet
  // started are skipped and it throws weft::Cancelled at the end.
  void run(Executor& executor, const NodeCall* calls, const std::atomic<bool>* cancel = nullptr) const {
    engine_->run_calls(executor, calls, cancel);
  }
  // The same, returning at once; done(context, error) reports the end.
  // While they run nodes, workers are inside `scope` (may be null).
  void start(Executor& executor, const NodeCall* calls, const std::atomic<bool>* cancel, OnDone done,
             void* context, const WaitScope* scope = nullptr) const {
    engine_->start_calls(executor, calls, cancel, done, context, scope);
  }

  // What observers (observer.hpp) and traces hear of the nodes: the graph
  // they belong to (for identity; the policy itself when never set) and one
  // label per node (name or kind, partition, device, level), or none
  // ("node"). The caller keeps the names alive while the policy runs. Set
  // while no pass is in flight; throws std::invalid_argument for a wrong count.
  void set_node_labels(const void* graph, std::vector<NodeLabel> labels) const {
    engine_->set_node_labels(graph, std::move(labels));
  }
  // The same, made only when a run is first observed: labeler(context)
  // returns the labels (num_nodes() of them; any other count leaves the
  // nodes "node"), on the thread that starts that run. For graphs of many
  // nodes that mostly run unobserved, so that they pay nothing for names.
  using Labeler = std::vector<NodeLabel> (*)(const void* context);
  void set_node_labeler(const void* graph, Labeler labeler, const void* context) const {
    engine_->set_node_labeler(graph, labeler, context);
  }

  // Deferred nodes: nodes whose call only starts their work (a GPU node
  // queues a kernel on a stream and returns) and which complete later, when
  // complete_deferred(node) is called from any thread (a CUDA host callback,
  // say). early: empty (no deferred node) or one entry per node: -1 for an
  // ordinary node; k >= 0 makes node i deferred, and the first k successors
  // in its row are released as soon as its call returns, because something
  // else already orders them after its work (the same stream, an event they
  // wait on). Its other successors, and the end of the pass if it is a sink,
  // wait for complete_deferred(i). A deferred node whose call throws, or
  // that a failure or cancellation skips, completes at once, and
  // complete_deferred must not be called for it in that pass. Condition
  // nodes cannot be deferred. Set it while no pass is in flight; throws
  // std::invalid_argument on a bad entry.
  void set_deferred(std::vector<Index> early) const { engine_->set_deferred(std::move(early)); }
  // Completes deferred node `node` of the pass in flight (see set_deferred);
  // a non-null error fails the pass as a node's exception would.
  void complete_deferred(Index node, std::exception_ptr error = nullptr) const noexcept {
    engine_->complete_deferred(node, std::move(error));
  }

 private:
  using Engine = detail::WorkGraphEngine<Index>;
  template <class I, class F>
  friend void parallel_for(Executor& executor, const WorkGraphPolicy<I>& policy, const F& f);

  std::shared_ptr<Engine> engine_;
};

template <class Index, class F>
void parallel_for(Executor& executor, const WorkGraphPolicy<Index>& policy, const F& f) {
  static_assert(std::is_invocable_v<const F&, Index>, "parallel_for(WorkGraphPolicy, f) calls f(index)");
  policy.engine_->run(
      executor, &f, [](const void* fn, Index i) { (*static_cast<const F*>(fn))(i); }, nullptr);
}

template <class Index, class F>
void parallel_for(const WorkGraphPolicy<Index>& policy, const F& f) {
  parallel_for(default_executor(), policy, f);
}

}  // namespace weft

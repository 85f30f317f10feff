// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The engine behind WorkGraphPolicy (work_graph_policy.hpp says what it
// promises): join counters, one job per node, root-seeding jobs, and the
// run in flight. Internal: users reach it through WorkGraphPolicy.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <weft/runtime/crs.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/wait_scope.hpp>
#include <weft/runtime/work_graph_node_call.hpp>

namespace weft {

namespace detail {

template <class Index>
class WorkGraphEngine {
 public:
  using Call = void (*)(const void* functor, Index i);
  using NodeCall = WorkGraphNodeCall;
  using OnDone = void (*)(void* context, std::exception_ptr error);

  // domains: empty (every node on CPU workers) or one Domain per node.
  // conditions: empty (none) or one flag per node (see WorkGraphPolicy).
  WorkGraphEngine(Crs<Index> dag, std::vector<Domain> domains, std::vector<std::uint8_t> conditions);
  WorkGraphEngine(const WorkGraphEngine&) = delete;
  WorkGraphEngine& operator=(const WorkGraphEngine&) = delete;

  void run(Executor& executor, const void* functor, Call call, const std::atomic<bool>* cancel);
  void run_calls(Executor& executor, const NodeCall* calls, const std::atomic<bool>* cancel);
  void start_calls(Executor& executor, const NodeCall* calls, const std::atomic<bool>* cancel, OnDone done,
                   void* context, const WaitScope* scope);

  using Labeler = std::vector<NodeLabel> (*)(const void* context);
  void set_node_labels(const void* graph, std::vector<NodeLabel> labels);
  void set_node_labeler(const void* graph, Labeler labeler, const void* context);
  void set_deferred(std::vector<Index> early);
  void complete_deferred(Index node, std::exception_ptr error) noexcept;

  Index num_nodes() const noexcept { return dag_.num_rows(); }
  Index num_roots() const noexcept { return static_cast<Index>(roots_.size()); }
  Index num_sinks() const noexcept { return sinks_; }
  bool has_conditions() const noexcept { return !conditions_.empty(); }
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

  void check_acyclic(const std::vector<Index>& strong_in_degree);
  void execute_run(Executor& executor, const void* functor, Call call, const NodeCall* calls,
                   const std::atomic<bool>* cancel);
  // Sets a run up and submits its roots; false when there is nothing to
  // run (no node, or no root), in which case nothing was submitted.
  bool begin(Executor& executor, const void* functor, Call call, const NodeCall* calls,
             const std::atomic<bool>* cancel, OnDone done, void* context, const WaitScope* scope);
  std::exception_ptr finish_run() noexcept;  // the run's error (or Cancelled); frees the engine
  static void invoke_node(Job& job, WorkerContext& worker);
  static void invoke_seed(Job& job, WorkerContext& worker);
  // Runs `node` and what it makes ready, as far as it can without pushing;
  // adds to `owed` what the job owes the run's pending count (see finish()).
  // Observed: the run has observers (run_observers_).
  template <bool Observed, bool Conditions>
  void execute_from(Index node, WorkerContext& worker, Index& owed);
  void execute(Index node, WorkerContext& worker, Index& owed);
  template <bool Observed, bool Conditions>
  void execute_roots(const SeedJob& seed, WorkerContext& worker, Index& owed);
  // Releases the successors entries[k] for k in [from, to): pushes those
  // that became ready except the first, which it returns (or -1).
  template <bool Conditions>
  Index release(Index from, Index to, WorkerContext& worker, Index& owed);
  // Accounts for one more node in flight (Conditions mode): from what the
  // job owes when it can, else on the shared count.
  void add_in_flight(Index& owed) noexcept {
    if (owed > 0) {
      --owed;
    } else {
      // relaxed: the push that hands the node over publishes it; the
      // count only has to be up before any decrement its run could make.
      pending_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // Pays what a job owes; the payment that brings the pending count to
  // zero ends the run.
  void finish(Index owed);
  void invoke_node_call(Index node) {
    if (node_calls_ != nullptr) {
      node_calls_[static_cast<std::size_t>(node)].run();
    } else {
      call_(functor_, node);
    }
  }
  // An unnamed node's name ("compute 17") is made only when observed, in
  // `name` (on the stack of the frame that sends its begin and end).
  using NameBuffer = char[48];
  NodeEvent node_event(Index node, const WorkerContext& worker, Domain domain,
                       NameBuffer& name) const noexcept {
    NodeEvent e;
    e.time_ns = observer_clock();
    e.worker = worker.index();
    e.domain = domain;
    e.node = node;
    e.graph = graph_;
    e.run = run_;
    if (!labels_.empty()) {
      const NodeLabel& label = labels_[static_cast<std::size_t>(node)];
      e.name = label.name != nullptr ? label.name : format_node_name(name, label.kind, node);
      e.partition = label.partition;
      e.device = label.device;
      e.level = label.level;
    }
    const Index begin = dag_.row_map[static_cast<std::size_t>(node)];
    [[maybe_unused]] const Index* row = dag_.entries.data() + begin;
    if constexpr (std::is_same_v<Index, std::int32_t>) {
      e.successors.narrow = row;
    } else if constexpr (std::is_same_v<Index, std::int64_t>) {
      e.successors.wide = row;
    }
    if constexpr (std::is_same_v<Index, std::int32_t> || std::is_same_v<Index, std::int64_t>)
      e.successors.count = dag_.row_map[static_cast<std::size_t>(node) + 1] - begin;
    return e;
  }
  // "<kind> <node>", cut to fit.
  static const char* format_node_name(NameBuffer& out, const char* kind, Index node) noexcept {
    std::size_t at = 0;
    while (kind[at] != '\0' && at < sizeof(out) - 22) {
      out[at] = kind[at];
      ++at;
    }
    out[at++] = ' ';
    char digits[20];
    int count = 0;
    auto value = static_cast<std::uint64_t>(node);
    do {
      digits[count++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value != 0);
    while (count > 0) out[at++] = digits[--count];
    out[at] = '\0';
    return out;
  }
  RunEvent run_event() const noexcept { return {observer_clock(), graph_, run_, dag_.num_rows()}; }
  // Out of line: inlined into the node loop, the deque's push (and its
  // growth path) took registers the loop needs, 6% per node on a chain.
  [[gnu::noinline]] static void push_ready(WorkerContext& worker, Job* job) { worker.push(job); }
  int build_seeds(Index lo, Index hi, Index grain);
  [[noreturn]] void throw_cycle(const std::vector<Index>& remaining_in_degree) const;

  Crs<Index> dag_;
  std::vector<Index> in_degree_;          // strong predecessors (edges from non-condition nodes)
  std::vector<Domain> domains_;           // empty: all CPU
  std::vector<std::uint8_t> conditions_;  // empty: no condition node
  std::vector<NodeLabel> labels_;         // for observers (empty: every node "node")
  Labeler labeler_ = nullptr;             // makes labels_ for the first observed run
  const void* labeler_context_ = nullptr;
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
  const WaitScope* scope_ = nullptr;
  std::atomic<bool> busy_{false};
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
  // Observers (in what would be padding before pending_, leaving the
  // offsets of the members above as they were): the list the run read as
  // it began (null: none), shared until it ends; the run's index among this
  // engine's runs; the graph's identity.
  std::shared_ptr<const ObserverList> run_observers_;  // the run's share, let go of as it ends
  std::int64_t run_ = -1;
  std::int64_t runs_begun_ = 0;
  const void* graph_ = this;
  RunEpoch run_epoch_ = RunEpoch::even;  // the executor run's generation, for its end_run()
  // Without condition nodes: sinks not yet done. With them: nodes in
  // flight (ready, running, or deferred and not complete), as nodes may run
  // several times or not at all.
  alignas(64) std::atomic<Index> pending_{0};
};

extern template class WorkGraphEngine<std::int32_t>;
extern template class WorkGraphEngine<std::int64_t>;

}  // namespace detail
}  // namespace weft

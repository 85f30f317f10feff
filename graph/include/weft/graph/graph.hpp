// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Graph builder (Ripple section 5.3): describe a workflow once, run it
// many times on an Executor.
//
//   weft::Graph g(weft::ExecutionKind::Cpu);
//   g.emplace([] { std::puts("A"); }).named("A");        // level 0
//   g.then([] { std::puts("B"); }).named("B");           // level 1, after A
//   g.emplace(weft::ExecutionKind::Gpu,                   // level 1 too, after A
//             weft::make_node([](const char* s) { std::puts(s); }, "C"),
//             weft::make_node([](const char* s) { std::puts(s); }, "D"));
//   g.then([] { std::puts("E"); }).named("E");           // level 2, after B, C, D
//   executor.run(g).get();                                // waits; rethrows a node's exception
//
// Operations:
//   emplace(f, args...)     a node beside the last level: it runs after the
//                           level before the last one (a root if none)
//   emplace(make_node(...), make_node(...), ...)   several such nodes at once
//   emplace(on_gpu(device, f, args...))   a GPU node: f queues CUDA work on
//                           a stream (gpu_node.hpp); then() takes it too
//   then(f, args...)        a new level: after every node of the last level
//   emplace(graph) / then(graph)   a subgraph, connected the same way; a
//                           conditional subgraph, or one a branch chooses,
//                           becomes one node that runs it (Listing 9)
//   sync(f, args...)        a node after everything added so far
//   conditional(pred)       after a pass, run again while pred() is true
//                           (Ripple; compare run_until, checked before)
//   branch(f, args...)      a condition node after the last level: f returns
//                           k (any integer type; one out of range, negative
//                           or beyond int, chooses nothing) and only the
//                           k-th of its successors runs next
//                           (the nodes then()/emplace() add after it, in
//                           that order, then add_edge()s from it);
//                           emplace(make_branch(f)) adds one beside it
//   named(name)             names the node(s) the last operation added:
//                           name, or name.0, name.1 ... for several; a
//                           tensor operation's padding copies become
//                           name.pad<from>to<to> and a reduction's
//                           finishing node name.finish
//   last()                  the id of the last node the last operation added
//   add_edge(from, to)      an extra edge between named (or numbered) nodes
// Every operation can take an ExecutionKind first to override the graph's.
// Nodes are numbered 0, 1, ... in the order they are added.
//
// Condition nodes (Taskflow's condition tasks): a branch node's edges are
// weak. A node runs once all its strong predecessors ran in the pass, or
// whenever a condition node chooses it; a branch that chooses nothing (an
// index out of range) ends that path. So loops and state machines fit in
// one graph (a cycle through a condition node is a loop, one of strong edges
// an error), and a node after exclusive branches joins them only if each
// branch reaches it through a condition node of its own. A pass ends when
// no node is left in flight.
//
// Levels follow Ripple's definition: roots are level 0, and any other node
// is one level below the deepest node it depends on (weak edges that close
// a loop excepted).
//
// Running (Executor::run, run_n, run_until): the graph is lowered once, on
// its first run (flat node array, successors in compressed rows, join
// counters that reset themselves), and that form is reused until the graph
// changes. Runs of one graph queue: each starts once the ones submitted
// before it have ended, with its own future, count and predicate. While runs
// are in flight the graph refuses changes (std::logic_error). A cycle is
// reported by node names when run() is called, and nothing runs. A node's
// exception stops nodes not yet started and is rethrown by the run's
// future; Future::cancel() does the same with weft::Cancelled (a queued run
// is removed without running). Waiting for a run from inside a node is
// allowed (the worker keeps running other jobs meanwhile), except for a run
// of the node's own graph, which could never finish first: std::logic_error.
//
// JSON: to_json() / Graph::from_json() (schema in docs/graph-json.md; include
// <nlohmann/json.hpp> to use the document). A graph loaded from JSON has no
// callables (they are not serialised): it can be inspected, validated and
// dumped again, not run.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <weft/graph/detail/callable_store.hpp>
#include <weft/graph/detail/node_names.hpp>
#include <weft/graph/detail/node_ranks.hpp>
#include <weft/graph/detail/node_record.hpp>
#include <weft/graph/detail/partitioned_op.hpp>
#include <weft/graph/detail/run_state.hpp>
#include <weft/graph/detail/tensor_operations.hpp>
#include <weft/graph/device_plan.hpp>
#include <weft/graph/gpu_node.hpp>
#include <weft/graph/node_kind.hpp>
#include <weft/graph/node_work.hpp>
#include <weft/graph/tensor_access.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/future.hpp>
#include <weft/views/reducers.hpp>
#include <weft/views/reduction_result.hpp>
#include <weft/views/tensor.hpp>

namespace weft {

class Graph;

// A callable and its arguments, for emplace() of several nodes at once; or,
// from on_gpu(), a GPU node's.
struct NodeSpec {
  NodeWork work;
  std::string name;
  StreamWork stream_work;  // GPU nodes (on_gpu): queues work on a stream of `device`
  int device = -1;
  int copy_stream = -1;  // on_gpu_copy: that copy stream, else the compute stream
};

template <class F, class... Args>
NodeSpec make_node(F&& f, Args&&... args) {
  return NodeSpec{NodeWork::make(std::forward<F>(f), std::forward<Args>(args)...), {}, {}, -1, -1};
}

// A condition node, for emplace() (beside the last level) or then(): f(args...)
// returns the index of the successor to run. g.then(make_branch(f)) is
// g.branch(f); emplace(make_branch(f)) adds one without predecessors in a
// graph built Taskflow's way (nodes first, then add_edge).
template <class F, class... Args>
NodeSpec make_branch(F&& f, Args&&... args) {
  return NodeSpec{NodeWork::make_condition(std::forward<F>(f), std::forward<Args>(args)...), {}, {}, -1, -1};
}

// A GPU node that calls f(GpuStream, args...) to queue work on CUDA device
// `device` (gpu_node.hpp says how it is ordered). Emplace it like any node:
// g.then(weft::on_gpu(0, f, args...)); it is a GPU node whatever the graph's
// or the operation's execution kind. Throws std::invalid_argument for a
// negative device; a device that does not exist is reported when the graph
// first runs.
template <class F, class... Args>
NodeSpec on_gpu(int device, F&& f, Args&&... args) {
  if (device < 0) {
    throw std::invalid_argument("weft::on_gpu: device " + std::to_string(device) +
                                " (expected a CUDA device ordinal >= 0)");
  }
  return NodeSpec{{}, {}, StreamWork::make(std::forward<F>(f), std::forward<Args>(args)...), device, -1};
}

// The same on copy stream `copy_stream` of the device instead of its compute
// stream (DeviceStreams has kDefaultCopyStreams): for transfers that should
// overlap the kernels (Ripple section 6.2). GPU nodes on different streams
// are ordered by events.
template <class F, class... Args>
NodeSpec on_gpu_copy(int device, int copy_stream, F&& f, Args&&... args) {
  NodeSpec spec = on_gpu(device, std::forward<F>(f), std::forward<Args>(args)...);
  if (copy_stream < 0 || copy_stream >= DeviceStreams::kDefaultCopyStreams) {
    throw std::invalid_argument("weft::on_gpu_copy: copy stream " + std::to_string(copy_stream) +
                                " (expected 0 to " + std::to_string(DeviceStreams::kDefaultCopyStreams - 1) +
                                ")");
  }
  spec.copy_stream = copy_stream;
  return spec;
}

// What Graph::node() tells about a node.
struct GraphNode {
  std::string name;  // may be empty; unique when not
  NodeKind kind = NodeKind::Compute;
  ExecutionKind execution = ExecutionKind::Cpu;
  int device = -1;     // the device its partition lives on (-1: none)
  int partition = -1;  // the tensor partition it works on (-1: none)
  int rank = -1;       // distributed graphs: the rank that runs it (-1: every rank)
};

namespace detail {
class GraphJsonReader;
template <class T>
inline constexpr bool is_graph_operand_v =
    std::is_same_v<std::decay_t<T>, Graph> || std::is_same_v<std::decay_t<T>, NodeSpec> ||
    std::is_same_v<std::decay_t<T>, ExecutionKind>;
}  // namespace detail

class Graph {
 public:
  using NodeId = std::int32_t;
  using Edge = std::pair<NodeId, NodeId>;

  explicit Graph(ExecutionKind kind = ExecutionKind::Cpu) : kind_(kind) {}
  // A copy runs the same callables (their states are shared) and has runs
  // of its own. Assigning to a graph with runs in flight throws
  // std::logic_error and changes nothing.
  Graph(const Graph&) = default;
  Graph& operator=(const Graph&) = default;
  Graph(Graph&&) noexcept = default;
  Graph& operator=(Graph&&) = default;
  ~Graph() = default;

  // ---- building ----
  template <class F, class... Args>
  requires(!detail::is_graph_operand_v<F>) Graph& emplace(F&& f, Args&&... args) {
    return add_node(kind_, false, callables().store(std::forward<F>(f), std::forward<Args>(args)...));
  }
  template <class F, class... Args>
  requires(!detail::is_graph_operand_v<F>) Graph& emplace(ExecutionKind kind, F&& f, Args&&... args) {
    return add_node(kind, false, callables().store(std::forward<F>(f), std::forward<Args>(args)...));
  }
  template <class... Specs>
  requires(sizeof...(Specs) > 0 &&
           (std::is_same_v<std::decay_t<Specs>, NodeSpec> && ...)) Graph& emplace(Specs&&... specs) {
    return add_specs({std::forward<Specs>(specs)...}, kind_, false);
  }
  template <class... Specs>
  requires(sizeof...(Specs) > 0 && (std::is_same_v<std::decay_t<Specs>, NodeSpec> &&
                                    ...)) Graph& emplace(ExecutionKind kind, Specs&&... specs) {
    return add_specs({std::forward<Specs>(specs)...}, kind, false);
  }
  Graph& emplace(const Graph& subgraph) { return add_subgraph(subgraph, false); }

  template <class F, class... Args>
  requires(!detail::is_graph_operand_v<F>) Graph& then(F&& f, Args&&... args) {
    return add_node(kind_, true, callables().store(std::forward<F>(f), std::forward<Args>(args)...));
  }
  template <class F, class... Args>
  requires(!detail::is_graph_operand_v<F>) Graph& then(ExecutionKind kind, F&& f, Args&&... args) {
    return add_node(kind, true, callables().store(std::forward<F>(f), std::forward<Args>(args)...));
  }
  template <class... Specs>
  requires(sizeof...(Specs) > 0 &&
           (std::is_same_v<std::decay_t<Specs>, NodeSpec> && ...)) Graph& then(Specs&&... specs) {
    return add_specs({std::forward<Specs>(specs)...}, kind_, true);
  }
  template <class... Specs>
  requires(sizeof...(Specs) > 0 && (std::is_same_v<std::decay_t<Specs>, NodeSpec> &&
                                    ...)) Graph& then(ExecutionKind kind, Specs&&... specs) {
    return add_specs({std::forward<Specs>(specs)...}, kind, true);
  }
  Graph& then(const Graph& subgraph) { return add_subgraph(subgraph, true); }

  template <class F, class... Args>
  Graph& sync(F&& f, Args&&... args) {
    return add_sync(callables().store(std::forward<F>(f), std::forward<Args>(args)...));
  }

  // A condition node after the last level; see "Condition nodes" above.
  template <class F, class... Args>
  requires(!detail::is_graph_operand_v<F>) Graph& branch(F&& f, Args&&... args) {
    return add_branch(kind_, callables().store_condition(std::forward<F>(f), std::forward<Args>(args)...));
  }
  template <class F, class... Args>
  requires(!detail::is_graph_operand_v<F>) Graph& branch(ExecutionKind kind, F&& f, Args&&... args) {
    return add_branch(kind, callables().store_condition(std::forward<F>(f), std::forward<Args>(args)...));
  }

  // ---- tensor operations (Ripple section 5.3.3) ----
  // split(kernel, args...): one node per block of the tensors among args (a
  // Tensor, or a Tensor wrapped in a padded-access modifier), beside the
  // last level like emplace(). The kernel runs once per interior cell of its
  // block with an iterator for each tensor argument and the other arguments
  // as they are. then_split: the same, after the last level. A node for
  // block b depends on the nodes of the level before that work on block b
  // of an operation split the same way, and on every node of that level
  // that works on no partition (or on a tensor split differently).
  template <class F, class... Args>
  requires(!detail::is_graph_operand_v<F>) Graph& split(F&& kernel, Args&&... args) {
    return add_partitioned(detail::make_split(std::forward<F>(kernel), std::forward<Args>(args)...), kind_,
                           false);
  }
  template <class F, class... Args>
  Graph& split(ExecutionKind kind, F&& kernel, Args&&... args) {
    return add_partitioned(detail::make_split(std::forward<F>(kernel), std::forward<Args>(args)...), kind,
                           false);
  }
  template <class F, class... Args>
  requires(!detail::is_graph_operand_v<F>) Graph& then_split(F&& kernel, Args&&... args) {
    return add_partitioned(detail::make_split(std::forward<F>(kernel), std::forward<Args>(args)...), kind_,
                           true);
  }
  template <class F, class... Args>
  Graph& then_split(ExecutionKind kind, F&& kernel, Args&&... args) {
    return add_partitioned(detail::make_split(std::forward<F>(kernel), std::forward<Args>(args)...), kind,
                           true);
  }

  // boundary(tensor, loader): one node per block that loads the padding
  // beyond the tensor's edges around its block (boundary_loader.hpp), placed
  // like split(); blocks inside the tensor do nothing. The same result as
  // split()ting a kernel that calls load_boundary on every cell, but it
  // visits only the edges. then_boundary: after the last level.
  template <class T, std::size_t D, class Loader, bool Cuda = detail::compiling_cuda>
  Graph& boundary(const Tensor<T, D>& tensor, Loader loader) {
    return add_partitioned(detail::make_boundary<Cuda>(tensor, std::move(loader)), kind_, false);
  }
  template <class T, std::size_t D, class Loader, bool Cuda = detail::compiling_cuda>
  Graph& boundary(ExecutionKind kind, const Tensor<T, D>& tensor, Loader loader) {
    return add_partitioned(detail::make_boundary<Cuda>(tensor, std::move(loader)), kind, false);
  }
  template <class T, std::size_t D, class Loader, bool Cuda = detail::compiling_cuda>
  Graph& then_boundary(const Tensor<T, D>& tensor, Loader loader) {
    return add_partitioned(detail::make_boundary<Cuda>(tensor, std::move(loader)), kind_, true);
  }
  template <class T, std::size_t D, class Loader, bool Cuda = detail::compiling_cuda>
  Graph& then_boundary(ExecutionKind kind, const Tensor<T, D>& tensor, Loader loader) {
    return add_partitioned(detail::make_boundary<Cuda>(tensor, std::move(loader)), kind, true);
  }

  // reduce(tensor, result, reducer): one Reduce node per block folds the
  // block's interior cells into the result's slot for that block, then a
  // finishing Reduce node joins the slots into result (Figure 4). The value
  // of a cell is converted to R. then_reduce: after the last level.
  // With a map, map(cell) is folded instead (map takes what *it gives), so
  // that a value computed per cell needs no tensor of its own: Kokkos'
  // parallel_reduce with a functor. On GPUs map must be a WEFT_HOST_DEVICE
  // functor. A large block's rows are folded in chunks on several workers
  // and joined in row order (docs/tensors.md): map and reducer may be called
  // from several threads at once.
  template <class T, std::size_t D, class R, class Reducer = SumReducer<>, class Map = CellItself,
            bool Cuda = detail::compiling_cuda>
  Graph& reduce(const Tensor<T, D>& tensor, ReductionResult<R>& result, Reducer reducer = {}, Map map = {}) {
    return add_partitioned(detail::make_reduce<Cuda>(tensor, result, reducer, map), kind_, false);
  }
  template <class T, std::size_t D, class R, class Reducer = SumReducer<>, class Map = CellItself,
            bool Cuda = detail::compiling_cuda>
  Graph& reduce(ExecutionKind kind, const Tensor<T, D>& tensor, ReductionResult<R>& result,
                Reducer reducer = {}, Map map = {}) {
    return add_partitioned(detail::make_reduce<Cuda>(tensor, result, reducer, map), kind, false);
  }
  template <class T, std::size_t D, class R, class Reducer = SumReducer<>, class Map = CellItself,
            bool Cuda = detail::compiling_cuda>
  Graph& then_reduce(const Tensor<T, D>& tensor, ReductionResult<R>& result, Reducer reducer = {},
                     Map map = {}) {
    return add_partitioned(detail::make_reduce<Cuda>(tensor, result, reducer, map), kind_, true);
  }
  template <class T, std::size_t D, class R, class Reducer = SumReducer<>, class Map = CellItself,
            bool Cuda = detail::compiling_cuda>
  Graph& then_reduce(ExecutionKind kind, const Tensor<T, D>& tensor, ReductionResult<R>& result,
                     Reducer reducer = {}, Map map = {}) {
    return add_partitioned(detail::make_reduce<Cuda>(tensor, result, reducer, map), kind, true);
  }

  template <class Pred>
  Graph& conditional(Pred&& pred) {
    static_assert(std::is_invocable_r_v<bool, std::decay_t<Pred>&>,
                  "conditional() takes a predicate: bool()");
    return add_conditional(std::function<bool()>(std::forward<Pred>(pred)));
  }

  Graph& named(std::string name);

  // ---- ranks (distributed tensors, docs/distributed.md) ----
  // A node on a block of a distributed tensor runs on the block's owner;
  // any other node runs on every rank. on_rank(r) makes the last
  // operation's nodes run on rank r only (a node that writes a file, say);
  // nodes on tensor blocks keep their owner (std::invalid_argument).
  // rank_group(g) names the group for a graph without distributed tensors.
  Graph& on_rank(int rank);
  Graph& rank_group(std::shared_ptr<RankGroup> group);
  const std::shared_ptr<RankGroup>& rank_group() const noexcept { return ranks_.group; }
  // Adds an edge: `to` runs after `from` (a strong edge), or, from a
  // condition node, becomes its next choice (a weak edge). O(1); cycles are
  // found when the graph first runs (or by validate()).
  Graph& add_edge(std::string_view from, std::string_view to);
  Graph& add_edge(NodeId from, NodeId to);

  // ---- inspecting ----
  std::optional<NodeId> find(std::string_view name) const { return names_.find(name); }
  std::size_t size() const noexcept { return nodes_.size(); }
  GraphNode node(NodeId id) const;
  // Throws std::logic_error before the first operation.
  NodeId last() const;
  const std::vector<Edge>& edges() const noexcept { return edges_; }
  // An edge out of a condition node: it counts as no join predecessor.
  bool is_weak(const Edge& edge) const { return record(edge.first).kind == NodeKind::Condition; }
  ExecutionKind execution_kind() const noexcept { return kind_; }
  bool is_conditional() const noexcept { return conditional_; }
  // Ripple levels (see above). Throws std::invalid_argument on a cycle of
  // strong edges, naming its nodes.
  std::vector<int> levels() const;
  // Throws std::invalid_argument naming the nodes of a strong cycle, if any.
  void validate() const;
  // Its device nodes grouped into what one launch per device covers
  // (device_plan.hpp, docs/device_plans.md); throws as validate() does.
  // A subgraph node counts as a host node: its graph has a plan of its own.
  DevicePlan device_plan() const;

  nlohmann::json to_json() const;
  std::string to_dot() const;
  static Graph from_json(const nlohmann::json& document);
  // Parses text first; errors name the problem (and, for syntax, where).
  static Graph from_json_text(std::string_view text);

  // ---- running (see Executor::run, run_n, run_until) ----
  // count >= 0 passes, or, given `until` (count < 0), passes until until()
  // returns true (asked before each pass). Throws std::invalid_argument for
  // a negative count without a predicate, or a cycle; std::logic_error
  // for a graph that cannot run here (loaded from JSON, GPU nodes on an
  // executor without GPU-priority workers), std::runtime_error for a GPU
  // node's device that cannot be used; then nothing was queued or kept.
  Future<> run_on(Executor& executor, long count, std::function<bool()> until);

 private:
  friend struct detail::Program;
  friend class detail::GraphJsonReader;

  detail::CallableStore& callables() {
    runs_.refuse_changes_while_running("change");
    return callables_;
  }
  const detail::NodeRecord& record(NodeId id) const;
  // Appends a node whose predecessors are `predecessors` (strong or weak
  // edges by their kind); returns its id.
  NodeId append(const detail::NodeRecord& node, const std::vector<NodeId>& predecessors);
  void changed() noexcept { runs_.changed(); }
  Graph& add_node(ExecutionKind kind, bool after_last, const WorkGraphNodeCall& call);
  Graph& add_specs(std::vector<NodeSpec> specs, ExecutionKind kind, bool after_last);
  Graph& add_subgraph(const Graph& subgraph, bool after_last);
  Graph& add_subgraph_node(const Graph& subgraph, const std::vector<NodeId>& predecessors, bool after_last);
  void inline_subgraph(const Graph& subgraph, const std::vector<NodeId>& predecessors, bool after_last);
  Graph& add_partitioned(detail::PartitionedOp op, ExecutionKind kind, bool after_last);
  Graph& add_sync(const WorkGraphNodeCall& call);
  Graph& add_conditional(std::function<bool()> pred);
  Graph& add_branch(ExecutionKind kind, const WorkGraphNodeCall& call);
  std::vector<NodeId> sinks(bool skip_conditions) const;
  std::int32_t split_index(std::uint64_t signature);
  std::uint64_t split_of(const detail::NodeRecord& node) const {
    return node.split < 0 ? 0 : splits_[static_cast<std::size_t>(node.split)];
  }
  // Whether `before` must precede a node on block `block` of a tensor split
  // as `split` (0: no tensor): unless both work on different blocks of
  // tensors split the same way.
  bool must_precede(NodeId before, std::uint64_t split, int block) const;
  // The same for `later`, which may touch several blocks: a padding copy
  // between ranks reads one, a padding fill reads `fill_reads` (null:
  // unknown, so every block).
  bool must_precede(NodeId before, const detail::NodeRecord& later,
                    const std::vector<std::int32_t>* fill_reads) const;
  // tensor operations (tensor_edges.cpp)
  void check_tensor_operands(const detail::PartitionedOp& op, const std::string& where) const;
  std::vector<std::vector<NodeId>> add_padding_copies(const detail::PartitionedOp& op, ExecutionKind kind,
                                                      const std::vector<NodeId>& level_before,
                                                      detail::PaddingLedger& fresh);
  std::shared_ptr<detail::Program> lowered();  // under the run queue's lock

  // First: a graph with runs in flight refuses assignment before anything changes.
  detail::RunState runs_;
  ExecutionKind kind_;
  std::vector<detail::NodeRecord> nodes_;
  std::vector<Edge> edges_;
  detail::NodeNames names_;
  detail::CallableStore callables_;
  detail::BuildCursor cursor_;
  detail::PaddingLedger padding_;
  std::vector<StreamWork> stream_works_;                    // GPU nodes' work (NodeRecord::aux)
  std::vector<std::shared_ptr<const Graph>> subgraphs_;     // Subgraph nodes' graphs (NodeRecord::aux)
  std::vector<std::uint64_t> splits_;                       // tensor splits (NodeRecord::split)
  std::map<NodeId, std::vector<std::int32_t>> fill_reads_;  // padding fills: the blocks each reads
  detail::NodeRanks ranks_;                                 // distributed graphs: ranks and messages
  std::function<bool()> predicate_;                         // set by conditional(); not kept by JSON
  bool conditional_ = false;
};

}  // namespace weft

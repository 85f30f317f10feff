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
//   weft::Future<> done = executor.run(g);                // or run_n, run_until
//   done.get();                                           // rethrows a node's exception
//
// Operations:
//   emplace(f, args...)     a node beside the last level: it runs after the
//                           level before the last one (a root if none)
//   emplace(make_node(...), make_node(...), ...)   several such nodes at once
//   emplace(on_gpu(device, f, args...))   a GPU node: f queues CUDA work on
//                           a stream (gpu_node.hpp); then() takes it too
//   then(f, args...)        a new level: after every node of the last level
//   emplace(graph) / then(graph)   a subgraph, connected the same way; a
//                           conditional subgraph becomes one node that runs
//                           it until its predicate says stop (Listing 9)
//   sync(f, args...)        a node after everything added so far
//   conditional(pred)       after a run, run again while pred() is true
//   named(name)             names the node(s) the last operation added:
//                           name, or name.0, name.1 ... for several; a
//                           tensor operation's padding copies become
//                           name.pad<from>to<to> and a reduction's
//                           finishing node name.finish
//   add_edge(from, to)      an extra edge between named (or numbered) nodes
// Every operation can take an ExecutionKind first to override the graph's.
//
// Levels follow Ripple's definition: roots are level 0, and any other node
// is one level below the deepest node it depends on.
//
// Running: the graph is lowered once (flat node array, successors in
// compressed rows, join counters that reset themselves) and that form is
// reused by every run until the graph changes. A run is driven by a task on
// the task-DAG that starts a pass over the nodes and respawns itself to wait
// for the pass's end, again while the conditional predicate (or run_n,
// run_until) asks for another pass; it never blocks a worker. A graph runs
// one instance at a time; the run's future must not outlive the executor.
// Lowering reports a cycle (from add_edge) by node names, and then nothing
// runs. A node's exception stops nodes not yet started and is rethrown by the
// run's future; Future::cancel() does the same with weft::Cancelled.
// Waiting for a run from inside a node is allowed: the worker keeps running
// other jobs meanwhile.
//
// JSON: to_json() / Graph::from_json() (schema in docs/graph-json.md). A
// graph loaded from JSON has no callables (they are not serialised): it can
// be inspected, validated and dumped again, not run.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <weft/graph/gpu_node.hpp>
#include <weft/graph/node_kind.hpp>
#include <weft/graph/node_work.hpp>
#include <weft/graph/partitioned_op.hpp>
#include <weft/graph/tensor_access.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/future.hpp>
#include <weft/views/block_kernel.hpp>
#include <weft/views/boundary_loader.hpp>
#include <weft/views/reducers.hpp>
#include <weft/views/reduction_result.hpp>
#include <weft/views/views.hpp>
#if defined(__CUDACC__)
#include <weft/views/cuda/block_ops_cuda.cuh>  // GPU boundary and reduce in .cu files
#endif

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

struct GraphNode {
  std::string name;  // may be empty; unique when not
  NodeKind kind = NodeKind::Compute;
  ExecutionKind execution = ExecutionKind::Cpu;
  int device = -1;     // the device its partition lives on (-1: none)
  int partition = -1;  // the tensor partition it works on (-1: none)
  // Not in JSON: how its operation's tensor is split (0: no tensor), and
  // for a padding Copy node the block whose padding it fills (-1: none).
  std::uint64_t split_signature = 0;
  int padding_to = -1;
  NodeWork work;                          // empty for nodes loaded from JSON and for Conditional nodes
  StreamWork stream_work;                 // GPU nodes made by on_gpu (then `work` is empty)
  int copy_stream = -1;                   // GPU nodes: the copy stream they use (-1: compute)
  std::shared_ptr<const Graph> subgraph;  // Subgraph nodes: the graph they run
};

namespace detail {
struct Program;
// Whether this translation unit is compiled by nvcc: the boundary and reduce
// operations made here can then also run over tensors in GPU memory. It is a
// template argument of those operations, so that the GPU-capable versions
// are distinct functions from the host-only ones other files make.
#if defined(__CUDACC__)
inline constexpr bool compiling_cuda = true;
#else
inline constexpr bool compiling_cuda = false;
#endif
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
  Graph(const Graph& other);
  Graph& operator=(const Graph& other);
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;
  ~Graph();

  // ---- building ----
  template <class F, class... Args>
  requires(!detail::is_graph_operand_v<F>) Graph& emplace(F&& f, Args&&... args) {
    return add({NodeWork::make(std::forward<F>(f), std::forward<Args>(args)...)}, kind_,
               /*after_last=*/false);
  }
  template <class F, class... Args>
  requires(!detail::is_graph_operand_v<F>) Graph& emplace(ExecutionKind kind, F&& f, Args&&... args) {
    return add({NodeWork::make(std::forward<F>(f), std::forward<Args>(args)...)}, kind, false);
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
    return add({NodeWork::make(std::forward<F>(f), std::forward<Args>(args)...)}, kind_, true);
  }
  template <class F, class... Args>
  requires(!detail::is_graph_operand_v<F>) Graph& then(ExecutionKind kind, F&& f, Args&&... args) {
    return add({NodeWork::make(std::forward<F>(f), std::forward<Args>(args)...)}, kind, true);
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
    return add_sync(NodeWork::make(std::forward<F>(f), std::forward<Args>(args)...));
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
    return add_partitioned(make_split(std::forward<F>(kernel), std::forward<Args>(args)...), kind_, false);
  }
  template <class F, class... Args>
  Graph& split(ExecutionKind kind, F&& kernel, Args&&... args) {
    return add_partitioned(make_split(std::forward<F>(kernel), std::forward<Args>(args)...), kind, false);
  }
  template <class F, class... Args>
  requires(!detail::is_graph_operand_v<F>) Graph& then_split(F&& kernel, Args&&... args) {
    return add_partitioned(make_split(std::forward<F>(kernel), std::forward<Args>(args)...), kind_, true);
  }
  template <class F, class... Args>
  Graph& then_split(ExecutionKind kind, F&& kernel, Args&&... args) {
    return add_partitioned(make_split(std::forward<F>(kernel), std::forward<Args>(args)...), kind, true);
  }

  // boundary(tensor, loader): one node per block that loads the padding
  // beyond the tensor's edges around its block (boundary_loader.hpp), placed
  // like split(); blocks inside the tensor do nothing. The same result as
  // split()ting a kernel that calls load_boundary on every cell, but it
  // visits only the edges. then_boundary: after the last level.
  template <class T, std::size_t D, class Loader, bool Cuda = detail::compiling_cuda>
  Graph& boundary(const Tensor<T, D>& tensor, Loader loader) {
    return add_partitioned(make_boundary<Cuda>(tensor, std::move(loader)), kind_, false);
  }
  template <class T, std::size_t D, class Loader, bool Cuda = detail::compiling_cuda>
  Graph& boundary(ExecutionKind kind, const Tensor<T, D>& tensor, Loader loader) {
    return add_partitioned(make_boundary<Cuda>(tensor, std::move(loader)), kind, false);
  }
  template <class T, std::size_t D, class Loader, bool Cuda = detail::compiling_cuda>
  Graph& then_boundary(const Tensor<T, D>& tensor, Loader loader) {
    return add_partitioned(make_boundary<Cuda>(tensor, std::move(loader)), kind_, true);
  }
  template <class T, std::size_t D, class Loader, bool Cuda = detail::compiling_cuda>
  Graph& then_boundary(ExecutionKind kind, const Tensor<T, D>& tensor, Loader loader) {
    return add_partitioned(make_boundary<Cuda>(tensor, std::move(loader)), kind, true);
  }

  // reduce(tensor, result, reducer): one Reduce node per block folds the
  // block's interior cells into the result's slot for that block, then a
  // finishing Reduce node joins the slots into result (Figure 4). The value
  // of a cell is converted to R. then_reduce: after the last level.
  template <class T, std::size_t D, class R, class Reducer = SumReducer<>, bool Cuda = detail::compiling_cuda>
  Graph& reduce(const Tensor<T, D>& tensor, ReductionResult<R>& result, Reducer reducer = {}) {
    return add_partitioned(make_reduce<Cuda>(tensor, result, reducer), kind_, false);
  }
  template <class T, std::size_t D, class R, class Reducer = SumReducer<>, bool Cuda = detail::compiling_cuda>
  Graph& reduce(ExecutionKind kind, const Tensor<T, D>& tensor, ReductionResult<R>& result,
                Reducer reducer = {}) {
    return add_partitioned(make_reduce<Cuda>(tensor, result, reducer), kind, false);
  }
  template <class T, std::size_t D, class R, class Reducer = SumReducer<>, bool Cuda = detail::compiling_cuda>
  Graph& then_reduce(const Tensor<T, D>& tensor, ReductionResult<R>& result, Reducer reducer = {}) {
    return add_partitioned(make_reduce<Cuda>(tensor, result, reducer), kind_, true);
  }
  template <class T, std::size_t D, class R, class Reducer = SumReducer<>, bool Cuda = detail::compiling_cuda>
  Graph& then_reduce(ExecutionKind kind, const Tensor<T, D>& tensor, ReductionResult<R>& result,
                     Reducer reducer = {}) {
    return add_partitioned(make_reduce<Cuda>(tensor, result, reducer), kind, true);
  }

  template <class Pred>
  Graph& conditional(Pred&& pred) {
    static_assert(std::is_invocable_r_v<bool, std::decay_t<Pred>&>,
                  "conditional() takes a predicate: bool()");
    return add_conditional(std::function<bool()>(std::forward<Pred>(pred)));
  }

  Graph& named(std::string name);
  Graph& add_edge(std::string_view from, std::string_view to);
  Graph& add_edge(NodeId from, NodeId to);

  // ---- inspecting ----
  std::optional<NodeId> find(std::string_view name) const;
  std::size_t size() const noexcept { return nodes_.size(); }
  const GraphNode& node(NodeId id) const { return nodes_.at(static_cast<std::size_t>(id)); }
  const std::vector<Edge>& edges() const noexcept { return edges_; }
  ExecutionKind execution_kind() const noexcept { return kind_; }
  bool is_conditional() const noexcept { return conditional_; }
  // Ripple levels (see above). Throws std::invalid_argument on a cycle.
  std::vector<int> levels() const;
  // Throws std::invalid_argument naming the nodes of a cycle, if any.
  void validate() const;

  nlohmann::json to_json() const;
  std::string to_dot() const;
  static Graph from_json(const nlohmann::json& document);
  // Parses text first; errors name the problem (and, for syntax, where).
  static Graph from_json_text(std::string_view text);

  // ---- running (see also Executor::run, run_n, run_until) ----
  // count > 0: that many runs; count < 0: until `until` returns true after a run.
  Future<> run_on(Executor& executor, long count, std::function<bool()> until);

 private:
  friend struct detail::Program;
  Graph& add(std::vector<NodeWork> works, ExecutionKind kind, bool after_last);
  Graph& add_specs(std::vector<NodeSpec> specs, ExecutionKind kind, bool after_last);
  Graph& add_subgraph(const Graph& subgraph, bool after_last);
  Graph& add_partitioned(detail::PartitionedOp op, ExecutionKind kind, bool after_last);

  template <class F, class... Args>
  static detail::PartitionedOp make_split(F&& kernel, Args&&... args) {
    static_assert(((is_tensor_v<Args> || is_tensor_access_v<Args>) || ...),
                  "split() needs at least one Tensor argument (or a Tensor in a padded-access modifier)");
    detail::PartitionedOp op;
    (detail::collect_use(op.tensors, args), ...);
    using State = std::tuple<std::decay_t<F>, std::decay_t<Args>...>;
    auto state = std::make_shared<State>(std::forward<F>(kernel), std::forward<Args>(args)...);
    if constexpr (is_gpu_kernel_v<std::decay_t<F>>) {
      // weft::cuda::kernel: each block's node launches it on its device. The
      // *_in_shared arguments are staged in shared memory, and copied back
      // unless the kernel only reads them (concurrent_padded_access).
      cuda::SharedStaging staging;
      std::uint32_t bit = 1;
      const auto note = [&](const auto& arg) {
        if constexpr (is_tensor_access_v<decltype(arg)>) {
          if (arg.in_shared) {
            staging.stage |= bit;
            if (arg.access != PaddedAccess::Concurrent) staging.write_back |= bit;
          }
        }
        bit <<= 1;
      };
      std::apply([&](const auto&, const auto&... a) { (note(a), ...); }, *state);
      for (std::size_t b = 0; b < op.tensors.front().blocks; ++b) {
        op.gpu_works.push_back(StreamWork::make(
            [state, staging](GpuStream s, std::size_t block) {
              std::apply(
                  [&](auto& k, auto&... a) { k.launch(s.stream, block, staging, unwrap_tensor(a)...); },
                  *state);
            },
            b));
      }
    } else {
      // In-place kernels (exclusive_padded_access) read neighbours they also
      // write: their rows run in order on one thread, as the serial meaning says.
      bool in_place = false;
      for (const detail::TensorUse& use : op.tensors)
        in_place = in_place || use.access == PaddedAccess::Exclusive;
      for (std::size_t b = 0; b < op.tensors.front().blocks; ++b) {
        op.works.push_back(NodeWork::make(
            [state, in_place](std::size_t block) {
              std::apply(
                  [block, in_place](auto& f, auto&... a) {
                    if (in_place) {
                      run_block_kernel(block, f, unwrap_tensor(a)...);
                    } else {
                      run_block_kernel_shared(block, f, unwrap_tensor(a)...);
                    }
                  },
                  *state);
            },
            b));
      }
    }
    return op;
  }

  template <bool Cuda, class T, std::size_t D, class Loader>
  static detail::PartitionedOp make_boundary(const Tensor<T, D>& tensor, Loader loader) {
    detail::PartitionedOp op;
    op.operation = "boundary";
    op.tensors.push_back(detail::describe_use(tensor, PaddedAccess::None));
    for (std::size_t b = 0; b < tensor.block_count(); ++b) {
      op.works.push_back(NodeWork::make(
          [tensor, loader](std::size_t block) { load_block_boundary(tensor, block, loader); }, b));
    }
#if defined(__CUDACC__)
    if constexpr (Cuda) {
      if (tensor.in_gpu_memory()) {
        for (std::size_t b = 0; b < tensor.block_count(); ++b) {
          op.gpu_works.push_back(StreamWork::make(
              [tensor, loader](GpuStream s, std::size_t block) {
                cuda::launch_block_boundary(s.stream, tensor, block, loader);
              },
              b));
        }
      }
    }
#endif
    return op;
  }

  template <bool Cuda, class T, std::size_t D, class R, class Reducer>
  static detail::PartitionedOp make_reduce(const Tensor<T, D>& tensor, ReductionResult<R>& result,
                                           const Reducer& reducer) {
    detail::PartitionedOp op;
    op.operation = "reduce";
    op.kind = NodeKind::Reduce;
    op.tensors.push_back(detail::describe_use(tensor, PaddedAccess::None));
    const std::size_t blocks = tensor.block_count();
    // This operation's own partial per block: the result only receives the
    // total, so it can serve several operations and graphs.
    auto partials = std::make_shared<std::vector<detail::CacheAligned<R>>>(blocks);
    for (std::size_t b = 0; b < blocks; ++b) {
      op.works.push_back(NodeWork::make(
          [tensor, partials, reducer](std::size_t block) {
            R partial;
            reducer.init(partial);
            auto fold = [&](auto& it) { reducer.join(partial, static_cast<R>(*it)); };
            run_block_kernel(block, fold, tensor);
            (*partials)[block].value = partial;
          },
          b));
    }
    op.finish = NodeWork::make([result, partials, reducer]() mutable {
      R total = result.initial_value();
      for (const auto& slot : *partials) reducer.join(total, slot.value);
      result.publish(std::move(total));
    });
#if defined(__CUDACC__)
    if constexpr (Cuda) {
      if (tensor.in_gpu_memory()) {
        // Each block's GPU node leaves its partial in page-locked memory; the
        // finishing node (on the host, after the GPU work) joins them.
        const HostPinnedSpace pinned_space;
        const std::size_t bytes = blocks * sizeof(R);
        std::shared_ptr<R> pinned(static_cast<R*>(pinned_space.allocate(bytes)),
                                  [pinned_space, bytes](R* p) { pinned_space.deallocate(p, bytes); });
        for (std::size_t b = 0; b < blocks; ++b) {
          op.gpu_works.push_back(StreamWork::make(
              [tensor, reducer, pinned](GpuStream s, std::size_t block) {
                cuda::launch_block_reduce<R>(s.stream, tensor, block, reducer, pinned.get() + block);
              },
              b));
        }
        op.finish = NodeWork::make([result, pinned, blocks, reducer]() mutable {
          R total = result.initial_value();
          for (std::size_t b = 0; b < blocks; ++b) reducer.join(total, pinned.get()[b]);
          result.publish(std::move(total));
        });
      }
    }
#endif
    return op;
  }

  Graph& add_sync(NodeWork work);
  Graph& add_conditional(std::function<bool()> pred);
  NodeId append(GraphNode node, const std::vector<NodeId>& predecessors);
  // Ends an operation that added `level` (after the last level, or beside
  // it) and whose nodes `named` names.
  void close_operation(const std::vector<NodeId>& level, const std::vector<NodeId>& named, bool after_last);
  std::vector<NodeId> sinks() const;
  void changed() noexcept { program_.reset(); }
  std::shared_ptr<detail::Program> lowered() const;

  ExecutionKind kind_;
  std::vector<GraphNode> nodes_;
  std::vector<Edge> edges_;
  std::vector<NodeId> previous_level_;  // the level the last level's emplaces depend on
  std::vector<NodeId> last_level_;
  std::vector<NodeId> last_added_;  // what named() names
  std::vector<std::pair<NodeId, std::string>>
      last_helpers_;                 // and the copies / finish node around them, by role
  std::function<bool()> predicate_;  // set by conditional(); not kept by JSON
  // Padding-copy nodes that read block b of a tensor and that no later node
  // on that block waits for yet (section 5.4): the next node writing the
  // block must wait for them. Keyed by the tensor's id and the block.
  std::map<std::pair<const void*, std::size_t>, std::vector<NodeId>> padding_readers_;
  // Nodes that write or read block b's padding of a tensor (its copies in,
  // padded kernels on b) that a new copy into that padding must follow.
  std::map<std::pair<const void*, std::size_t>, std::vector<NodeId>> padding_users_;
  bool conditional_ = false;
  mutable std::shared_ptr<detail::Program> program_;                  // lowered form, rebuilt after changes
  std::shared_ptr<NodeArena> arena_ = std::make_shared<NodeArena>();  // this graph's node states
};

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The lowered form of a Graph: what a run executes. Internal to graph/.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <weft/backends/cuda_streams.hpp>
#include <weft/graph/graph.hpp>
#include <weft/runtime/work_graph_policy.hpp>

#include "device_timeline.hpp"
#include "plan_interpreter.hpp"
#include "trace_labels.hpp"

namespace weft::detail {

// GPU nodes (on_gpu, GPU tensor operations): deferred nodes of the work-DAG
// whose calls queue work on a stream of their device (gpu_node.hpp);
// gpu_nodes.cpp.
struct GpuNode {
  const WorkGraphPolicy<int>* policy = nullptr;
  int node = -1;
  int device = -1;
  int copy_stream = -1;       // -1: the device's compute stream
  bool record = false;        // a GPU node on another stream waits for this one's event
  bool callback = false;      // host nodes or the run's end wait for this one's work
  std::vector<int> wait_for;  // GPU predecessors on other streams (indices into the GPU nodes)
  StreamWork work;
  std::string label;                         // for errors: 'name' or #index
  stream_ops::HostCallback done_callback{};  // -> gpu_node_done(this, status)
  std::string trace_name;                    // as observers hear of it
  const void* graph = nullptr;               // as observers know its graph
  std::unique_ptr<DeviceSpan> span;          // made by its first observed run (device_timeline.hpp)
  // Set by bind():
  CudaStream stream = nullptr;
  CudaEvent done = nullptr;      // recorded after the work when `record`
  std::vector<CudaEvent> waits;  // the events of wait_for
};

class GpuNodes {
 public:
  GpuNodes() = default;
  GpuNodes(const GpuNodes&) = delete;
  GpuNodes& operator=(const GpuNodes&) = delete;
  ~GpuNodes();

  // Prepares the GPU nodes of `graph` for the successor rows `successors`:
  // reorders each GPU node's row so that its GPU successors come first
  // (the engine releases those as soon as its call returns) and returns
  // the early count per node for WorkGraphPolicy::set_deferred (empty when
  // there are no GPU nodes). The calls of those nodes become run_node.
  std::vector<int> prepare(const Graph& graph, const std::vector<StreamWork>& works,
                           const std::vector<NodeRecord>& nodes, const std::vector<Graph::Edge>& edges,
                           Crs<int>& successors, std::vector<WorkGraphNodeCall>& calls);
  void attach(const WorkGraphPolicy<int>& policy) noexcept;
  bool empty() const noexcept { return nodes_.empty(); }
  // Makes the streams and events the nodes use (once, before the first
  // run). Throws std::runtime_error when a device cannot be used, naming the node.
  void bind();
  // Waits for the work the nodes queued: after a failed pass, whose queued
  // work may still be running when its error is reported.
  void synchronize() noexcept;

 private:
  std::vector<GpuNode> nodes_;  // sized once: calls point into it
  bool bound_ = false;
};

// Distributed graphs (rank_nodes.cpp): this rank's view of the nodes and the
// channel their messages go through.
// Frees what HostPinnedSpace allocated (a message's staging buffer).
struct PinnedFree {
  std::size_t bytes = 0;
  void operator()(std::byte* p) const noexcept;
};

class RankNodes {
 public:
  RankNodes() = default;
  RankNodes(const RankNodes&) = delete;
  RankNodes& operator=(const RankNodes&) = delete;

  // For a graph over distributed tensors: opens its channel (collective),
  // checks that every rank built the same graph (std::invalid_argument
  // naming what differs), and sets this rank's calls: other ranks' nodes do
  // nothing, message nodes send or receive (deferred: early[i] = 0), and
  // the rest tell the other ranks when they throw. Nothing for other graphs.
  void prepare(const Graph& graph, const NodeRanks& ranks, const std::vector<NodeRecord>& nodes,
               const std::vector<Graph::Edge>& edges, std::vector<WorkGraphNodeCall>& calls,
               std::vector<int>& early);
  void attach(const WorkGraphPolicy<int>& policy) noexcept;
  RankChannel* channel() const noexcept { return channel_.get(); }

 private:
  struct Wrapped {
    WorkGraphNodeCall inner;
    RankChannel* channel;
    static void run(void* state);
    static int choose(void* state);
  };
  struct MessageNode {
    RankNodes* owner = nullptr;
    int node = -1;
    int tag = -1;
    const RankMessage* message = nullptr;
    std::vector<std::byte> inbox;  // padding received here, unpacked on arrival
    // GPU memory: page-locked host memory that padding is packed into and
    // received into (HostPinnedSpace), so copies to the device run at full speed.
    std::unique_ptr<std::byte, PinnedFree> staging;
    std::atomic<int> pending{0};  // sends or receives not yet complete
    std::mutex error_mutex;
    std::exception_ptr error;
    static void send(void* state);
    static void receive(void* state);
    static void done(void* state, std::exception_ptr error);
  };
  std::unique_ptr<RankChannel> channel_;
  std::deque<MessageNode> messages_;  // calls point into them: never moved
  std::deque<Wrapped> wrapped_;
  const WorkGraphPolicy<int>* policy_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
};

struct Program {
  // Lowers `graph`: validates it (cycles by name), builds the successor rows,
  // the calls, and the per-node domains once.
  // A subgraph's program (nested) cannot hold distributed operations.
  explicit Program(const Graph& graph, bool nested = false);
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // One run of the graph, blocking (on a worker it runs other jobs
  // meanwhile): every node once, again while a conditional graph's
  // predicate says so. For subgraph nodes.
  void run_once(Executor& executor, const std::atomic<bool>* cancel);
  // GPU nodes here and in subgraph nodes (see GpuNodes).
  void bind_gpu();
  void synchronize_gpu() noexcept;

  // What a run calls for node i: calls[i] (one flat array, no switch on the
  // node kind); `callables` and `subprograms` keep the states alive.
  struct SubgraphCall {
    Program* parent;
    Program* child;
  };
  std::vector<WorkGraphNodeCall> calls;
  std::vector<std::shared_ptr<CallableChunk>> callables;
  std::vector<std::shared_ptr<Program>> subprograms;
  std::vector<SubgraphCall> subgraph_calls;
  std::function<bool()> predicate;  // conditional graphs: another pass while it says so
  std::unique_ptr<WorkGraphPolicy<int>> policy;
  std::unique_ptr<TraceLabels> labels;  // for observers, made when first observed
  std::string not_runnable;             // why this graph cannot run ("" when it can)
  bool has_gpu_kind = false;            // some node needs GPU-priority workers
  GpuNodes gpu;
  // WEFT_GPU_PLAN=interpret: the units the program runs instead of its nodes.
  std::unique_ptr<PlanInterpreter> interpreter;
  RankNodes ranks;  // distributed graphs: the pass is also ended with the other ranks
  // The pass in flight (one at a time), for subgraph nodes.
  Executor* executor = nullptr;
  const std::atomic<bool>* cancel = nullptr;
  std::uint64_t runs_submitted = 0;  // under the run queue's mutex

 private:
  Crs<int> successor_rows(const Graph& graph) const;
  void lower_special_nodes(const Graph& graph);
  void label_nodes_for_observers(const Graph& graph, bool has_conditions);
};

}  // namespace weft::detail

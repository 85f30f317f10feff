// The lowered form of a Graph: what a run executes. Internal to graph/.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <weft/graph/graph.hpp>
#include <weft/runtime/promise.hpp>
#include <weft/runtime/work_graph_policy.hpp>

namespace weft::detail {

struct Program {
  // Lowers `graph`: validates it (cycles by name), builds the successor rows
  // and the per-node domains once.
  explicit Program(const Graph& graph);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // One run of the graph: every node once, again while a conditional
  // graph's predicate says so. Blocks; on a worker it runs other jobs meanwhile.
  void run_once(Executor& executor, const std::atomic<bool>* cancel);
  // Starts one pass over the nodes and returns; `event` (a scheduler event)
  // completes when the pass ends, with its error if it failed.
  void start(Executor& executor, const std::atomic<bool>* cancel, Promise<>* done);

  // What a run calls for node i: calls[i].fn(calls[i].state). One flat
  // array (no switch on the node kind, no shared_ptr on the path); `work`
  // and `subprograms` keep the states alive.
  using Call = WorkGraphPolicy<int>::NodeCall;
  struct SubgraphCall {
    Program* parent;
    Program* child;
  };
  std::vector<Call> calls;
  std::vector<NodeWork> work;
  std::vector<std::shared_ptr<Program>> subprograms;  // for Subgraph nodes
  std::vector<SubgraphCall> subgraph_calls;
  std::function<bool()> predicate;  // conditional graphs
  std::atomic<bool> repeat{false};  // set by the Conditional node
  std::unique_ptr<WorkGraphPolicy<int>> policy;
  std::string not_runnable;  // why this graph cannot run ("" when it can)

  // GPU nodes (on_gpu): deferred nodes of the engine whose calls queue work
  // on a stream of their device (gpu_node.hpp).
  struct GpuNode {
    const WorkGraphPolicy<int>* engine = nullptr;
    int node = -1;
    int device = -1;
    int copy_stream = -1;       // -1: the device's compute stream
    bool record = false;        // a GPU node on another stream waits for this one's event
    bool callback = false;      // host nodes or the run's end wait for this one's work
    std::vector<int> wait_for;  // GPU predecessors on other streams (indices into gpu_nodes)
    StreamWork work;
    std::string label;                         // for errors: 'name' or #index
    stream_ops::HostCallback done_callback{};  // -> gpu_node_done(this, status)
    // Set by bind_gpu():
    CudaStream stream = nullptr;
    CudaEvent done = nullptr;      // recorded after the work when `record`
    std::vector<CudaEvent> waits;  // the events of wait_for
  };
  std::vector<GpuNode> gpu_nodes;  // sized once: calls point into it
  bool gpu_bound = false;
  // Makes the streams and events the GPU nodes use, here and in subgraphs
  // (once, before the first run). Throws std::runtime_error when a device
  // cannot be used, naming the node.
  void bind_gpu();
  // Waits for the GPU work queued by this program's nodes: after a failed
  // pass, whose queued work may still be running when its error is reported.
  void synchronize_gpu() noexcept;
  // The run in progress (one at a time).
  Executor* executor = nullptr;
  const std::atomic<bool>* cancel = nullptr;
};

}  // namespace weft::detail

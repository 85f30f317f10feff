// The lowered form of a Graph: what a run executes. Internal to graph/.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <weft/graph/graph.hpp>
#include <weft/runtime/work_graph_policy.hpp>

namespace weft::detail {

struct Program {
  // Lowers `graph`: validates it (cycles by name), builds the successor rows
  // and the per-node domains once.
  explicit Program(const Graph& graph);

  // One run of the graph: every node once, again while a conditional
  // graph's predicate says so. Blocks; on a worker it runs other jobs meanwhile.
  void run_once(Executor& executor, const std::atomic<bool>* cancel);
  // Starts one pass over the nodes and returns; `event` (a scheduler event)
  // completes when the pass ends, with its error if it failed.
  void start(Executor& executor, const std::atomic<bool>* cancel, TaskHeader* event);

  // What a run calls for node i: calls[i].fn(calls[i].state). One flat
  // array (no switch on the node kind, no shared_ptr on the path); `work`
  // and `subprograms` keep the states alive.
  using Call = WorkGraphPolicy<int>::Engine::NodeCall;
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
  // The run in progress (one at a time).
  Executor* executor = nullptr;
  const std::atomic<bool>* cancel = nullptr;
};

}  // namespace weft::detail

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Lowering a Graph onto the work-DAG: successor rows, one call per node,
// domains and condition flags, in one pass each over the nodes and edges.
#include "program.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace weft::detail {

Program::Program(const Graph& graph, bool nested) {
  const std::size_t n = graph.nodes_.size();
  Crs<int> successors = successor_rows(graph);
  calls.resize(n);
  std::vector<Domain> domains;
  std::vector<std::uint8_t> conditions;
  for (std::size_t i = 0; i < n; ++i) {
    const NodeRecord& node = graph.nodes_[i];
    calls[i] = node.call;
    if (node.execution == ExecutionKind::Gpu) {
      if (domains.empty()) domains.assign(n, Domain::Cpu);
      domains[i] = Domain::Gpu;
    }
    if (node.kind == NodeKind::Condition) {
      if (conditions.empty()) conditions.assign(n, 0);
      conditions[i] = 1;
    }
  }
  has_gpu_kind = !domains.empty();
  const bool has_conditions = !conditions.empty();
  callables = graph.callables_.chunks();
  predicate = graph.predicate_;
  lower_special_nodes(graph);
  std::vector<int> early =
      gpu.prepare(graph, graph.stream_works_, graph.nodes_, graph.edges_, successors, calls);
  if (nested && graph.ranks_.distributed()) {
    throw std::logic_error(
        "Graph: a subgraph node (a conditional subgraph, or one a branch chooses) holds operations on "
        "distributed tensors, which only a graph run directly can exchange; put them in the outer graph");
  }
  // A node that can never run (it waits for different choices of one
  // condition node) is reported by name before anything runs, as a cycle is.
  if (has_conditions) graph.validate();
  if (not_runnable.empty()) ranks.prepare(graph, graph.ranks_, graph.nodes_, graph.edges_, calls, early);
  // Host virtual devices under WEFT_GPU_PLAN=interpret: one job per
  // segment of the device plan. Graphs with GPU nodes, condition nodes or
  // ranks keep one job per node.
  if (plan_mode_from_environment() == PlanMode::Interpret && early.empty() && !has_conditions &&
      !graph.ranks_.distributed() && not_runnable.empty()) {
    const DevicePlan plan = graph.device_plan();  // a cycle: named here
    if (!plan.segments.empty()) {
      interpreter =
          std::make_unique<PlanInterpreter>(graph.nodes_, graph.names_, graph.edges_, plan, calls, domains);
      successors = std::move(interpreter->rows);
      calls = interpreter->calls;
      domains = interpreter->domains;
    }
  }
  try {
    policy = std::make_unique<WorkGraphPolicy<int>>(std::move(successors), std::move(domains),
                                                    std::move(conditions));
  } catch (const std::invalid_argument&) {
    graph.validate();  // a cycle: report it by node names
    throw;
  }
  label_nodes_for_observers(graph, has_conditions);
  if (!early.empty()) policy->set_deferred(std::move(early));
  gpu.attach(*policy);
  ranks.attach(*policy);
}

Crs<int> Program::successor_rows(const Graph& graph) const {
  // A counting sort of the edges by source: each row keeps the order its
  // edges were added in, which is a condition node's order of choices.
  const std::size_t n = graph.nodes_.size();
  Crs<int> rows;
  rows.row_map.assign(n + 1, 0);
  for (const Graph::Edge& e : graph.edges_) ++rows.row_map[static_cast<std::size_t>(e.first) + 1];
  for (std::size_t i = 0; i < n; ++i) rows.row_map[i + 1] += rows.row_map[i];
  rows.entries.resize(graph.edges_.size());
  std::vector<int> fill(rows.row_map.begin(), rows.row_map.end() - 1);
  for (const Graph::Edge& e : graph.edges_) {
    rows.entries[static_cast<std::size_t>(fill[static_cast<std::size_t>(e.first)]++)] = e.second;
  }
  return rows;
}

void Program::lower_special_nodes(const Graph& graph) {
  std::size_t subgraph_nodes = 0;
  for (const NodeRecord& node : graph.nodes_) subgraph_nodes += node.kind == NodeKind::Subgraph;
  subgraph_calls.reserve(subgraph_nodes);  // stable addresses: calls point into it
  for (std::size_t i = 0; i < graph.nodes_.size(); ++i) {
    const NodeRecord& node = graph.nodes_[i];
    if (node.kind == NodeKind::Subgraph) {
      if (node.aux < 0) {
        not_runnable = "node " + std::to_string(i) + " is a subgraph without its graph (loaded from JSON)";
        continue;
      }
      subprograms.push_back(
          std::make_shared<Program>(*graph.subgraphs_[static_cast<std::size_t>(node.aux)], true));
      Program& child = *subprograms.back();
      if (!child.not_runnable.empty()) not_runnable = child.not_runnable;
      has_gpu_kind = has_gpu_kind || child.has_gpu_kind;
      subgraph_calls.push_back({this, &child});
      // A nested run: the worker that runs this node helps meanwhile.
      calls[i] = WorkGraphNodeCall::of(
          [](void* state) {
            auto* call = static_cast<SubgraphCall*>(state);
            call->child->run_once(*call->parent->executor, call->parent->cancel);
          },
          &subgraph_calls.back());
    } else if (node.kind == NodeKind::Conditional) {
      // The run asks the predicate once the pass has ended (this node is
      // after every sink); the node itself marks the spot.
      calls[i] = WorkGraphNodeCall::of([](void*) {}, nullptr);
      if (!graph.predicate_)
        not_runnable = "the graph's predicate was not kept (graphs loaded from JSON cannot run)";
    } else if (!node.call.fn && node.aux < 0) {
      not_runnable =
          "node " + std::to_string(i) + " has no callable: graphs loaded from JSON can be inspected, not run";
    }
  }
}

void Program::label_nodes_for_observers(const Graph& graph, bool has_conditions) {
  // Observers know the graph by its address. Condition nodes' weak edges
  // count for levels in a way the rows do not show: such graphs (small
  // control flow) take the graph's levels now.
  if (interpreter) {
    labels = std::make_unique<TraceLabels>(interpreter->records, interpreter->names, std::vector<int>());
  } else {
    labels = std::make_unique<TraceLabels>(graph.nodes_, graph.names_,
                                           has_conditions ? graph.levels() : std::vector<int>());
  }
  labels->attach(*policy, &graph);
}

void Program::bind_gpu() {
  for (const std::shared_ptr<Program>& sub : subprograms) sub->bind_gpu();
  gpu.bind();
}

void Program::synchronize_gpu() noexcept {
  for (const std::shared_ptr<Program>& sub : subprograms) sub->synchronize_gpu();
  gpu.synchronize();
}

void Program::run_once(Executor& on, const std::atomic<bool>* stop) {
  if (!not_runnable.empty()) throw std::logic_error("Graph: cannot run: " + not_runnable);
  executor = &on;
  cancel = stop;
  do {
    try {
      policy->run(on, calls.data(), stop);
    } catch (...) {
      synchronize_gpu();  // as a run does after a failed pass
      throw;
    }
  } while (predicate && predicate() && (stop == nullptr || !stop->load(std::memory_order_relaxed)));
}

}  // namespace weft::detail

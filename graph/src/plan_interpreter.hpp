// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host interpreter of device plans (docs/device_plans.md): with
// WEFT_GPU_PLAN=interpret, a graph whose device nodes live on host virtual
// devices runs one work-DAG job per segment, which calls the segment's
// nodes in plan order, instead of one job per node. It checks on the host
// that a plan's order alone computes what the graph does (the CUDA
// backend launches the same segments). Internal to graph/.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include <weft/graph/detail/node_names.hpp>
#include <weft/graph/detail/node_record.hpp>
#include <weft/graph/device_plan.hpp>
#include <weft/graph/graph.hpp>
#include <weft/runtime/crs.hpp>
#include <weft/runtime/work_graph_policy.hpp>

namespace weft::detail {

// How a program runs its device nodes, from WEFT_GPU_PLAN: "off" (or
// unset: one job per node) or "interpret". Throws std::invalid_argument
// naming the variable for any other value.
enum class PlanMode { Off, Interpret };
PlanMode plan_mode_from_environment();

class PlanInterpreter {
 public:
  // The units of `plan` (each host node, each segment) as a program runs
  // them: `calls` are the graph's per node; a unit's row lists the units
  // after it, in the order of the graph's edges.
  PlanInterpreter(const std::vector<NodeRecord>& nodes, const NodeNames& names,
                  const std::vector<Graph::Edge>& edges, const DevicePlan& plan,
                  const std::vector<WorkGraphNodeCall>& calls, const std::vector<Domain>& domains);
  PlanInterpreter(const PlanInterpreter&) = delete;
  PlanInterpreter& operator=(const PlanInterpreter&) = delete;

  Crs<int> rows;                         // successor rows of the units
  std::vector<WorkGraphNodeCall> calls;  // per unit
  std::vector<Domain> domains;           // per unit (empty: all Cpu)
  // What observers hear of the units: a host node as the graph names it,
  // a segment as "segment 3 (device 1, 8 nodes)".
  std::vector<NodeRecord> records;
  NodeNames names;

 private:
  struct Segment {
    std::vector<WorkGraphNodeCall> calls;  // its nodes', in plan order
    static void run(void* self);
  };
  std::deque<Segment> segments_;  // calls point into it: never moved
};

}  // namespace weft::detail

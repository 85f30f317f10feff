// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host interpreter of device plans: see plan_interpreter.hpp.
#include "plan_interpreter.hpp"

#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace weft::detail {

PlanMode plan_mode_from_environment() {
  const char* value = std::getenv("WEFT_GPU_PLAN");
  if (value == nullptr) return PlanMode::Off;
  const std::string_view v(value);
  if (v.empty() || v == "off") return PlanMode::Off;
  if (v == "interpret") return PlanMode::Interpret;
  throw std::invalid_argument("WEFT_GPU_PLAN='" + std::string(v) +
                              "': expected off (one job per node) or interpret (one job per segment of "
                              "the device plan, on host virtual devices: docs/device_plans.md)");
}

void PlanInterpreter::Segment::run(void* self) {
  for (const WorkGraphNodeCall& call : static_cast<Segment*>(self)->calls) call.run();
}

PlanInterpreter::PlanInterpreter(const std::vector<NodeRecord>& nodes, const NodeNames& graph_names,
                                 const std::vector<Graph::Edge>& edges, const DevicePlan& plan,
                                 const std::vector<WorkGraphNodeCall>& node_calls,
                                 const std::vector<Domain>& node_domains) {
  const std::size_t n = nodes.size();
  // Units in the order of their first node: host nodes keep their order.
  std::vector<int> unit_of(n, -1);
  std::vector<int> segment_unit(plan.segments.size(), -1);
  for (std::size_t i = 0; i < n; ++i) {
    const int s = plan.segment_of[i];
    int& unit = s < 0 ? unit_of[i] : segment_unit[static_cast<std::size_t>(s)];
    if (unit < 0) {
      unit = static_cast<int>(calls.size());
      calls.emplace_back();
      records.emplace_back();
      if (!node_domains.empty()) domains.push_back(node_domains[i]);
      if (s < 0) {
        calls.back() = node_calls[i];
        records.back() = nodes[i];
        records.back().call = {};
        if (const std::string_view name = graph_names.name(static_cast<Graph::NodeId>(i)); !name.empty())
          names.set(unit, std::string(name));
      } else {
        const DeviceSegment& seg = plan.segments[static_cast<std::size_t>(s)];
        Segment& run = segments_.emplace_back();
        for (const Graph::NodeId id : seg.nodes)
          run.calls.push_back(node_calls[static_cast<std::size_t>(id)]);
        calls.back() = WorkGraphNodeCall::of(&Segment::run, &run);
        records.back().device = seg.device;
        names.set(unit, "segment " + std::to_string(s) + " (device " + std::to_string(seg.device) + ", " +
                            std::to_string(seg.nodes.size()) +
                            (seg.nodes.size() == 1 ? " node)" : " nodes)"));
      }
    }
    unit_of[i] = unit;
    // A segment with a GPU-kind node runs on a GPU-priority worker.
    if (!node_domains.empty() && node_domains[i] == Domain::Gpu)
      domains[static_cast<std::size_t>(unit)] = Domain::Gpu;
  }
  // Rows: each unit's successors once, in the order of the graph's edges.
  const std::size_t units = calls.size();
  std::vector<std::vector<int>> after(units);
  std::set<std::pair<int, int>> listed;
  for (const Graph::Edge& e : edges) {
    const int a = unit_of[static_cast<std::size_t>(e.first)], b = unit_of[static_cast<std::size_t>(e.second)];
    if (a != b && listed.emplace(a, b).second) after[static_cast<std::size_t>(a)].push_back(b);
  }
  rows.row_map.assign(units + 1, 0);
  for (std::size_t u = 0; u < units; ++u)
    rows.row_map[u + 1] = rows.row_map[u] + static_cast<int>(after[u].size());
  rows.entries.reserve(static_cast<std::size_t>(rows.row_map[units]));
  for (const std::vector<int>& row : after) rows.entries.insert(rows.entries.end(), row.begin(), row.end());
}

}  // namespace weft::detail

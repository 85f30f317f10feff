// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Grouping a graph's device nodes into segments (device_plan.hpp). Why the
// grouping is safe to launch segment by segment is in docs/device_plans.md;
// in short, a segment's key (device, phase, round) never decreases along an
// edge, and a node that starts a condition's choice starts its own segment.
#include <weft/graph/device_plan.hpp>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <map>
#include <queue>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <weft/graph/graph.hpp>

#include "strong_components.hpp"

namespace weft {

namespace {

using NodeId = Graph::NodeId;

struct PlanInput {
  std::vector<int> device;    // per node: its device, -1 for a host node
  std::vector<bool> chooses;  // per node: a condition node (its out-edges are weak)
  // Per node, its strongly connected component over all edges (empty
  // without condition nodes): a weak edge inside one closes a loop.
  std::vector<NodeId> component;
  const std::vector<Graph::Edge>* edges = nullptr;

  // Whether `e` orders a pass: a strong edge, or a weak one that closes no
  // loop (a choice runs after its condition node).
  bool orders(const Graph::Edge& e) const {
    return !chooses[static_cast<std::size_t>(e.first)] ||
           component[static_cast<std::size_t>(e.first)] != component[static_cast<std::size_t>(e.second)];
  }
};

// The nodes in an order that keeps every edge that orders a pass; false
// when the strong edges hold a cycle.
bool pass_order(const PlanInput& in, std::vector<NodeId>& order) {
  const std::size_t n = in.device.size();
  std::vector<int> row(n + 1, 0), pending(n, 0);
  for (const Graph::Edge& e : *in.edges) {
    if (!in.orders(e)) continue;
    ++row[static_cast<std::size_t>(e.first) + 1];
    ++pending[static_cast<std::size_t>(e.second)];
  }
  for (std::size_t i = 0; i < n; ++i) row[i + 1] += row[i];
  std::vector<NodeId> next(static_cast<std::size_t>(row[n]));
  std::vector<int> fill(row.begin(), row.end() - 1);
  for (const Graph::Edge& e : *in.edges)
    if (in.orders(e)) next[static_cast<std::size_t>(fill[static_cast<std::size_t>(e.first)]++)] = e.second;
  order.clear();
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    if (pending[i] == 0) order.push_back(static_cast<NodeId>(i));
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto v = static_cast<std::size_t>(order[k]);
    for (int j = row[v]; j < row[v + 1]; ++j)
      if (--pending[static_cast<std::size_t>(next[static_cast<std::size_t>(j)])] == 0)
        order.push_back(next[static_cast<std::size_t>(j)]);
  }
  return order.size() == n;
}

DevicePlan build_plan(const PlanInput& in, const std::vector<NodeId>& order) {
  const std::size_t n = in.device.size();
  std::vector<int> position(n);
  for (std::size_t k = 0; k < n; ++k) position[static_cast<std::size_t>(order[k])] = static_cast<int>(k);
  // A weak edge that closes a loop repeats nodes within the pass and orders
  // nothing; its target starts a choice of its own all the same (below).
  auto orders = [&](const Graph::Edge& e) { return in.orders(e); };
  std::vector<std::vector<NodeId>> preds(n);
  std::vector<bool> chosen(n, false);  // the target of a weak edge
  for (const Graph::Edge& e : *in.edges) {
    if (in.chooses[static_cast<std::size_t>(e.first)]) chosen[static_cast<std::size_t>(e.second)] = true;
    if (orders(e)) preds[static_cast<std::size_t>(e.second)].push_back(e.first);
  }
  auto host = [&](std::size_t v) { return in.device[v] < 0; };
  std::vector<int> phase(n, 0), round(n, 0);
  // The choice a node belongs to: the weak edge's target that starts it
  // (-1: none), so that two choices of one condition never share a segment.
  std::vector<NodeId> choice(n, -1);
  for (const NodeId id : order) {
    const auto v = static_cast<std::size_t>(id);
    for (const NodeId p : preds[v]) {
      const auto u = static_cast<std::size_t>(p);
      phase[v] = std::max(phase[v], phase[u] + (host(u) ? 1 : 0));
    }
    bool conflict = false;
    for (const NodeId p : preds[v]) {
      const auto u = static_cast<std::size_t>(p);
      if (!host(v) && !host(u) && phase[u] == phase[v])
        round[v] = std::max(round[v], round[u] + (in.device[u] != in.device[v] ? 1 : 0));
      if (choice[u] >= 0) {
        conflict = conflict || (choice[v] >= 0 && choice[v] != choice[u]);
        choice[v] = choice[u];
      }
    }
    if (chosen[v] || conflict) choice[v] = id;
  }

  // Segments by key; host nodes stay units of their own.
  DevicePlan plan;
  plan.segment_of.assign(n, -1);
  std::map<std::tuple<int, int, int, NodeId>, int> index;
  std::vector<DeviceSegment> made;
  for (const NodeId id : order) {
    const auto v = static_cast<std::size_t>(id);
    if (host(v)) continue;
    auto [it, fresh] =
        index.try_emplace({in.device[v], phase[v], round[v], choice[v]}, static_cast<int>(made.size()));
    if (fresh) {
      DeviceSegment s;
      s.device = in.device[v];
      s.phase = phase[v];
      s.round = round[v];
      s.choice = choice[v];
      made.push_back(std::move(s));
    }
    plan.segment_of[v] = it->second;
    made[static_cast<std::size_t>(it->second)].nodes.push_back(id);
  }

  // The units (segments, then host nodes) and the edges between them.
  const std::size_t segments = made.size();
  auto unit = [&](NodeId id) {
    const int s = plan.segment_of[static_cast<std::size_t>(id)];
    return s >= 0 ? static_cast<std::size_t>(s) : segments + static_cast<std::size_t>(id);
  };
  std::vector<std::set<std::size_t>> after(segments + n);
  std::map<NodeId, std::vector<std::size_t>> host_waits;  // host node -> the segments it waits for
  for (const Graph::Edge& e : *in.edges) {
    const std::size_t a = unit(e.first), b = unit(e.second);
    if (a == b || !orders(e)) continue;
    after[a].insert(b);
    if (a < segments && b < segments && made[a].device != made[b].device) {
      made[b].waits_for.push_back(static_cast<int>(a));  // renumbered below
      made[a].records = true;
    }
    if (a < segments && b >= segments) host_waits[e.second].push_back(a);
  }

  // Launch order: Kahn's over the units, earliest (phase, round, device) first.
  std::vector<int> pending(segments + n, 0);
  for (const std::set<std::size_t>& next : after)
    for (const std::size_t b : next) ++pending[b];
  using Key = std::tuple<int, int, int, int, std::size_t>;
  auto key = [&](std::size_t u) -> Key {
    if (u < segments) {
      const DeviceSegment& s = made[u];
      return {s.phase, s.round, s.device, position[static_cast<std::size_t>(s.nodes.front())], u};
    }
    const std::size_t v = u - segments;
    return {phase[v], INT_MAX, -1, position[v], u};
  };
  std::priority_queue<Key, std::vector<Key>, std::greater<>> ready;
  for (std::size_t u = 0; u < segments + n; ++u)
    if (pending[u] == 0) ready.push(key(u));
  std::vector<int> renumber(segments, -1);
  std::size_t seen = 0;
  while (!ready.empty()) {
    const std::size_t u = std::get<4>(ready.top());
    ready.pop();
    ++seen;
    if (u < segments) {
      renumber[u] = static_cast<int>(plan.segments.size());
      plan.segments.push_back(std::move(made[u]));
    }
    for (const std::size_t b : after[u])
      if (--pending[b] == 0) ready.push(key(b));
  }
  if (seen != segments + n) {
    throw std::logic_error("weft: the device plan's segments wait for each other in a cycle (a bug in weft)");
  }
  for (int& s : plan.segment_of)
    if (s >= 0) s = renumber[static_cast<std::size_t>(s)];
  for (DeviceSegment& s : plan.segments) {
    for (int& w : s.waits_for) w = renumber[static_cast<std::size_t>(w)];
    std::sort(s.waits_for.begin(), s.waits_for.end());
    s.waits_for.erase(std::unique(s.waits_for.begin(), s.waits_for.end()), s.waits_for.end());
  }
  // A device runs the segments every pass runs in launch order on one
  // stream, so a callback after one of them also says every earlier one of
  // the device is done: a host node needs one from the last such segment
  // of each device it waits for, and the pass's end one from each device's
  // last. A segment of a choice runs only when chosen: it stays out of the
  // chain, and calls back itself.
  std::map<int, int> last;  // device -> its last segment so far
  for (std::size_t i = 0; i < plan.segments.size(); ++i) {
    DeviceSegment& s = plan.segments[i];
    if (s.choice >= 0) {
      s.callback = true;
      continue;
    }
    const auto it = last.find(s.device);
    if (it != last.end()) s.previous = it->second;
    last[s.device] = static_cast<int>(i);
  }
  for (const auto& [device, s] : last) plan.segments[static_cast<std::size_t>(s)].callback = true;
  for (const auto& [node, waited] : host_waits) {
    std::map<int, int> latest;  // device -> the last segment of it the host node waits for
    for (const std::size_t u : waited) {
      const int s = renumber[u];
      if (plan.segments[static_cast<std::size_t>(s)].choice >= 0) continue;  // calls back anyway
      int& l = latest.try_emplace(plan.segments[static_cast<std::size_t>(s)].device, s).first->second;
      l = std::max(l, s);
    }
    for (const auto& [device, s] : latest) plan.segments[static_cast<std::size_t>(s)].callback = true;
  }
  return plan;
}

}  // namespace

DevicePlanCounts DevicePlan::counts(int device) const {
  DevicePlanCounts c;
  for (const DeviceSegment& s : segments) {
    if (device >= 0 && s.device != device) continue;
    ++c.launches;
    c.records += s.records ? 1 : 0;
    c.waits += static_cast<int>(s.waits_for.size());
    c.callbacks += s.callback ? 1 : 0;
    c.nodes += static_cast<int>(s.nodes.size());
  }
  return c;
}

std::vector<int> DevicePlan::devices() const {
  std::vector<int> d;
  for (const DeviceSegment& s : segments) d.push_back(s.device);
  std::sort(d.begin(), d.end());
  d.erase(std::unique(d.begin(), d.end()), d.end());
  return d;
}

std::string DevicePlan::describe() const {
  std::string text;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const DeviceSegment& s = segments[i];
    text += "segment " + std::to_string(i) + ": device " + std::to_string(s.device) + " phase " +
            std::to_string(s.phase) + " round " + std::to_string(s.round) + ": " +
            std::to_string(s.nodes.size()) + (s.nodes.size() == 1 ? " node" : " nodes");
    if (!s.waits_for.empty()) {
      text += ", waits for";
      for (const int w : s.waits_for) text += " " + std::to_string(w);
    }
    if (s.choice >= 0) text += ", in the choice of node " + std::to_string(s.choice);
    if (s.records) text += ", records";
    if (s.callback) text += ", callback";
    text += "\n";
  }
  return text;
}

DevicePlan Graph::device_plan() const {
  PlanInput in;
  const std::size_t n = nodes_.size();
  in.device.assign(n, -1);
  in.chooses.assign(n, false);
  in.edges = &edges_;
  bool any = false, conditions = false;
  for (std::size_t i = 0; i < n; ++i) {
    const detail::NodeRecord& node = nodes_[i];
    in.chooses[i] = node.kind == NodeKind::Condition;
    conditions = conditions || in.chooses[i];
    const bool device_work =
        node.kind == NodeKind::Compute || node.kind == NodeKind::Copy || node.kind == NodeKind::Reduce;
    if (node.device >= 0 && device_work) {
      in.device[i] = node.device;
      any = true;
    }
  }
  // Messages between ranks are host work, whatever block they serve.
  for (const detail::RankMessage& m : ranks_.messages)
    if (m.node >= 0 && static_cast<std::size_t>(m.node) < n) in.device[static_cast<std::size_t>(m.node)] = -1;
  if (conditions) in.component = detail::strong_components(n, edges_);
  std::vector<NodeId> order;
  if (!pass_order(in, order)) {
    validate();  // names the cycle
    throw std::invalid_argument("Graph: the strong edges hold a cycle");
  }
  if (!any) {
    DevicePlan empty;
    empty.segment_of.assign(n, -1);
    return empty;
  }
  return build_plan(in, order);
}

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Levels and cycles. A cycle of strong edges is an error; weak edges (out of
// condition nodes) may close loops. Levels are longest paths over the strong
// edges and the weak edges that close no loop: those between different
// strongly connected components. Removing the weak edges inside components
// leaves no cycle, since every cycle lies in one component and the strong
// edges alone have none. Everything here is linear in nodes plus edges.
#include <weft/graph/graph.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "node_label.hpp"
#include "strong_components.hpp"

namespace weft {

namespace {

using NodeId = Graph::NodeId;

// Successor lists in compressed rows, in the order the edges were added.
struct Rows {
  std::vector<NodeId> begin;  // n + 1 offsets
  std::vector<NodeId> to;

  Rows(std::size_t n, const std::vector<Graph::Edge>& edges, bool reversed)
      : begin(n + 1, 0), to(edges.size()) {
    for (const Graph::Edge& e : edges) ++begin[static_cast<std::size_t>(reversed ? e.second : e.first) + 1];
    for (std::size_t i = 0; i < n; ++i) begin[i + 1] += begin[i];
    std::vector<NodeId> fill(begin.begin(), begin.end() - 1);
    for (const Graph::Edge& e : edges) {
      const auto from = static_cast<std::size_t>(reversed ? e.second : e.first);
      to[static_cast<std::size_t>(fill[from]++)] = reversed ? e.first : e.second;
    }
  }
};

// Tarjan's strongly connected components, without recursion: component[i]
// for every node.
std::vector<NodeId> components(std::size_t n, const Rows& rows) {
  std::vector<NodeId> index(n, -1), low(n, 0), component(n, -1), stack, call;
  std::vector<NodeId> next_edge(n, 0);
  NodeId counter = 0, found = 0;
  for (std::size_t root = 0; root < n; ++root) {
    if (index[root] >= 0) continue;
    call.push_back(static_cast<NodeId>(root));
    while (!call.empty()) {
      const auto v = static_cast<std::size_t>(call.back());
      if (index[v] < 0) {
        index[v] = low[v] = counter++;
        next_edge[v] = rows.begin[v];
        stack.push_back(static_cast<NodeId>(v));
      }
      if (next_edge[v] < rows.begin[v + 1]) {
        const auto w = static_cast<std::size_t>(rows.to[static_cast<std::size_t>(next_edge[v]++)]);
        if (index[w] < 0) {
          call.push_back(static_cast<NodeId>(w));
        } else if (component[w] < 0) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      call.pop_back();
      if (!call.empty()) {
        const auto parent = static_cast<std::size_t>(call.back());
        low[parent] = std::min(low[parent], low[v]);
      }
      if (low[v] == index[v]) {
        NodeId w;
        do {
          w = stack.back();
          stack.pop_back();
          component[static_cast<std::size_t>(w)] = found;
        } while (static_cast<std::size_t>(w) != v);
        ++found;
      }
    }
  }
  return component;
}

// Some nodes Kahn's algorithm could not free (remaining > 0) all wait on
// another such node through a counted edge, so walking those predecessors
// must come back to a node seen: a cycle, printed along the edges.
[[noreturn]] void throw_cycle(const Graph& g, const std::vector<Graph::Edge>& counted,
                              const std::vector<int>& remaining) {
  const std::size_t n = remaining.size();
  const Rows predecessors(n, counted, true);
  NodeId v = 0;
  while (remaining[static_cast<std::size_t>(v)] == 0) ++v;
  std::vector<int> seen_at(n, -1);
  std::vector<NodeId> path;
  while (seen_at[static_cast<std::size_t>(v)] < 0) {
    seen_at[static_cast<std::size_t>(v)] = static_cast<int>(path.size());
    path.push_back(v);
    const auto at = static_cast<std::size_t>(v);
    for (NodeId k = predecessors.begin[at]; k < predecessors.begin[at + 1]; ++k) {
      const NodeId u = predecessors.to[static_cast<std::size_t>(k)];
      if (remaining[static_cast<std::size_t>(u)] > 0) {
        v = u;
        break;
      }
    }
  }
  std::vector<NodeId> cycle(path.begin() + seen_at[static_cast<std::size_t>(v)], path.end());
  std::reverse(cycle.begin(), cycle.end());
  std::string text;
  for (NodeId id : cycle) text += detail::node_label(g, id) + " -> ";
  text += detail::node_label(g, cycle.front());
  throw std::invalid_argument("Graph: the graph has a cycle: " + text +
                              " (a loop must pass through a condition node, made by branch())");
}

// Longest-path levels over `counted` edges; throws on a cycle among them.
std::vector<int> longest_paths(const Graph& g, const std::vector<Graph::Edge>& counted) {
  const std::size_t n = g.size();
  const Rows successors(n, counted, false);
  std::vector<int> remaining(n, 0);
  for (const Graph::Edge& e : counted) ++remaining[static_cast<std::size_t>(e.second)];
  std::vector<int> level(n, 0);
  std::vector<NodeId> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (remaining[i] == 0) ready.push_back(static_cast<NodeId>(i));
  std::size_t visited = 0;
  while (!ready.empty()) {
    const auto v = static_cast<std::size_t>(ready.back());
    ready.pop_back();
    ++visited;
    for (NodeId k = successors.begin[v]; k < successors.begin[v + 1]; ++k) {
      const auto s = static_cast<std::size_t>(successors.to[static_cast<std::size_t>(k)]);
      level[s] = std::max(level[s], level[v] + 1);
      if (--remaining[s] == 0) ready.push_back(static_cast<NodeId>(s));
    }
  }
  if (visited != n) throw_cycle(g, counted, remaining);
  return level;
}

// Nodes that can never run: a condition node that runs at most once a
// pass chooses one successor, so a node that waits (strong edges) for two
// paths that each need a different choice of it never runs, and the pass
// ends quietly without it. A node "needs" choice k of condition c when c
// chose it as successor k and nothing else starts it, or when one of its
// strong predecessors needs it. Only nodes that run at most once a pass
// count: not those in a loop or after one, nor those that more than one
// thing can start (two condition nodes, or one and their strong
// predecessors), nor anything after those. Linear in nodes plus edges.
void check_every_node_can_run(const Graph& g, const std::vector<NodeId>& component) {
  const std::size_t n = g.size();
  const std::vector<Graph::Edge>& edges = g.edges();
  std::vector<int> component_size(n, 0);
  for (NodeId c : component) ++component_size[static_cast<std::size_t>(c)];
  std::vector<int> weak_in(n, 0), strong_in(n, 0);
  std::vector<bool> repeated(n, false), condition(n, false);
  for (const Graph::Edge& e : edges) {
    const bool weak = g.is_weak(e);
    ++(weak ? weak_in : strong_in)[static_cast<std::size_t>(e.second)];
    if (weak) condition[static_cast<std::size_t>(e.first)] = true;
    if (e.first == e.second) repeated[static_cast<std::size_t>(e.first)] = true;
  }
  std::vector<NodeId> frontier;
  for (std::size_t v = 0; v < n; ++v) {
    const int starters = weak_in[v] + (strong_in[v] > 0 ? 1 : 0);
    if (component_size[static_cast<std::size_t>(component[v])] > 1 || starters > 1) repeated[v] = true;
    if (repeated[v]) frontier.push_back(static_cast<NodeId>(v));
  }
  const Rows successors(n, edges, false);
  while (!frontier.empty()) {  // whatever follows a node that may run twice may too
    const auto v = static_cast<std::size_t>(frontier.back());
    frontier.pop_back();
    for (NodeId k = successors.begin[v]; k < successors.begin[v + 1]; ++k) {
      const auto s = static_cast<std::size_t>(successors.to[static_cast<std::size_t>(k)]);
      if (!repeated[s]) {
        repeated[s] = true;
        frontier.push_back(static_cast<NodeId>(s));
      }
    }
  }
  // need[v]: a (condition, choice) that v needs, or condition -1. Set in an
  // order of the strong edges (a loop has none that is not weak).
  struct Need {
    NodeId condition = -1;
    NodeId choice = -1;
  };
  std::vector<Need> need(n);
  std::vector<Graph::Edge> strong;
  for (const Graph::Edge& e : edges) {
    if (!g.is_weak(e)) continue;
    const auto to = static_cast<std::size_t>(e.second);
    // The k-th weak edge out of a condition node is its choice k; only the
    // sole starter of a node that runs at most once sets what it needs.
    if (!repeated[to] && !repeated[static_cast<std::size_t>(e.first)]) need[to].condition = e.first;
  }
  for (std::size_t v = 0; v < n; ++v) {
    NodeId choice = 0;
    for (NodeId k = successors.begin[v]; k < successors.begin[v + 1]; ++k) {
      const auto s = static_cast<std::size_t>(successors.to[static_cast<std::size_t>(k)]);
      if (!condition[v]) {
        strong.push_back({static_cast<NodeId>(v), static_cast<NodeId>(s)});
      } else {
        if (need[s].condition == static_cast<NodeId>(v)) need[s].choice = choice;
        ++choice;
      }
    }
  }
  const Rows strong_successors(n, strong, false);
  std::vector<int> remaining(strong_in);
  std::vector<NodeId> ready;
  for (std::size_t v = 0; v < n; ++v)
    if (remaining[v] == 0) ready.push_back(static_cast<NodeId>(v));
  // from[v]: the strong predecessor whose need v took (for the message).
  std::vector<NodeId> from(n, -1);
  while (!ready.empty()) {
    const auto v = static_cast<std::size_t>(ready.back());
    ready.pop_back();
    for (NodeId k = strong_successors.begin[v]; k < strong_successors.begin[v + 1]; ++k) {
      const auto s = static_cast<std::size_t>(strong_successors.to[static_cast<std::size_t>(k)]);
      const Need& mine = need[v];
      Need& theirs = need[s];
      if (mine.condition >= 0 && theirs.condition == mine.condition && theirs.choice != mine.choice &&
          from[s] >= 0) {
        const auto chosen = [&](NodeId node, const Need& what) {
          return detail::node_label(g, node) + " runs only when it chooses its successor " +
                 std::to_string(what.choice);
        };
        throw std::invalid_argument(
            "Graph: node " + detail::node_label(g, static_cast<NodeId>(s)) +
            " can never run: it waits for paths that need different choices of condition node " +
            detail::node_label(g, mine.condition) + ", which chooses one successor a pass (" +
            chosen(from[s], theirs) + ", " + chosen(static_cast<NodeId>(v), mine) +
            "); join them after a condition node of their own, or put the nodes it chooses among in a "
            "subgraph (g.then(subgraph) after the condition node makes it one choice)");
      }
      if (mine.condition >= 0 && theirs.condition < 0 && !repeated[s]) {
        theirs = mine;
        from[s] = static_cast<NodeId>(v);
      }
      if (--remaining[s] == 0) ready.push_back(static_cast<NodeId>(s));
    }
  }
}

}  // namespace

std::vector<int> Graph::levels() const {
  bool any_weak = false;
  for (const detail::NodeRecord& r : nodes_) any_weak = any_weak || r.kind == NodeKind::Condition;
  if (!any_weak) return longest_paths(*this, edges_);
  std::vector<Edge> strong;
  for (const Edge& e : edges_)
    if (!is_weak(e)) strong.push_back(e);
  (void)longest_paths(*this, strong);  // a cycle of strong edges is an error
  const std::vector<NodeId> component = components(nodes_.size(), Rows(nodes_.size(), edges_, false));
  check_every_node_can_run(*this, component);
  std::vector<Edge> counted = std::move(strong);
  for (const Edge& e : edges_) {
    if (is_weak(e) &&
        component[static_cast<std::size_t>(e.first)] != component[static_cast<std::size_t>(e.second)]) {
      counted.push_back(e);
    }
  }
  return longest_paths(*this, counted);
}

void Graph::validate() const { (void)levels(); }

namespace detail {

std::vector<Graph::NodeId> strong_components(std::size_t n, const std::vector<Graph::Edge>& edges) {
  return components(n, Rows(n, edges, false));
}

}  // namespace detail

namespace detail {

std::string node_label(const Graph& graph, Graph::NodeId id) {
  const std::string name = graph.node(id).name;
  // (built piecewise: g++ 12 -O3 warns falsely on "literal" + std::string)
  std::string label(name.empty() ? "#" : "'");
  label += name.empty() ? std::to_string(id) : name + "'";
  return label;
}

}  // namespace detail

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "graph_summary.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "table.hpp"

namespace weft::tool {

namespace {

constexpr NodeKind kNodeKinds[] = {NodeKind::Compute,  NodeKind::Copy,        NodeKind::Reduce,
                                   NodeKind::Sync,     NodeKind::Conditional, NodeKind::Subgraph,
                                   NodeKind::Condition};
constexpr ExecutionKind kExecutionKinds[] = {ExecutionKind::Cpu, ExecutionKind::Gpu};

// The longest path counted in nodes, found by dynamic programming over a
// topological order (Kahn), independently of Graph::levels() but for the
// weak edges that close loops, which it leaves out: those that do not lead
// to a deeper level.
std::vector<Graph::NodeId> longest_path(const Graph& graph, const std::vector<int>& levels) {
  const std::size_t n = graph.size();
  std::vector<std::vector<Graph::NodeId>> successors(n);
  std::vector<std::size_t> waiting(n, 0);
  for (const Graph::Edge& e : graph.edges()) {
    if (graph.is_weak(e) &&
        levels[static_cast<std::size_t>(e.second)] <= levels[static_cast<std::size_t>(e.first)]) {
      continue;
    }
    successors[static_cast<std::size_t>(e.first)].push_back(e.second);
    ++waiting[static_cast<std::size_t>(e.second)];
  }
  std::vector<std::size_t> length(n, 1);  // nodes on the longest path ending here
  std::vector<Graph::NodeId> previous(n, -1);
  std::vector<Graph::NodeId> ready;
  for (std::size_t v = 0; v < n; ++v)
    if (waiting[v] == 0) ready.push_back(static_cast<Graph::NodeId>(v));
  std::size_t visited = 0;
  while (!ready.empty()) {
    const auto v = static_cast<std::size_t>(ready.back());
    ready.pop_back();
    ++visited;
    for (Graph::NodeId s : successors[v]) {
      const auto w = static_cast<std::size_t>(s);
      // Ties go to the lowest-numbered predecessor, so the path reported is stable.
      if (length[v] + 1 > length[w] ||
          (length[v] + 1 == length[w] && static_cast<Graph::NodeId>(v) < previous[w])) {
        length[w] = length[v] + 1;
        previous[w] = static_cast<Graph::NodeId>(v);
      }
      if (--waiting[w] == 0) ready.push_back(s);
    }
  }
  if (visited != n) throw std::invalid_argument("graph summary: the graph has a cycle");
  std::vector<Graph::NodeId> path;
  if (n == 0) return path;
  // The lowest-numbered end among the longest, so the report is deterministic.
  const auto end =
      static_cast<Graph::NodeId>(std::max_element(length.begin(), length.end()) - length.begin());
  for (Graph::NodeId v = end; v >= 0; v = previous[static_cast<std::size_t>(v)]) path.push_back(v);
  std::reverse(path.begin(), path.end());
  return path;
}

std::string plural(std::size_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

std::string device_name(int device) { return device < 0 ? "none" : std::to_string(device); }

std::string edge_kind_name(const std::pair<ExecutionKind, ExecutionKind>& kinds) {
  return std::string(to_string(kinds.first)) + " -> " + to_string(kinds.second);
}

// The path as "A -> B -> E"; long paths keep their first and last nodes.
std::string path_text(const Graph& graph, const std::vector<Graph::NodeId>& path) {
  constexpr std::size_t kShownEachEnd = 8;
  std::string text;
  for (std::size_t k = 0; k < path.size(); ++k) {
    if (path.size() > 2 * kShownEachEnd && k == kShownEachEnd) {
      text += " -> ... (" + plural(path.size() - 2 * kShownEachEnd, "node") + ")";
      k = path.size() - kShownEachEnd - 1;
      continue;
    }
    if (k > 0) text += " -> ";
    text += node_label(graph, path[k]);
  }
  return text;
}

std::string rank_name(int rank) { return rank < 0 ? "every rank" : std::to_string(rank); }

std::string rank_pair_name(const std::pair<int, int>& ranks) {
  return std::to_string(ranks.first) + " -> " + std::to_string(ranks.second);
}

// a + b, or the largest value when that does not fit: a hostile file's
// byte counts must not wrap around.
std::uint64_t saturating_sum(std::uint64_t a, std::uint64_t b) {
  std::uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<std::uint64_t>::max() : sum;
}

std::uint64_t saturating_product(std::uint64_t a, std::uint64_t b) {
  std::uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<std::uint64_t>::max() : product;
}

// Distributed graphs: the ranks, as the graph's JSON records them (only the
// JSON holds the messages).
void summarize_ranks(const Graph& graph, GraphSummary& s) {
  const nlohmann::json doc = graph.to_json();
  const auto ranks = doc.find("ranks");
  if (ranks == doc.end()) return;
  s.ranks = ranks->get<int>();
  for (const nlohmann::json& node : doc.at("nodes")) {
    ++s.nodes_by_rank[node.value("rank", -1)];
    if (!node.contains("bytes")) continue;
    ++s.messages;
    const auto bytes = node.at("bytes").get<std::uint64_t>();
    const int from = node.at("from_rank").get<int>(), to = node.at("to_rank").get<int>();
    std::uint64_t& kept = to < 0 ? s.bytes_to_each_other_rank[from] : s.bytes_by_rank_pair[{from, to}];
    kept = saturating_sum(kept, bytes);
    const auto receivers = static_cast<std::uint64_t>(to < 0 ? s.ranks - 1 : 1);
    s.bytes_between_ranks = saturating_sum(s.bytes_between_ranks, saturating_product(bytes, receivers));
  }
}

void print_ranks(std::ostream& out, const GraphSummary& s) {
  out << "ranks: " << s.ranks << '\n';
  out << "nodes per rank:\n";
  Table ranks({}, "lr");
  for (const auto& [rank, count] : s.nodes_by_rank) ranks.add_row({rank_name(rank), std::to_string(count)});
  ranks.print(out);
  out << "bytes between ranks per pass: " << s.bytes_between_ranks << " ("
      << plural(s.messages, "message node") << ")\n";
  for (const auto& [pair, bytes] : s.bytes_by_rank_pair)
    out << "  " << rank_pair_name(pair) << ": " << bytes << " bytes\n";
  for (const auto& [from, bytes] : s.bytes_to_each_other_rank)
    out << "  " << from << " -> each other rank: " << bytes << " bytes (reduction partials)\n";
}

nlohmann::json ranks_to_json(const GraphSummary& s) {
  nlohmann::json by_rank = nlohmann::json::object();
  for (const auto& [rank, count] : s.nodes_by_rank)
    by_rank[rank < 0 ? "every" : std::to_string(rank)] = count;
  nlohmann::json by_pair = nlohmann::json::object();
  for (const auto& [pair, bytes] : s.bytes_by_rank_pair) by_pair[rank_pair_name(pair)] = bytes;
  nlohmann::json to_each = nlohmann::json::object();
  for (const auto& [from, bytes] : s.bytes_to_each_other_rank) to_each[std::to_string(from)] = bytes;
  return {{"ranks", s.ranks},
          {"nodes_by_rank", std::move(by_rank)},
          {"message_nodes", s.messages},
          {"bytes_between_ranks", s.bytes_between_ranks},
          {"bytes_by_rank_pair", std::move(by_pair)},
          {"bytes_to_each_other_rank", std::move(to_each)}};
}

}  // namespace

std::string node_label(const Graph& graph, Graph::NodeId id) {
  std::string name = graph.node(id).name;
  if (!name.empty()) return name;
  // (built piecewise: g++ 12 -O3 warns falsely on "literal" + std::string)
  std::string label("#");
  label += std::to_string(id);
  return label;
}

GraphSummary summarize(const Graph& graph) {
  GraphSummary s;
  bool on_ranks = graph.rank_group() != nullptr;
  s.node_count = graph.size();
  s.edge_count = graph.edges().size();
  s.execution_kind = graph.execution_kind();
  s.conditional = graph.is_conditional();
  for (NodeKind k : kNodeKinds) s.nodes_by_kind[k] = 0;
  for (ExecutionKind k : kExecutionKinds) s.nodes_by_execution_kind[k] = 0;
  for (std::size_t i = 0; i < graph.size(); ++i) {
    const GraphNode& node = graph.node(static_cast<Graph::NodeId>(i));
    ++s.nodes_by_kind[node.kind];
    ++s.nodes_by_execution_kind[node.execution];
    ++s.nodes_by_device[node.device < 0 ? -1 : node.device];
    on_ranks = on_ranks || node.rank >= 0;
  }
  if (on_ranks) summarize_ranks(graph, s);
  for (const Graph::Edge& e : graph.edges()) {
    ++s.edges_by_kind[{graph.node(e.first).execution, graph.node(e.second).execution}];
    s.weak_edge_count += graph.is_weak(e) ? 1 : 0;
  }
  const std::vector<int> levels = graph.levels();
  for (int level : levels) {
    const auto l = static_cast<std::size_t>(level);
    if (s.level_widths.size() <= l) s.level_widths.resize(l + 1, 0);
    ++s.level_widths[l];
  }
  s.critical_path = longest_path(graph, levels);
  return s;
}

void print_summary(std::ostream& out, const std::string& name, const Graph& graph, const GraphSummary& s) {
  out << name << ": weft graph, execution kind " << to_string(s.execution_kind)
      << (s.conditional ? ", conditional (reruns while its predicate holds)" : "") << '\n';
  out << "nodes: " << s.node_count << '\n';
  out << "edges: " << s.edge_count;
  if (s.weak_edge_count > 0) out << " (" << s.weak_edge_count << " weak: out of condition nodes)";
  out << '\n';

  Table kinds({}, "lr");
  for (const auto& [kind, count] : s.nodes_by_kind)
    if (count > 0) kinds.add_row({to_string(kind), std::to_string(count)});
  if (!kinds.empty()) {
    out << "nodes by kind:\n";
    kinds.print(out);
  }
  Table executions({}, "lr");
  for (const auto& [kind, count] : s.nodes_by_execution_kind)
    if (count > 0) executions.add_row({to_string(kind), std::to_string(count)});
  if (!executions.empty()) {
    out << "nodes by execution kind:\n";
    executions.print(out);
  }
  Table edges({}, "lr");
  for (const auto& [kinds_joined, count] : s.edges_by_kind)
    edges.add_row({edge_kind_name(kinds_joined), std::to_string(count)});
  if (!edges.empty()) {
    out << "edges by execution kind (from -> to):\n";
    edges.print(out);
  }

  out << "levels: " << s.level_widths.size() << '\n';
  for (std::size_t l = 0; l < s.level_widths.size(); ++l)
    out << "  level " << l << ": " << plural(s.level_widths[l], "node") << '\n';
  out << "critical path: " << plural(s.critical_path.size(), "node");
  if (!s.critical_path.empty()) out << " (" << path_text(graph, s.critical_path) << ")";
  out << '\n';

  if (!s.nodes_by_device.empty()) {
    out << "nodes per device:\n";
    Table devices({}, "lr");
    for (const auto& [device, count] : s.nodes_by_device)
      devices.add_row({device_name(device), std::to_string(count)});
    devices.print(out);
  }
  if (s.ranks > 0) print_ranks(out, s);
}

nlohmann::json summary_to_json(const std::string& name, const Graph& graph, const GraphSummary& s) {
  nlohmann::json by_kind = nlohmann::json::object();
  for (const auto& [kind, count] : s.nodes_by_kind) by_kind[to_string(kind)] = count;
  nlohmann::json by_execution = nlohmann::json::object();
  for (const auto& [kind, count] : s.nodes_by_execution_kind) by_execution[to_string(kind)] = count;
  nlohmann::json edges_by_kind = nlohmann::json::object();
  for (const auto& [kinds_joined, count] : s.edges_by_kind)
    edges_by_kind[edge_kind_name(kinds_joined)] = count;
  nlohmann::json by_device = nlohmann::json::object();
  for (const auto& [device, count] : s.nodes_by_device) by_device[device_name(device)] = count;
  nlohmann::json path = nlohmann::json::array();
  for (Graph::NodeId id : s.critical_path) path.push_back({{"id", id}, {"name", graph.node(id).name}});
  nlohmann::json summary = {{"file", name},
                            {"execution_kind", to_string(s.execution_kind)},
                            {"conditional", s.conditional},
                            {"node_count", s.node_count},
                            {"edge_count", s.edge_count},
                            {"weak_edge_count", s.weak_edge_count},
                            {"nodes_by_kind", std::move(by_kind)},
                            {"nodes_by_execution_kind", std::move(by_execution)},
                            {"edges_by_execution_kind", std::move(edges_by_kind)},
                            {"level_count", s.level_widths.size()},
                            {"level_widths", s.level_widths},
                            {"critical_path_length", s.critical_path.size()},
                            {"critical_path", std::move(path)},
                            {"nodes_by_device", std::move(by_device)}};
  if (s.ranks > 0) summary.update(ranks_to_json(s));
  return summary;
}

}  // namespace weft::tool

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// `weft graph summary`: what a graph holds, counted (nodes and edges by kind,
// levels and their widths, the critical path, nodes per device; for a
// distributed graph nodes per rank and bytes between ranks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <weft/graph/graph.hpp>

namespace weft::tool {

struct GraphSummary {
  std::size_t node_count = 0;
  std::size_t edge_count = 0;
  std::size_t weak_edge_count = 0;  // edges out of condition nodes
  ExecutionKind execution_kind = ExecutionKind::Cpu;
  bool conditional = false;
  std::map<NodeKind, std::size_t> nodes_by_kind;                 // every kind, zeros included
  std::map<ExecutionKind, std::size_t> nodes_by_execution_kind;  // every kind, zeros included
  // Edges by the execution kinds they join ("cpu -> gpu"): an edge between
  // kinds crosses from one worker domain to the other.
  std::map<std::pair<ExecutionKind, ExecutionKind>, std::size_t> edges_by_kind;
  std::vector<std::size_t> level_widths;       // nodes on level 0, 1, ...
  std::vector<Graph::NodeId> critical_path;    // one longest path, first node first
  std::map<int, std::size_t> nodes_by_device;  // device -1: none
  // Distributed graphs (docs/graph-json.md); ranks 0 for the others.
  int ranks = 0;
  std::map<int, std::size_t> nodes_by_rank;  // the ranks that run nodes; -1: every rank
  std::size_t messages = 0;                  // message nodes
  // Bytes a pass moves: in all (at most 2^64 - 1), from one rank to another
  // (padding copies), and from a rank to each other rank (reduction
  // partials, which every rank receives; kept per sender, not per pair, so
  // that the summary stays as small as the graph however many ranks).
  std::uint64_t bytes_between_ranks = 0;
  std::map<std::pair<int, int>, std::uint64_t> bytes_by_rank_pair;  // (sender, receiver)
  std::map<int, std::uint64_t> bytes_to_each_other_rank;            // by sender
};

// Throws std::invalid_argument if the graph has a cycle of strong edges.
GraphSummary summarize(const Graph& graph);

// `name` is how the report names the graph (its file).
void print_summary(std::ostream& out, const std::string& name, const Graph& graph,
                   const GraphSummary& summary);
nlohmann::json summary_to_json(const std::string& name, const Graph& graph, const GraphSummary& summary);

// A node's name, or "#3" for unnamed node 3 (as the library's messages do).
std::string node_label(const Graph& graph, Graph::NodeId id);

}  // namespace weft::tool

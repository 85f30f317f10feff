// Graph -> Graphviz DOT: one box per node (GPU nodes shaded), nodes of one
// level on one rank.
#include <weft/graph/graph.hpp>

#include <map>
#include <sstream>
#include <string>

namespace weft {

namespace {

std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string Graph::to_dot() const {
  const std::vector<int> level = levels();
  std::ostringstream out;
  out << "digraph weft {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", "
         "fontname=\"Helvetica\"];\n";
  std::map<int, std::vector<std::size_t>> by_level;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const GraphNode& n = nodes_[i];
    std::string name(n.name.empty() ? "#" : "");  // piecewise: see label_of in graph.cpp
    name += n.name.empty() ? std::to_string(i) : escaped(n.name);
    out << "  n" << i << " [label=\"" << name << "\\n" << to_string(n.kind) << ", " << to_string(n.execution);
    if (n.partition >= 0) out << ", p" << n.partition;
    out << "\", fillcolor=\"" << (n.execution == ExecutionKind::Gpu ? "#b7e1a1" : "#cfe2f3") << "\"];\n";
    by_level[level[i]].push_back(i);
  }
  for (const auto& [l, ids] : by_level) {
    out << "  { rank=same;";
    for (std::size_t id : ids) out << " n" << id << ";";
    out << " }\n";
  }
  for (const Edge& e : edges_) out << "  n" << e.first << " -> n" << e.second << ";\n";
  out << "}\n";
  return out.str();
}

}  // namespace weft

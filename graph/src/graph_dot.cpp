// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Graph -> Graphviz DOT: one box per node (GPU nodes shaded, condition nodes
// diamonds), nodes of one level on one rank, weak edges dashed and labelled
// with the choice they are.
#include <weft/graph/graph.hpp>

#include <map>
#include <sstream>
#include <string>

namespace weft {

namespace {

// A label DOT reads back as written and a terminal shows as text: quotes
// and backslashes escaped, a newline as DOT's \n, other control characters
// (C0, DEL and the UTF-8 encoded C1 range) as '?'.
std::string escaped(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      out += '?';
    } else if (c == 0xC2 && i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xE0) == 0x80) {
      out += '?';  // U+0080..U+009F
      ++i;
    } else {
      out += static_cast<char>(c);
    }
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
    const detail::NodeRecord& n = nodes_[i];
    const std::string_view name = names_.name(static_cast<NodeId>(i));
    std::string label(name.empty() ? "#" : "");  // piecewise: see node_label in graph_levels.cpp
    label += name.empty() ? std::to_string(i) : escaped(name);
    out << "  n" << i << " [label=\"" << label << "\\n"
        << to_string(n.kind) << ", " << to_string(n.execution);
    if (n.partition >= 0) out << ", p" << n.partition;
    out << "\", fillcolor=\"" << (n.execution == ExecutionKind::Gpu ? "#b7e1a1" : "#cfe2f3") << "\"";
    if (n.kind == NodeKind::Condition) out << ", shape=diamond, style=filled";
    out << "];\n";
    by_level[level[i]].push_back(i);
  }
  for (const auto& [l, ids] : by_level) {
    out << "  { rank=same;";
    for (std::size_t id : ids) out << " n" << id << ";";
    out << " }\n";
  }
  std::map<NodeId, int> choices;  // weak edges so far, per condition node
  for (const Edge& e : edges_) {
    out << "  n" << e.first << " -> n" << e.second;
    if (is_weak(e)) out << " [style=dashed, label=\"" << choices[e.first]++ << "\"]";
    out << ";\n";
  }
  out << "}\n";
  return out.str();
}

}  // namespace weft

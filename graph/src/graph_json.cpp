// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Graph <-> JSON (the schema is in docs/graph-json.md).
#include <weft/graph/graph.hpp>
#include <weft/graph/json_document.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace weft {

namespace {

constexpr const char* kFormat = "weft-graph";
constexpr int kVersion = 2;    // 2: edges carry their kind, nodes may be condition nodes
constexpr int kMaxDepth = 16;  // the schema nests 4 deep; deeper input is hostile

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::invalid_argument("graph JSON: " + where + ": " + what);
}

const nlohmann::json& member(const nlohmann::json& object, const char* key, const std::string& where) {
  if (!object.is_object()) fail(where, "expected an object, got " + std::string(object.type_name()));
  auto it = object.find(key);
  if (it == object.end()) fail(where, std::string("missing field '") + key + "'");
  return *it;
}

std::string text_field(const nlohmann::json& object, const char* key, const std::string& where) {
  const nlohmann::json& v = member(object, key, where);
  if (!v.is_string()) fail(where + "." + key, "expected a string, got " + std::string(v.type_name()));
  return v.get<std::string>();
}

long long integer_field(const nlohmann::json& object, const char* key, const std::string& where, long long lo,
                        long long hi) {
  const nlohmann::json& v = member(object, key, where);
  if (!v.is_number_integer())
    fail(where + "." + key, "expected an integer, got " + std::string(v.type_name()));
  // An unsigned value above hi may not fit a long long at all: out of range
  // as it is, without converting it.
  const bool above =
      v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(hi);
  const long long x = above ? hi : v.get<long long>();
  if (above || x < lo || x > hi) {
    fail(where + "." + key,
         "value " + v.dump() + " outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return x;
}

// Distributed graphs: each node's message between ranks, if any (by node id).
std::vector<const detail::RankMessage*> messages_by_node(const detail::NodeRanks& ranks, std::size_t nodes) {
  std::vector<const detail::RankMessage*> out(nodes, nullptr);
  for (const detail::RankMessage& m : ranks.messages)
    if (m.node >= 0 && static_cast<std::size_t>(m.node) < nodes) out[static_cast<std::size_t>(m.node)] = &m;
  return out;
}

// A node's rank fields: "rank" for a node that runs on one rank only, and
// what a message node moves.
void write_rank_fields(nlohmann::json& node, std::int32_t owner, const detail::RankMessage* message) {
  if (owner >= 0) node["rank"] = owner;
  if (message == nullptr) return;
  node["bytes"] = message->bytes;
  node["from_rank"] = message->sender;
  node["to_rank"] = message->receiver;
}

}  // namespace

nlohmann::json Graph::to_json() const {
  const std::vector<int> level = levels();
  int level_count = 0;
  for (int l : level) level_count = std::max(level_count, l + 1);
  const int ranks = ranks_.rank_count();  // 0: not distributed, nothing about ranks is written
  const std::vector<const detail::RankMessage*> message =
      messages_by_node(ranks_, ranks > 0 ? nodes_.size() : 0);
  nlohmann::json nodes = nlohmann::json::array();
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const detail::NodeRecord& n = nodes_[i];
    nodes.push_back({{"id", i},
                     {"name", names_.name(static_cast<NodeId>(i))},
                     {"kind", to_string(n.kind)},
                     {"execution_kind", to_string(n.execution)},
                     {"device", n.device},
                     {"partition", n.partition},
                     {"level", level[i]}});
    if (ranks > 0) write_rank_fields(nodes.back(), ranks_.owner_of(static_cast<NodeId>(i)), message[i]);
  }
  nlohmann::json edges = nlohmann::json::array();
  for (const Edge& e : edges_)
    edges.push_back({{"from", e.first}, {"to", e.second}, {"kind", is_weak(e) ? "weak" : "strong"}});
  nlohmann::json doc = {{"format", kFormat},
                        {"version", kVersion},
                        {"graph",
                         {{"execution_kind", to_string(kind_)},
                          {"conditional", conditional_},
                          {"node_count", nodes_.size()},
                          {"edge_count", edges_.size()},
                          {"level_count", level_count}}},
                        {"nodes", std::move(nodes)},
                        {"edges", std::move(edges)}};
  if (ranks > 0) doc["ranks"] = ranks;
  return doc;
}

namespace detail {

// Reads a graph document field by field; every failure names the field.
class GraphJsonReader {
 public:
  using NodeId = Graph::NodeId;
  explicit GraphJsonReader(const nlohmann::json& doc) : doc_(doc) {}

  Graph read() {
    Graph g = read_header();
    read_nodes(g);
    read_edges(g);
    check_levels_and_counts(g);
    g.cursor_.last_level = g.sinks(false);
    return g;
  }

 private:
  Graph read_header() {
    if (!doc_.is_object()) fail("document", "expected an object, got " + std::string(doc_.type_name()));
    if (text_field(doc_, "format", "document") != kFormat) {
      fail("document.format", "expected \"" + std::string(kFormat) + "\"");
    }
    version_ = integer_field(doc_, "version", "document", 0, std::numeric_limits<int>::max());
    if (version_ != 1 && version_ != kVersion) {
      fail("document.version", "version " + std::to_string(version_) + " is not supported (expected 1 or " +
                                   std::to_string(kVersion) + ")");
    }
    const nlohmann::json& info = member(doc_, "graph", "document");
    const std::string kind_name = text_field(info, "execution_kind", "graph");
    const auto kind = execution_kind_from_string(kind_name);
    if (!kind) fail("graph.execution_kind", "expected \"cpu\" or \"gpu\", got \"" + kind_name + "\"");
    const nlohmann::json& conditional = member(info, "conditional", "graph");
    if (!conditional.is_boolean()) fail("graph.conditional", "expected true or false");
    Graph g(*kind);
    g.conditional_ = conditional.get<bool>();
    if (doc_.contains("ranks")) {
      ranks_ = integer_field(doc_, "ranks", "document", 1, std::numeric_limits<std::int32_t>::max());
      g.ranks_.loaded_ranks = static_cast<int>(ranks_);
    }
    return g;
  }

  void read_nodes(Graph& g) {
    const nlohmann::json& nodes = member(doc_, "nodes", "document");
    if (!nodes.is_array()) fail("document.nodes", "expected an array, got " + std::string(nodes.type_name()));
    n_ = static_cast<long long>(nodes.size());
    if (n_ > std::numeric_limits<NodeId>::max()) fail("document.nodes", "too many nodes");
    g.nodes_.resize(static_cast<std::size_t>(n_));
    std::vector<std::string> names(static_cast<std::size_t>(n_));
    std::vector<bool> seen(static_cast<std::size_t>(n_), false);
    claimed_level_.assign(static_cast<std::size_t>(n_), 0);
    for (long long i = 0; i < n_; ++i) {
      const nlohmann::json& node = nodes[static_cast<std::size_t>(i)];
      const std::string where = "nodes[" + std::to_string(i) + "]";
      const long long id = integer_field(node, "id", where, 0, n_ - 1);
      if (seen[static_cast<std::size_t>(id)])
        fail(where + ".id", "id " + std::to_string(id) + " appears twice");
      seen[static_cast<std::size_t>(id)] = true;
      names[static_cast<std::size_t>(id)] = text_field(node, "name", where);
      g.nodes_[static_cast<std::size_t>(id)] = read_node(node, where);
      read_node_ranks(g, node, where, static_cast<NodeId>(id));
      claimed_level_[static_cast<std::size_t>(id)] = integer_field(node, "level", where, 0, n_);
    }
    std::sort(g.ranks_.messages.begin(), g.ranks_.messages.end(),
              [](const RankMessage& a, const RankMessage& b) { return a.node < b.node; });
    for (long long i = 0; i < n_; ++i) {
      std::string& name = names[static_cast<std::size_t>(i)];
      if (name.empty()) continue;
      if (const std::optional<NodeId> first = g.find(name)) {
        fail("nodes", "the name \"" + name + "\" is used by nodes " + std::to_string(*first) + " and " +
                          std::to_string(i));
      }
      g.names_.set(static_cast<NodeId>(i), std::move(name));
    }
  }

  NodeRecord read_node(const nlohmann::json& node, const std::string& where) const {
    NodeRecord out;
    const std::string node_kind = text_field(node, "kind", where);
    const auto parsed_kind = node_kind_from_string(node_kind);
    if (!parsed_kind || (version_ == 1 && *parsed_kind == NodeKind::Condition)) {
      fail(where + ".kind", "unknown kind \"" + node_kind +
                                "\" (expected compute, copy, reduce, sync, conditional, subgraph" +
                                (version_ == 1 ? " (condition: version 2)" : " or condition") + ")");
    }
    out.kind = *parsed_kind;
    const std::string exec = text_field(node, "execution_kind", where);
    const auto parsed_exec = execution_kind_from_string(exec);
    if (!parsed_exec) fail(where + ".execution_kind", "expected \"cpu\" or \"gpu\", got \"" + exec + "\"");
    out.execution = *parsed_exec;
    out.device = static_cast<int>(integer_field(node, "device", where, -1, 1 << 20));
    out.partition =
        static_cast<int>(integer_field(node, "partition", where, -1, std::numeric_limits<int>::max()));
    return out;
  }

  // Distributed graphs: "rank" (the one rank that runs the node), and for a
  // node that sends a message between ranks "bytes", "from_rank", "to_rank".
  void read_node_ranks(Graph& g, const nlohmann::json& node, const std::string& where, NodeId id) const {
    const bool message = node.contains("bytes") || node.contains("from_rank") || node.contains("to_rank");
    if (!message && !node.contains("rank")) return;
    if (ranks_ == 0) {
      for (const char* key : {"rank", "bytes", "from_rank", "to_rank"}) {
        if (node.contains(key)) {
          fail(where, std::string("has \"") + key +
                          "\", but the document has no \"ranks\" (the number of ranks the graph runs on)");
        }
      }
    }
    const NodeKind kind = g.nodes_[static_cast<std::size_t>(id)].kind;
    const long long rank = node.contains("rank") ? integer_field(node, "rank", where, -1, ranks_ - 1) : -1;
    if (rank >= 0 &&
        (kind == NodeKind::Condition || kind == NodeKind::Conditional || kind == NodeKind::Subgraph))
      fail(where + ".rank", "a " + std::string(to_string(kind)) + " node runs on every rank");
    if (rank >= 0) g.ranks_.set_owner(id, static_cast<std::int32_t>(rank));
    if (message) g.ranks_.messages.push_back(read_message(node, where, id, kind, rank));
  }

  // A message node's fields; `rank` is its "rank" (-1: none).
  RankMessage read_message(const nlohmann::json& node, const std::string& where, NodeId id, NodeKind kind,
                           long long rank) const {
    if (kind != NodeKind::Copy)
      fail(where + ".kind",
           "is \"" + std::string(to_string(kind)) +
               "\", but only a copy sends a message between ranks (\"bytes\", \"from_rank\", \"to_rank\")");
    RankMessage m;
    m.node = id;
    m.bytes = static_cast<std::size_t>(
        integer_field(node, "bytes", where, 0, std::numeric_limits<std::int64_t>::max()));
    m.sender = static_cast<std::int32_t>(integer_field(node, "from_rank", where, 0, ranks_ - 1));
    m.receiver = static_cast<std::int32_t>(integer_field(node, "to_rank", where, -1, ranks_ - 1));
    if (m.receiver == m.sender) fail(where + ".to_rank", "equals from_rank: a message goes to another rank");
    if (m.receiver >= 0 && rank != m.sender) {
      fail(where + ".rank", "a copy between ranks runs on its sender, from_rank " + std::to_string(m.sender) +
                                (rank < 0 ? std::string(" (it has no \"rank\")")
                                          : " (its \"rank\" is " + std::to_string(rank) + ")"));
    }
    if (m.receiver < 0 && rank >= 0)
      fail(where + ".rank", "a reduction partial (to_rank -1) runs on every rank: it has no \"rank\"");
    return m;
  }

  void read_edges(Graph& g) {
    const nlohmann::json& edges = member(doc_, "edges", "document");
    if (!edges.is_array()) fail("document.edges", "expected an array, got " + std::string(edges.type_name()));
    edge_count_ = static_cast<long long>(edges.size());
    for (std::size_t k = 0; k < edges.size(); ++k) {
      const std::string where = "edges[" + std::to_string(k) + "]";
      // A dangling edge names the missing node.
      const long long from = integer_field(edges[k], "from", where, std::numeric_limits<long long>::min(),
                                           std::numeric_limits<long long>::max());
      const long long to = integer_field(edges[k], "to", where, std::numeric_limits<long long>::min(),
                                         std::numeric_limits<long long>::max());
      for (long long end : {from, to}) {
        if (end < 0 || end >= n_) {
          fail(where, "refers to node " + std::to_string(end) + ", which does not exist (ids are 0.." +
                          std::to_string(n_ - 1) + ")");
        }
      }
      const Graph::Edge edge(static_cast<NodeId>(from), static_cast<NodeId>(to));
      if (version_ >= 2) {
        const std::string edge_kind = text_field(edges[k], "kind", where);
        if (edge_kind != "strong" && edge_kind != "weak")
          fail(where + ".kind", "expected \"strong\" or \"weak\", got \"" + edge_kind + "\"");
        if ((edge_kind == "weak") != g.is_weak(edge)) {
          fail(where + ".kind",
               "is \"" + edge_kind + "\", but an edge is weak exactly when it leaves a condition node");
        }
      }
      g.edges_.push_back(edge);
    }
  }

  void check_levels_and_counts(const Graph& g) const {
    // A cycle is reported by levels() with the nodes' names.
    const std::vector<int> level = g.levels();
    for (long long i = 0; i < n_; ++i) {
      const long long claimed = claimed_level_[static_cast<std::size_t>(i)];
      if (claimed != level[static_cast<std::size_t>(i)]) {
        fail("nodes[" + std::to_string(i) + "].level",
             "says " + std::to_string(claimed) + " but its edges put it on level " +
                 std::to_string(level[static_cast<std::size_t>(i)]));
      }
    }
    const nlohmann::json& info = member(doc_, "graph", "document");
    const long long node_count =
        integer_field(info, "node_count", "graph", 0, std::numeric_limits<long long>::max());
    const long long edge_count =
        integer_field(info, "edge_count", "graph", 0, std::numeric_limits<long long>::max());
    if (node_count != n_)
      fail("graph.node_count",
           "says " + std::to_string(node_count) + " but nodes holds " + std::to_string(n_));
    const long long level_count =
        integer_field(info, "level_count", "graph", 0, std::numeric_limits<long long>::max());
    long long deepest = 0;
    for (int l : level) deepest = std::max<long long>(deepest, l + 1);
    if (level_count != deepest) {
      fail("graph.level_count",
           "says " + std::to_string(level_count) + " but the edges make " + std::to_string(deepest));
    }
    if (edge_count != edge_count_) {
      fail("graph.edge_count",
           "says " + std::to_string(edge_count) + " but edges holds " + std::to_string(edge_count_));
    }
  }

  const nlohmann::json& doc_;
  long long version_ = 0;
  long long ranks_ = 0;  // "ranks": 0 when the document has none
  long long n_ = 0;
  long long edge_count_ = 0;
  std::vector<long long> claimed_level_;
};

}  // namespace detail

Graph Graph::from_json(const nlohmann::json& doc) { return detail::GraphJsonReader(doc).read(); }

Graph Graph::from_json_text(std::string_view text) {
  // Depth is refused before the parser goes deep; a repeated key is an error.
  nlohmann::json doc = parse_json_document(text, "graph JSON", kMaxDepth);
  const JsonDocumentRelease emptied_at_exit(doc);  // running out of memory below: bad_alloc, not an abort
  return from_json(doc);
}

}  // namespace weft

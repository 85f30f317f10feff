// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributed graphs in the JSON (docs/graph-json.md): built for one rank of
// a fake group (no MPI: nothing runs), a graph records each node's rank, what
// every message node moves, and the number of ranks; loading keeps them, and
// graphs without distributed tensors write what they always wrote.
#include <weft/graph/graph.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

// Rank `rank` of `size` ranks; only enough to build graphs.
class FakeGroup : public weft::RankGroup {
 public:
  FakeGroup(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  std::string describe() const override { return "a fake group (" + std::to_string(size_) + " ranks)"; }
  std::unique_ptr<weft::RankChannel> open_channel(int) override {
    throw std::logic_error("FakeGroup: graphs built on it are not run");
  }

 private:
  int rank_, size_;
};

using Field = weft::Tensor<double, 2>;

// Fill, a stencil reading one cell of padding, a sum, and a report on rank 0:
// 8 blocks over 4 ranks (blocks 2r and 2r + 1 on rank r).
struct Built {
  Field in, out;
  weft::ReductionResult<double> sum = weft::make_reduction_result<double>(0.0);
  weft::Graph graph;
};

std::unique_ptr<Built> build_for(int rank) {
  const weft::Distribution d = weft::distributed(std::make_shared<FakeGroup>(rank, 4));
  auto b = std::make_unique<Built>();
  b->in = Field(d, {1, 8}, 1, 16, 64);
  b->out = Field(d, {1, 8}, 1, 16, 64);
  b->graph.split([](auto& it) { *it = 1.0; }, b->in).named("fill");
  b->graph
      .then_split([](auto& in, auto& out) { *out = *in.offset(weft::dim_y, 1); },
                  weft::concurrent_padded_access(b->in), b->out)
      .named("step");
  b->graph.then_reduce(b->out, b->sum).named("sum");
  b->graph.then([] {}).on_rank(0).named("report");
  return b;
}

const nlohmann::json& node_named(const nlohmann::json& doc, const std::string& name) {
  for (const nlohmann::json& n : doc["nodes"])
    if (n["name"] == name) return n;
  FAIL("no node named " << name);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("GraphRanks.json_records_each_nodes_rank_and_what_messages_move") {
  const std::unique_ptr<Built> b = build_for(0);
  const nlohmann::json doc = b->graph.to_json();
  CHECK(doc["ranks"] == 4);
  CHECK(doc["version"] == 2);
  for (std::size_t k = 0; k < 8; ++k) {
    CHECK(node_named(doc, "fill." + std::to_string(k))["rank"] == b->in.owner_of(k));
    CHECK(node_named(doc, "step." + std::to_string(k))["rank"] == b->in.owner_of(k));
  }
  CHECK(node_named(doc, "report")["rank"] == 0);
  CHECK_FALSE(node_named(doc, "sum.finish").contains("rank"));  // every rank joins the partials

  // Padding copies: a message exactly where the two blocks live on two ranks
  // (step.pad<from>to<to>), of the bytes the tensor packs; the sender (the
  // source's owner) runs it. Within a rank, step.pad<b> fills block b's
  // padding on b's owner and sends nothing.
  std::size_t copies = 0, messages = 0, message_bytes = 0, expected_bytes = 0;
  for (const nlohmann::json& n : doc["nodes"]) {
    const std::string name = n["name"];
    if (name.rfind("step.pad", 0) != 0) continue;
    ++copies;
    const std::size_t from = n["partition"];
    CHECK(n["rank"] == b->in.owner_of(from));
    if (name.find("to") == std::string::npos) {
      CHECK(name == "step.pad" + std::to_string(from));
      CHECK_FALSE(n.contains("bytes"));
      continue;
    }
    const std::size_t to = std::stoul(name.substr(name.rfind("to") + 2));
    REQUIRE(b->in.owner_of(from) != b->in.owner_of(to));
    ++messages;
    expected_bytes += b->in.padding_bytes(from, to);
    message_bytes += n["bytes"].get<std::size_t>();
    CHECK(n["bytes"] == b->in.padding_bytes(from, to));
    CHECK(n["from_rank"] == b->in.owner_of(from));
    CHECK(n["to_rank"] == b->in.owner_of(to));
  }
  CHECK(copies == 14);   // 8 fills within ranks, 6 messages
  CHECK(messages == 6);  // across the 3 rank boundaries, both ways
  CHECK(message_bytes == expected_bytes);
  CHECK(expected_bytes == 6 * 16 * sizeof(double));  // one row of 16 cells each

  // Reduction partials: each block's owner sends its partial to every other rank.
  for (std::size_t k = 0; k < 8; ++k) {
    const nlohmann::json& share = node_named(doc, "sum.share" + std::to_string(k));
    CHECK(share["kind"] == "copy");
    CHECK_FALSE(share.contains("rank"));
    CHECK(share["from_rank"] == b->out.owner_of(k));
    CHECK(share["to_rank"] == -1);
    CHECK(share["bytes"] == sizeof(double));
  }
}

TEST_CASE("GraphRanks.every_rank_writes_the_same_json") {
  const nlohmann::json first = build_for(0)->graph.to_json();
  for (int rank = 1; rank < 4; ++rank) CHECK(build_for(rank)->graph.to_json() == first);
}

TEST_CASE("GraphRanks.round_trip_keeps_ranks_and_messages") {
  const std::unique_ptr<Built> b = build_for(2);
  const nlohmann::json doc = b->graph.to_json();
  const weft::Graph back = weft::Graph::from_json(doc);
  CHECK(back.to_json() == doc);
  CHECK(weft::Graph::from_json_text(doc.dump()).to_json() == doc);
  CHECK(weft::Graph::from_json(back.to_json()).to_json() == doc);
  CHECK(back.rank_group() == nullptr);  // the group is not kept, its size is
  for (weft::Graph::NodeId id = 0; id < static_cast<weft::Graph::NodeId>(back.size()); ++id)
    CHECK(back.node(id).rank == b->graph.node(id).rank);
  // A loaded graph still cannot run, for the usual reason.
  weft::Executor executor(weft::ExecutorConfig::cpu_only(1));
  weft::Graph copy = back;
  CHECK_THROWS_WITH_AS(executor.run(copy), doctest::Contains("no callable"), std::logic_error);
}

TEST_CASE("GraphRanks.graphs_without_a_rank_group_write_no_rank_fields") {
  Field in({1, 4}, 1, 8, 8), out({1, 4}, 1, 8, 8);
  weft::Graph g;
  g.split([](auto& it) { *it = 1.0; }, in);
  g.then_split([](auto& a, auto& b) { *b = *a; }, weft::concurrent_padded_access(in), out);
  g.then([] {}).on_rank(1);  // no group yet: cannot run, and not written either
  const nlohmann::json doc = g.to_json();
  CHECK_FALSE(doc.contains("ranks"));
  for (const nlohmann::json& n : doc["nodes"]) {
    CHECK(n.size() == 7);
    for (const char* key : {"rank", "bytes", "from_rank", "to_rank"}) CHECK_FALSE(n.contains(key));
  }
  // A group alone: every node runs on every rank, and the count is written.
  weft::Graph grouped;
  grouped.emplace([] {}).rank_group(std::make_shared<FakeGroup>(0, 3));
  const nlohmann::json with_group = grouped.to_json();
  CHECK(with_group["ranks"] == 3);
  CHECK_FALSE(with_group["nodes"][0].contains("rank"));
  CHECK(weft::Graph::from_json(with_group).to_json() == with_group);
}

TEST_CASE("GraphRanks.malformed_rank_fields_are_rejected_naming_the_node") {
  const nlohmann::json good = build_for(0)->graph.to_json();
  const auto index_of = [&](const std::string& name) {
    for (std::size_t i = 0; i < good["nodes"].size(); ++i)
      if (good["nodes"][i]["name"] == name) return i;
    throw std::logic_error("no node " + name);
  };
  const std::size_t step = index_of("step.1"), copy = index_of("step.pad2to1"),
                    share = index_of("sum.share3"), report = index_of("report");
  REQUIRE(good["nodes"][copy].contains("bytes"));
  const auto rejects = [&](auto edit, const std::string& expected) {
    nlohmann::json doc = good;
    edit(doc);
    CAPTURE(expected);
    CHECK_THROWS_WITH_AS(weft::Graph::from_json_text(doc.dump()), doctest::Contains(expected.c_str()),
                         std::invalid_argument);
  };
  const std::string at_step = "nodes[" + std::to_string(step) + "]";
  const std::string at_copy = "nodes[" + std::to_string(copy) + "]";
  const std::string at_share = "nodes[" + std::to_string(share) + "]";
  rejects([](auto& d) { d["ranks"] = "4"; }, "document.ranks: expected an integer, got string");
  rejects([](auto& d) { d["ranks"] = 0; }, "document.ranks: value 0 outside [1, ");
  rejects([](auto& d) { d.erase("ranks"); },
          "has \"rank\", but the document has no \"ranks\" (the number of ranks the graph runs on)");
  rejects([&](auto& d) { d["nodes"][step]["rank"] = 4; }, at_step + ".rank: value 4 outside [-1, 3]");
  rejects([&](auto& d) { d["nodes"][step]["rank"] = 1.5; },
          at_step + ".rank: expected an integer, got number");
  rejects([&](auto& d) { d["nodes"][step]["bytes"] = 8; },
          at_step + ".kind: is \"compute\", but only a copy sends a message between ranks");
  rejects([&](auto& d) { d["nodes"][copy]["bytes"] = -1; }, at_copy + ".bytes: value -1 outside");
  rejects([&](auto& d) { d["nodes"][copy]["bytes"] = "many"; }, at_copy + ".bytes: expected an integer");
  rejects([&](auto& d) { d["nodes"][copy].erase("from_rank"); }, at_copy + ": missing field 'from_rank'");
  rejects([&](auto& d) { d["nodes"][copy]["to_rank"] = d["nodes"][copy]["from_rank"]; },
          at_copy + ".to_rank: equals from_rank");
  rejects([&](auto& d) { d["nodes"][copy]["to_rank"] = 9; }, at_copy + ".to_rank: value 9 outside [-1, 3]");
  rejects([&](auto& d) { d["nodes"][copy]["rank"] = 0; },
          at_copy + ".rank: a copy between ranks runs on its sender, from_rank 1 (its \"rank\" is 0)");
  rejects([&](auto& d) { d["nodes"][share]["rank"] = 1; },
          at_share + ".rank: a reduction partial (to_rank -1) runs on every rank");
  rejects([&](auto& d) { d["nodes"][report]["kind"] = "subgraph"; },
          "nodes[" + std::to_string(report) + "].rank: a subgraph node runs on every rank");
  // -1 says what an absent "rank" says.
  nlohmann::json every = good;
  every["nodes"][index_of("sum.finish")]["rank"] = -1;
  CHECK(weft::Graph::from_json(every).to_json() == good);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The work-DAG's condition mode under load: random graphs of plain nodes,
// condition nodes that choose a successor (or none) and self-loops that
// iterate, run on 1 to 4 workers and compared with a serial interpreter of
// the same rules. A pass that ended early (the in-flight count reaching zero
// while nodes still run) or a node run twice or lost shows as a different
// visit count.
#include <weft/runtime/work_graph_policy.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "../executor_configs.hpp"
#include "../runtime/dag_shapes.hpp"
#include "stress_scale.hpp"

namespace {

// A random graph whose outcome does not depend on the order nodes run in:
// every node is triggered from one place only. Plain nodes join strong
// edges from earlier plain nodes; each condition node owns the successors
// it chooses among (their only predecessor); a loop node chooses itself
// `limit` times, then its exit.
struct RandomConditionGraph {
  enum class Kind : std::uint8_t { Plain, Condition, Loop };
  struct Node {
    Kind kind = Kind::Plain;
    int limit = 0;  // loops: how often it goes round per pass
  };
  std::vector<Node> nodes;
  std::vector<std::pair<int, int>> edges;  // in the order of each row

  RandomConditionGraph(std::uint32_t seed, int size) {
    std::mt19937 rng(seed);
    std::vector<int> plain;  // plain nodes so far: strong predecessors to draw from
    const auto add = [&](Kind kind) {
      nodes.push_back({kind, kind == Kind::Loop ? static_cast<int>(rng() % 20) : 0});
      return static_cast<int>(nodes.size()) - 1;
    };
    while (static_cast<int>(nodes.size()) < size) {
      const unsigned what = rng() % 10;
      if (what < 6 || plain.empty()) {  // a plain node after up to 3 earlier plain nodes
        const int id = add(Kind::Plain);
        const unsigned preds = plain.empty() ? 0 : rng() % 4;
        for (unsigned k = 0; k < preds; ++k) {
          const int p = plain[rng() % plain.size()];
          bool twice = false;
          for (const auto& e : edges) twice = twice || (e.first == p && e.second == id);
          if (!twice) edges.emplace_back(p, id);
        }
        plain.push_back(id);
      } else if (what < 9) {  // a condition node after a plain one, owning 1 to 3 plain successors
        const int c = add(Kind::Condition);
        edges.emplace_back(plain[rng() % plain.size()], c);
        const unsigned choices = 1 + rng() % 3;
        for (unsigned k = 0; k < choices; ++k) {
          const int s = add(Kind::Plain);
          edges.emplace_back(c, s);
          plain.push_back(s);
        }
      } else {  // a loop after a plain one: itself, then its exit
        const int l = add(Kind::Loop);
        edges.emplace_back(plain[rng() % plain.size()], l);
        edges.emplace_back(l, l);
        const int exit = add(Kind::Plain);
        edges.emplace_back(l, exit);
        plain.push_back(exit);
      }
    }
  }

  int size() const { return static_cast<int>(nodes.size()); }
  bool is_condition(int i) const { return nodes[static_cast<std::size_t>(i)].kind != Kind::Plain; }
  // A condition node's choice, from its pass and its visits in the pass only.
  int choose(int node, int pass, int visits_this_pass) const {
    const Node& n = nodes[static_cast<std::size_t>(node)];
    if (n.kind == Kind::Loop) return visits_this_pass <= n.limit ? 0 : 1;
    const auto h = static_cast<unsigned>(node * 2654435761u + static_cast<unsigned>(pass) * 40503u);
    return static_cast<int>(h % 4) - 1;  // -1 to 2: none, or one of up to three (out of range: none)
  }

  // The serial interpreter: runs one pass in the engine's rules.
  std::vector<int> expected(int pass) const {
    const int n = size();
    std::vector<int> in_degree(static_cast<std::size_t>(n), 0), any_in(static_cast<std::size_t>(n), 0);
    for (const auto& [from, to] : edges) {
      ++any_in[static_cast<std::size_t>(to)];
      if (!is_condition(from)) ++in_degree[static_cast<std::size_t>(to)];
    }
    std::vector<int> join = in_degree, visits(static_cast<std::size_t>(n), 0);
    std::deque<int> ready;
    for (int i = 0; i < n; ++i)
      if (any_in[static_cast<std::size_t>(i)] == 0) ready.push_back(i);
    while (!ready.empty()) {
      const int v = ready.front();
      ready.pop_front();
      const int seen = ++visits[static_cast<std::size_t>(v)];
      join[static_cast<std::size_t>(v)] = in_degree[static_cast<std::size_t>(v)];
      std::vector<int> row;
      for (const auto& [from, to] : edges)
        if (from == v) row.push_back(to);
      if (is_condition(v)) {
        const int k = choose(v, pass, seen);
        if (k >= 0 && k < static_cast<int>(row.size())) ready.push_back(row[static_cast<std::size_t>(k)]);
      } else {
        for (int s : row)
          if (--join[static_cast<std::size_t>(s)] == 0) ready.push_back(s);
      }
    }
    return visits;
  }
};

}  // namespace

TEST_CASE("WorkGraph.stress.random_condition_graphs_match_a_serial_run.1_to_4threads") {
  const int graphs = static_cast<int>(weft::test::scaled(60, 3));
  for (int threads = 1; threads <= 4; ++threads) {
    weft::Executor executor(weft::test::cpu_only(threads));
    for (int trial = 0; trial < graphs; ++trial) {
      const RandomConditionGraph shape(static_cast<std::uint32_t>(1000 * threads + trial), 300);
      std::vector<std::uint8_t> flags;
      for (int i = 0; i < shape.size(); ++i) flags.push_back(shape.is_condition(i) ? 1 : 0);
      const weft::WorkGraphPolicy<int> policy(weft::test::from_edges(shape.size(), shape.edges), {}, flags);
      // Per node: its visits in this pass (atomics: a pass's nodes run anywhere).
      const auto visits = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(shape.size()));
      int pass = 0;
      struct State {
        const RandomConditionGraph* shape;
        std::atomic<int>* visits;
        const int* pass;
        int node;
      };
      std::vector<State> states;
      for (int i = 0; i < shape.size(); ++i) states.push_back({&shape, visits.get(), &pass, i});
      std::vector<weft::WorkGraphNodeCall> calls;
      for (State& s : states) {
        if (shape.is_condition(s.node)) {
          calls.push_back(weft::WorkGraphNodeCall::condition(
              [](void* p) {
                auto* st = static_cast<State*>(p);
                const int seen = st->visits[st->node].fetch_add(1, std::memory_order_relaxed) + 1;
                return st->shape->choose(st->node, *st->pass, seen);
              },
              &s));
        } else {
          calls.push_back(weft::WorkGraphNodeCall::of(
              [](void* p) {
                auto* st = static_cast<State*>(p);
                st->visits[st->node].fetch_add(1, std::memory_order_relaxed);
              },
              &s));
        }
      }
      for (pass = 0; pass < 3; ++pass) {
        for (int i = 0; i < shape.size(); ++i) visits[static_cast<std::size_t>(i)].store(0);
        policy.run(executor, calls.data());
        const std::vector<int> expected = shape.expected(pass);
        for (int i = 0; i < shape.size(); ++i) {
          CAPTURE(threads);
          CAPTURE(trial);
          CAPTURE(pass);
          CAPTURE(i);
          REQUIRE(visits[static_cast<std::size_t>(i)].load() == expected[static_cast<std::size_t>(i)]);
        }
      }
    }
  }
}

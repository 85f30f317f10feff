// The Graph builder against the raw work-DAG it lowers onto: a Graph built
// node by node the way a user writes it, and a WorkGraphPolicy made directly
// from a Crs of the same shape (same node numbers, same successor order), on
// two shapes:
//
//   chain  n nodes: emplace, then n - 1 times then() (each node after the last)
//   fan    a root, then `rounds` times: `width` nodes beside each other after
//          the last join (one then() and width - 1 emplace()s), and a join
//          after all of them (then()): 1 + rounds * (width + 1) nodes
//
// For each shape, in ns per node:
//   build  making the Graph against making the Crs plus the policy
//   lower  the graph's first run minus a steady-state run (there is no public
//          lower(): the first run lowers), against the same Crs plus policy
//   run    running the already-lowered graph, executor.run(g).wait().get(),
//          against parallel_for on the policy
// Every node of both runs the same Probe, whose visit counts (and, in one
// untimed verification run each, sequence numbers) prove afterwards that each
// node ran exactly once per run and after its predecessors.
#include "bench.hpp"
#include "dag_probe.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <weft/graph/graph.hpp>
#include <weft/runtime/crs.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/executor_config.hpp>
#include <weft/runtime/work_graph_policy.hpp>

namespace {

using weft::bench::Options;
using weft::bench::Reporter;

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "graph: %s\n", message.c_str());
  std::exit(1);
}

enum class ShapeKind { chain, fan };

struct Shape {
  ShapeKind kind;
  const char* name;
  int n = 0;       // nodes
  int width = 0;   // fan only: nodes beside each other per round
  int rounds = 0;  // fan only

  std::string params(int threads) const {
    std::string p = "n=" + std::to_string(n);
    if (kind == ShapeKind::fan) p += " w=" + std::to_string(width);
    return p + " threads=" + std::to_string(threads);
  }

  // fan: the root and the joins ("hubs") are the nodes k * (width + 1); the
  // nodes of round r lie between hub r and hub r + 1.
  bool is_hub(int i) const { return i % (width + 1) == 0; }

  // Calls f(j) for every node j that executes after node i, in the order the
  // builder adds those edges (so the Crs the graph lowers to is this one).
  template <class F>
  void for_each_successor(int i, F&& f) const {
    switch (kind) {
      case ShapeKind::chain:
        if (i + 1 < n) f(i + 1);
        break;
      case ShapeKind::fan:
        if (!is_hub(i)) {
          f((i / (width + 1) + 1) * (width + 1));
        } else if (i + 1 < n) {
          for (int j = i + 1; j <= i + width; ++j) f(j);
        }
        break;
    }
  }
  std::size_t num_edges() const {
    return kind == ShapeKind::chain ? static_cast<std::size_t>(n - 1)
                                    : 2 * static_cast<std::size_t>(rounds) * static_cast<std::size_t>(width);
  }
};

Shape make_shape(ShapeKind kind, const Options& opt) {
  Shape s{kind, "", 0, 0, 0};
  switch (kind) {
    case ShapeKind::chain:
      s.name = "chain";
      s.n = opt.quick ? 10'000 : 1'000'000;
      break;
    case ShapeKind::fan:
      s.name = "fan";
      s.width = s.rounds = opt.quick ? 100 : 1000;
      s.n = 1 + s.rounds * (s.width + 1);
      break;
  }
  return s;
}

// What every node of both variants runs: a visit count per node and, only in
// a verification run, a sequence number from one shared atomic counter.
using Probe = weft::bench::DagProbe<Shape>;

// ---- building ------------------------------------------------------------------

// As a user writes it: one builder call per node, each node a lambda.
std::unique_ptr<weft::Graph> build_graph(const Shape& s, Probe& probe) {
  auto g = std::make_unique<weft::Graph>(weft::ExecutionKind::Cpu);
  const auto node = [&probe](int i) { return [&probe, i] { probe(i); }; };
  switch (s.kind) {
    case ShapeKind::chain:
      g->emplace(node(0));
      for (int i = 1; i < s.n; ++i) g->then(node(i));
      break;
    case ShapeKind::fan:
      g->emplace(node(0));
      for (int r = 0; r < s.rounds; ++r) {
        const int hub = r * (s.width + 1);
        g->then(node(hub + 1));                                        // after the hub ...
        for (int k = 2; k <= s.width; ++k) g->emplace(node(hub + k));  // ... beside it
        g->then(node(hub + s.width + 1));                              // the join after all of them
      }
      break;
  }
  if (g->size() != static_cast<std::size_t>(s.n) || g->edges().size() != s.num_edges()) {
    fail(std::string(s.name) + ": the builder made " + std::to_string(g->size()) + " nodes and " +
         std::to_string(g->edges().size()) + " edges, expected " + std::to_string(s.n) + " and " +
         std::to_string(s.num_edges()));
  }
  return g;
}

struct RawDag {
  weft::Crs<int> crs;
  weft::WorkGraphPolicy<int> policy;
};

// What lowering builds too: the successor rows, then the policy (validation,
// cycle check, join counters, jobs).
std::unique_ptr<RawDag> build_raw(const Shape& s) {
  weft::Crs<int> crs;
  crs.row_map.reserve(static_cast<std::size_t>(s.n) + 1);
  crs.entries.reserve(s.num_edges());
  crs.row_map.push_back(0);
  for (int i = 0; i < s.n; ++i) {
    s.for_each_successor(i, [&](int j) { crs.entries.push_back(j); });
    crs.row_map.push_back(static_cast<int>(crs.entries.size()));
  }
  weft::WorkGraphPolicy<int> policy(crs);
  return std::make_unique<RawDag>(RawDag{std::move(crs), std::move(policy)});
}

// ---- the benchmark ---------------------------------------------------------------

double elapsed_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void run_shape(ShapeKind kind, const Options& opt, Reporter& out) {
  const Shape s = make_shape(kind, opt);
  const int reps = std::max(1, opt.repetitions);
  weft::ExecutorConfig cfg;
  cfg.cpu_workers = opt.threads;
  cfg.gpu_workers = 0;
  weft::Executor executor(cfg);
  {
    // The executor's graph runtime is made by its first graph run: not part
    // of lowering the big graph.
    weft::Graph warm_up;
    warm_up.emplace([] {});
    executor.run(warm_up).wait().get();
  }

  // Build: best of `reps`; every build but the last is destroyed untimed.
  Probe raw_probe("graph", s.n), graph_probe("graph", s.n);
  double raw_build = std::numeric_limits<double>::infinity();
  std::unique_ptr<RawDag> raw;
  for (int r = 0; r < reps; ++r) {
    raw.reset();
    const auto start = std::chrono::steady_clock::now();
    raw = build_raw(s);
    raw_build = std::min(raw_build, elapsed_since(start));
  }
  // Each graph built is also run once: that first run lowers it.
  double graph_build = std::numeric_limits<double>::infinity();
  double first_run = std::numeric_limits<double>::infinity();
  std::unique_ptr<weft::Graph> graph;
  for (int r = 0; r < reps; ++r) {
    graph.reset();
    graph_probe.reset(false);
    auto start = std::chrono::steady_clock::now();
    graph = build_graph(s, graph_probe);
    graph_build = std::min(graph_build, elapsed_since(start));
    start = std::chrono::steady_clock::now();
    executor.run(*graph).wait().get();
    first_run = std::min(first_run, elapsed_since(start));
    graph_probe.check(s, "the graph's first run", 1);
  }

  const auto raw_body = [&raw_probe](int i) { raw_probe(i); };
  const auto run_raw = [&] { weft::parallel_for(executor, raw->policy, raw_body); };
  const auto run_graph = [&] { executor.run(*graph).wait().get(); };

  // One verification run each (which also warms up), then the timed runs,
  // alternating so that both see the same machine.
  raw_probe.reset(true);
  run_raw();
  raw_probe.check(s, "raw-workdag", 1);
  graph_probe.reset(true);
  run_graph();
  graph_probe.check(s, "graph", 1);
  raw_probe.reset(false);
  graph_probe.reset(false);
  double raw_run = std::numeric_limits<double>::infinity();
  double graph_run = std::numeric_limits<double>::infinity();
  for (int r = 0; r < reps; ++r) {
    raw_run = std::min(raw_run, weft::bench::seconds(run_raw));
    graph_run = std::min(graph_run, weft::bench::seconds(run_graph));
  }
  raw_probe.check(s, "raw-workdag", reps);
  graph_probe.check(s, "graph", reps);

  const std::string name = std::string("graph.") + s.name;
  const std::string params = s.params(opt.threads);
  const double ns_per = 1e9 / s.n;
  out.compare(name + ".build", params, "ns/node", {"weft", graph_build * ns_per},
              {"raw-workdag", raw_build * ns_per});
  out.compare(name + ".lower", params, "ns/node", {"weft", (first_run - graph_run) * ns_per},
              {"raw-workdag", raw_build * ns_per});
  out.compare(name + ".run", params, "ns/node", {"weft", graph_run * ns_per},
              {"raw-workdag", raw_run * ns_per});
}

}  // namespace

WEFT_BENCHMARK(graph_chain) { run_shape(ShapeKind::chain, opt, out); }
WEFT_BENCHMARK(graph_fan) { run_shape(ShapeKind::fan, opt, out); }

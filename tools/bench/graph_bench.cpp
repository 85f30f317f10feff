// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Graph builder and its runs, against oneTBB's flow graph and weft's raw
// work-DAG (a Crs plus a WorkGraphPolicy) of the same shape, on four shapes:
//
//   chain        n nodes, node i after node i-1
//   independent  n nodes, no edges
//   tree         a binary tree of depth d (2^d - 1 nodes), children after parents
//   wavefront    side x side nodes, (r, c) after (r-1, c) and (r, c-1)
//
// Each is built as a user writes it: weft with emplace / then / add_edge
// (ids from last()), oneTBB with continue_nodes and make_edge, the raw
// work-DAG as compressed rows. Timed separately, in ns per node:
//   build      making the graph (nothing runs)
//   first run  the first run of a freshly built graph (weft lowers it there)
//   run        a run of the already-run graph (best of twice the repetitions,
//              the raw work-DAG's and the graph's runs taking turns)
// Ratios: build and first run against oneTBB, run against the raw work-DAG.
// Heap, in bytes per node: what glibc has in use after building, and after
// the first run (weft lowers the graph there), over what it had before,
// against oneTBB's (heap_built, heap_first_run).
// Every node of every variant runs the same Probe, whose visit counts (and,
// in one verification run each, sequence numbers) prove afterwards that each
// node ran exactly once per run and after its predecessors.
//
// Memory: a page fault costs about 11 us on the 2-core VM these figures come
// from (more than building a node), and glibc returns large freed blocks to
// the kernel, so a rebuilt graph pays its page faults again while many small
// blocks (oneTBB's nodes) are reused. So that build times compare the
// builders' own work, freed memory stays in the process while a shape is
// measured (KeepFreedMemory) and the best of the repetitions is reported.
//
// graph_fresh_process: the build and first run of each shape in a process
// of its own (weft-bench started again for each variant and repetition),
// where every page is faulted in for the first time: a user's first graph.
//
// graph_queued_runs: 10,000 runs of a 10-node graph submitted back to back
// (they queue) against the same runs issued one after another with a wait
// in between, in us per run.
#include "bench.hpp"
#include "dag_probe.hpp"
#include "tbb_dag.hpp"

#include <malloc.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <oneapi/tbb/global_control.h>

#include <weft/graph/graph.hpp>
#include <weft/runtime/crs.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/work_graph_policy.hpp>

namespace {

using weft::bench::Options;
using weft::bench::Reporter;

enum class ShapeKind { chain, independent, tree, wavefront };

struct Shape {
  ShapeKind kind;
  const char* name;
  int n = 0;
  int side = 0;   // wavefront: side x side, node r * side + c
  int depth = 0;  // tree: node i's children are 2i+1 and 2i+2

  std::string params(int threads) const {
    std::string size = kind == ShapeKind::wavefront ? std::to_string(side) + "x" + std::to_string(side)
                       : kind == ShapeKind::tree    ? "depth=" + std::to_string(depth)
                                                    : "n=" + std::to_string(n);
    return size + " threads=" + std::to_string(threads);
  }
  // Calls f(j) for every node j that runs after node i, in the order every
  // variant adds those edges.
  template <class F>
  void for_each_successor(int i, F&& f) const {
    switch (kind) {
      case ShapeKind::chain:
        if (i + 1 < n) f(i + 1);
        break;
      case ShapeKind::independent:
        break;
      case ShapeKind::tree:
        if (2 * i + 1 < n) f(2 * i + 1);
        if (2 * i + 2 < n) f(2 * i + 2);
        break;
      case ShapeKind::wavefront:
        if (i / side + 1 < side) f(i + side);
        if (i % side + 1 < side) f(i + 1);
        break;
    }
  }
  bool is_root(int i) const { return kind == ShapeKind::independent || i == 0; }
  std::size_t edges() const {
    std::size_t m = 0;
    for (int i = 0; i < n; ++i) for_each_successor(i, [&](int) { ++m; });
    return m;
  }
};

Shape make_shape(ShapeKind kind, const Options& opt) {
  Shape s{kind, "", 0, 0, 0};
  switch (kind) {
    case ShapeKind::chain:
      s.name = "chain";
      s.n = opt.quick ? 10'000 : 1'000'000;
      break;
    case ShapeKind::independent:
      s.name = "independent";
      s.n = opt.quick ? 10'000 : 1'000'000;
      break;
    case ShapeKind::tree:
      s.name = "tree";
      s.depth = opt.quick ? 13 : 20;
      s.n = (1 << s.depth) - 1;
      break;
    case ShapeKind::wavefront:
      s.name = "wavefront";
      s.side = opt.quick ? 100 : 1024;
      s.n = s.side * s.side;
      break;
  }
  return s;
}

using Probe = weft::bench::DagProbe<Shape>;

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "graph: %s\n", message.c_str());
  std::exit(1);
}

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Timings of one variant, in seconds (best of the repetitions), and the
// heap it holds (glibc's bytes in use, every arena) after building and
// after the first run, over what was in use before it was built.
struct Timings {
  double build = std::numeric_limits<double>::infinity();
  double first_run = std::numeric_limits<double>::infinity();
  double run = std::numeric_limits<double>::infinity();
  double heap_built = 0;
  double heap_run = 0;
};

double heap_in_use() {
  const struct mallinfo2 heap = mallinfo2();
  return static_cast<double>(heap.uordblks + heap.hblkhd);  // small blocks and mapped ones
}

// Builds `reps` times (each built graph runs once, the first run) and
// returns the last one, checked. Variant: make(), run(built).
template <class Make, class Run>
auto build_and_run_once(const Shape& s, const char* variant, const Options& opt, Probe& probe, Timings& t,
                        Make&& make, Run&& run) {
  decltype(make()) built;
  for (int r = 0; r < std::max(1, opt.repetitions); ++r) {
    built = {};  // the previous one goes outside the timers
    probe.reset(r == 0);
    const double heap_before = heap_in_use();
    auto start = std::chrono::steady_clock::now();
    built = make();
    t.build = std::min(t.build, since(start));
    const double heap_built = heap_in_use();
    start = std::chrono::steady_clock::now();
    run(*built);
    t.first_run = std::min(t.first_run, since(start));
    if (r + 1 == std::max(1, opt.repetitions)) {  // the last: everything warm; outside the timers
      t.heap_built = heap_built - heap_before;
      t.heap_run = heap_in_use() - heap_before;
    }
    probe.check(s, variant, 1);
  }
  return built;
}

// Steady runs of already-run variants, taking turns so that all see the
// same machine; each variant's best time goes to its Timings.
struct Steady {
  const char* variant;
  std::function<void()> run;
  Timings* timings;
};
void time_steady(const Shape& s, const Options& opt, Probe& probe, const std::vector<Steady>& variants) {
  const int reps = 2 * std::max(1, opt.repetitions);
  probe.reset(false);
  for (int r = 0; r < reps; ++r)
    for (const Steady& v : variants) v.timings->run = std::min(v.timings->run, weft::bench::seconds(v.run));
  probe.check(s, "steady runs", reps * static_cast<int>(variants.size()));
}

// ---- weft's Graph, as a user writes it -------------------------------------------

std::unique_ptr<weft::Graph> build_graph(const Shape& s, Probe& probe) {
  auto g = std::make_unique<weft::Graph>();
  const auto node = [&probe](int i) { return [&probe, i] { probe(i); }; };
  switch (s.kind) {
    case ShapeKind::chain:
      g->emplace(node(0));
      for (int i = 1; i < s.n; ++i) g->then(node(i));
      break;
    case ShapeKind::independent:
      for (int i = 0; i < s.n; ++i) g->emplace(node(i));
      break;
    case ShapeKind::tree:
    case ShapeKind::wavefront: {
      // Taskflow's way: the nodes, then their edges.
      std::vector<weft::Graph::NodeId> ids(static_cast<std::size_t>(s.n));
      for (int i = 0; i < s.n; ++i) ids[static_cast<std::size_t>(i)] = g->emplace(node(i)).last();
      for (int i = 0; i < s.n; ++i)
        s.for_each_successor(i, [&](int j) {
          g->add_edge(ids[static_cast<std::size_t>(i)], ids[static_cast<std::size_t>(j)]);
        });
      break;
    }
  }
  if (g->size() != static_cast<std::size_t>(s.n) || g->edges().size() != s.edges()) {
    fail(std::string(s.name) + ": the builder made " + std::to_string(g->size()) + " nodes and " +
         std::to_string(g->edges().size()) + " edges, expected " + std::to_string(s.n) + " and " +
         std::to_string(s.edges()));
  }
  return g;
}

// ---- the raw work-DAG --------------------------------------------------------------

struct RawDag {
  weft::Crs<int> crs;
  weft::WorkGraphPolicy<int> policy;
};

std::unique_ptr<RawDag> build_raw(const Shape& s) {
  weft::Crs<int> crs;
  crs.row_map.reserve(static_cast<std::size_t>(s.n) + 1);
  crs.row_map.push_back(0);
  for (int i = 0; i < s.n; ++i) {
    s.for_each_successor(i, [&](int j) { crs.entries.push_back(j); });
    crs.row_map.push_back(static_cast<int>(crs.entries.size()));
  }
  weft::WorkGraphPolicy<int> policy(crs);
  return std::make_unique<RawDag>(RawDag{std::move(crs), std::move(policy)});
}

// ---- oneTBB's flow graph -------------------------------------------------------------

// While alive, glibc keeps freed memory for reuse instead of unmapping it.
class KeepFreedMemory {
 public:
  KeepFreedMemory() {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  }
  ~KeepFreedMemory() {
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);  // glibc's defaults
    mallopt(M_TRIM_THRESHOLD, 128 * 1024);
    malloc_trim(0);
  }
  KeepFreedMemory(const KeepFreedMemory&) = delete;
  KeepFreedMemory& operator=(const KeepFreedMemory&) = delete;
};

void run_shape(ShapeKind kind, const Options& opt, Reporter& out) {
  const KeepFreedMemory keep;
  const Shape s = make_shape(kind, opt);
  Probe probe("graph", s.n);
  Timings weft_graph, raw, tbb;
  {
    weft::Executor executor(weft::bench::cpu_only(opt.threads));
    weft::Graph warm_up;  // the executor's first run is not part of any measurement
    warm_up.emplace([] {});
    executor.run(warm_up).get();
    const auto run_raw = [&](RawDag& dag) {
      weft::parallel_for(executor, dag.policy, [&probe](int i) { probe(i); });
    };
    const auto run_graph = [&](weft::Graph& g) { executor.run(g).get(); };
    auto dag = build_and_run_once(
        s, "raw-workdag", opt, probe, raw, [&] { return build_raw(s); }, run_raw);
    auto graph = build_and_run_once(
        s, "weft", opt, probe, weft_graph, [&] { return build_graph(s, probe); }, run_graph);
    time_steady(
        s, opt, probe,
        {{"raw-workdag", [&] { run_raw(*dag); }, &raw}, {"weft", [&] { run_graph(*graph); }, &weft_graph}});
  }
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                              static_cast<std::size_t>(opt.threads));
    const auto run_tbb = [](weft::bench::TbbDag& dag) { dag.run(); };
    auto dag = build_and_run_once(
        s, "oneTBB", opt, probe, tbb, [&] { return std::make_unique<weft::bench::TbbDag>(s, probe); },
        run_tbb);
    time_steady(s, opt, probe, {{"oneTBB", [&] { run_tbb(*dag); }, &tbb}});
  }
  const std::string name = std::string("graph.") + s.name;
  const std::string params = s.params(opt.threads);
  const double ns = 1e9 / s.n;
  out.compare(name + ".build", params, "ns/node", {"weft", weft_graph.build * ns},
              {"oneTBB", tbb.build * ns});
  out.compare(name + ".build", params, "ns/node", {"weft", weft_graph.build * ns},
              {"raw-workdag", raw.build * ns});
  out.compare(name + ".first_run", params, "ns/node", {"weft", weft_graph.first_run * ns},
              {"oneTBB", tbb.first_run * ns});
  out.compare(name + ".run", params, "ns/node", {"weft", weft_graph.run * ns}, {"raw-workdag", raw.run * ns});
  out.compare(name + ".run", params, "ns/node", {"weft", weft_graph.run * ns}, {"oneTBB", tbb.run * ns});
  const double per_node = 1.0 / s.n;
  out.compare(name + ".heap_built", params, "B/node", {"weft", weft_graph.heap_built * per_node},
              {"oneTBB", tbb.heap_built * per_node});
  out.compare(name + ".heap_first_run", params, "B/node", {"weft", weft_graph.heap_run * per_node},
              {"oneTBB", tbb.heap_run * per_node});
}

// ---- build and first run in a fresh process -------------------------------------------

// Each variant builds and runs a shape once in a process of its own
// (weft-bench started again, told what to do by WEFT_BENCH_FRESH_CHILD),
// so its memory comes from the kernel as a user's first graph's does.
// The runtimes are started first (a one-node graph each) and not timed.
constexpr const char* kFreshChild = "WEFT_BENCH_FRESH_CHILD";

[[noreturn]] void fresh_child(const std::string& what, const Options& opt) {
  const auto colon = what.find(':');
  const std::string variant = what.substr(0, colon);
  const Shape s = make_shape(static_cast<ShapeKind>(std::stoi(what.substr(colon + 1))), opt);
  Probe probe("graph_fresh_process", s.n);
  double seconds = 0;
  if (variant == "weft") {
    weft::Executor executor(weft::bench::cpu_only(opt.threads));
    weft::Graph warm_up;
    warm_up.emplace([] {});
    executor.run(warm_up).get();
    seconds = weft::bench::seconds([&] {
      auto graph = build_graph(s, probe);
      executor.run(*graph).get();
    });
  } else {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                              static_cast<std::size_t>(opt.threads));
    weft::bench::TbbDag(Shape{ShapeKind::independent, "warm-up", 1, 0, 0}, probe).run();
    probe.reset(false);
    seconds = weft::bench::seconds([&] { weft::bench::TbbDag(s, probe).run(); });
  }
  probe.check(s, variant.c_str(), 1);
  std::printf("fresh-seconds %.9f\n", seconds);
  std::fflush(stdout);
  std::exit(0);
}

double fresh_process_seconds(const char* variant, ShapeKind kind, const Options& opt) {
  // This program's path, which the shell popen() starts would see as its own.
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command = std::string(kFreshChild) + "=" + variant + ":" +
                              std::to_string(static_cast<int>(kind)) + " '" + self + "' --filter " +
                              "graph_fresh_process --threads " + std::to_string(opt.threads) +
                              (opt.quick ? " --quick" : "");
  std::FILE* child = popen(command.c_str(), "r");
  if (child == nullptr) fail("fresh_process: cannot start '" + command + "'");
  double seconds = -1;
  char line[256];
  while (std::fgets(line, sizeof line, child) != nullptr) std::sscanf(line, "fresh-seconds %lf", &seconds);
  if (pclose(child) != 0 || seconds < 0) fail("fresh_process: '" + command + "' failed");
  return seconds;
}

void run_fresh_processes(const Options& opt, Reporter& out) {
  if (const char* child = std::getenv(kFreshChild)) fresh_child(child, opt);
  for (const ShapeKind kind :
       {ShapeKind::chain, ShapeKind::independent, ShapeKind::tree, ShapeKind::wavefront}) {
    const Shape s = make_shape(kind, opt);
    double weft_s = std::numeric_limits<double>::infinity(), tbb_s = weft_s;
    for (int r = 0; r < std::max(1, opt.repetitions); ++r) {
      weft_s = std::min(weft_s, fresh_process_seconds("weft", kind, opt));
      tbb_s = std::min(tbb_s, fresh_process_seconds("oneTBB", kind, opt));
    }
    const double ns = 1e9 / s.n;
    out.compare(std::string("graph.") + s.name + ".fresh_build_and_first_run", s.params(opt.threads),
                "ns/node", {"weft", weft_s * ns}, {"oneTBB", tbb_s * ns});
  }
}

// ---- queued runs ---------------------------------------------------------------------

void run_queued(const Options& opt, Reporter& out) {
  const int runs = opt.quick ? 500 : 10'000;
  weft::Executor executor(weft::bench::cpu_only(opt.threads));
  std::atomic<long> visits{0};
  weft::Graph g;  // a root, eight nodes beside each other, a join
  g.emplace([&] { visits.fetch_add(1, std::memory_order_relaxed); });
  g.then([&] { visits.fetch_add(1, std::memory_order_relaxed); });
  for (int k = 0; k < 7; ++k) g.emplace([&] { visits.fetch_add(1, std::memory_order_relaxed); });
  g.then([&] { visits.fetch_add(1, std::memory_order_relaxed); });
  executor.run(g).get();  // lowered once, outside the timers
  const auto check = [&](long expected, const char* variant) {
    if (visits.load() != expected) {
      fail(std::string("queued_runs: ") + variant + " ran " + std::to_string(visits.load()) +
           " nodes, expected " + std::to_string(expected));
    }
  };
  double queued = std::numeric_limits<double>::infinity(), waited = queued;
  for (int r = 0; r < std::max(1, opt.repetitions); ++r) {
    visits = 0;
    waited = std::min(waited, weft::bench::seconds([&] {
                        for (int i = 0; i < runs; ++i) executor.run(g).get();
                      }));
    check(10L * runs, "one after another");
    visits = 0;
    std::vector<weft::Future<>> futures;
    futures.reserve(static_cast<std::size_t>(runs));
    queued = std::min(queued, weft::bench::seconds([&] {
                        for (int i = 0; i < runs; ++i) futures.push_back(executor.run(g));
                        executor.wait_for_all();
                      }));
    for (const weft::Future<>& f : futures) f.get();
    check(10L * runs, "queued");
  }
  out.compare("graph.queued_runs",
              "runs=" + std::to_string(runs) + " nodes=10 threads=" + std::to_string(opt.threads), "us/run",
              {"weft queued", queued * 1e6 / runs}, {"weft one by one", waited * 1e6 / runs});
}

}  // namespace

WEFT_BENCHMARK(graph_chain) { run_shape(ShapeKind::chain, opt, out); }
WEFT_BENCHMARK(graph_independent) { run_shape(ShapeKind::independent, opt, out); }
WEFT_BENCHMARK(graph_tree) { run_shape(ShapeKind::tree, opt, out); }
WEFT_BENCHMARK(graph_wavefront) { run_shape(ShapeKind::wavefront, opt, out); }
WEFT_BENCHMARK(graph_queued_runs) { run_queued(opt, out); }
WEFT_BENCHMARK(graph_fresh_process) { run_fresh_processes(opt, out); }

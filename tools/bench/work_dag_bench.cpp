// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Static work-DAGs: weft's WorkGraphPolicy against oneTBB's flow graph and
// OpenMP tasks with depend clauses, on three shapes:
//
//   chain        n jobs, job i after job i-1 (no parallelism: pure hand-off cost)
//   independent  n jobs, no edges (spawn and steal cost)
//   wavefront    side x side blocks, (r, c) after (r-1, c) and (r, c-1)
//
// For each shape: "build" (ns per node) times making the graph, weft's Crs plus
// policy against the flow graph's nodes and edges (OpenMP has no separate
// build), and "run" (ns per task) times executing it once it exists. Every
// task in every variant runs the same Probe, whose visit counts (and, in one
// untimed verification run per variant, sequence numbers) prove afterwards
// that each task ran exactly once and after its predecessors.
#include "bench.hpp"
#include "dag_probe.hpp"
#include "tbb_dag.hpp"

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

#include <omp.h>

#include <oneapi/tbb/global_control.h>

#include <weft/runtime/crs.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/executor_config.hpp>
#include <weft/runtime/work_graph_policy.hpp>

namespace {

using weft::bench::Options;
using weft::bench::Reporter;

// The tiny work of one task: nothing the compiler may delete (g++ drops an
// OpenMP task whose body is empty).
inline void task_body(int i) {
  weft::bench::do_not_optimize(i);
  weft::bench::clobber_memory();
}

enum class ShapeKind { chain, independent, wavefront };

struct Shape {
  ShapeKind kind;
  const char* name;
  int side = 0;  // wavefront only: side x side blocks, block (r, c) is node r * side + c
  int n = 0;     // nodes

  std::string params(int threads) const {
    const std::string size = kind == ShapeKind::wavefront ? std::to_string(side) + "x" + std::to_string(side)
                                                          : "n=" + std::to_string(n);
    return size + " threads=" + std::to_string(threads);
  }

  // Calls f(j) for every node j that executes after node i. weft's Crs and the
  // flow graph's edges are both made from this, so both builds do the same work.
  template <class F>
  void for_each_successor(int i, F&& f) const {
    switch (kind) {
      case ShapeKind::chain:
        if (i + 1 < n) f(i + 1);
        break;
      case ShapeKind::independent:
        break;
      case ShapeKind::wavefront:
        if (i / side + 1 < side) f(i + side);  // (r+1, c)
        if (i % side + 1 < side) f(i + 1);     // (r, c+1)
        break;
    }
  }
  bool is_root(int i) const { return kind == ShapeKind::independent || i == 0; }
};

Shape make_shape(ShapeKind kind, const Options& opt) {
  Shape s{kind, "", 0, 0};
  switch (kind) {
    case ShapeKind::chain:
      s.name = "chain";
      s.n = opt.quick ? 10'000 : 1'000'000;
      break;
    case ShapeKind::independent:
      s.name = "independent";
      s.n = opt.quick ? 10'000 : 1'000'000;
      break;
    case ShapeKind::wavefront:
      s.name = "wavefront";
      s.side = opt.quick ? 100 : 1024;
      s.n = s.side * s.side;
      break;
  }
  return s;
}

// What every task of every variant runs. Visits are counted in every run;
// the sequence number (one atomic counter shared by all tasks) is recorded
// only in the untimed verification run.
using Probe = weft::bench::DagProbe<Shape>;

// One verification run (which also warms up), then the best of the timed
// runs in seconds; checks both.
template <class Run>
double verify_and_time(const Shape& s, const char* variant, const Options& opt, Probe& probe, Run&& run) {
  probe.reset(true);
  run();
  probe.check(s, variant, 1);
  probe.reset(false);
  const double best = weft::bench::best_seconds(opt.repetitions, run);
  probe.check(s, variant, std::max(1, opt.repetitions));
  return best;
}

// The best of `repetitions` builds in seconds; each but the last result is
// destroyed outside the timer, the last is returned for the runs.
template <class Build>
auto best_build(int repetitions, double& best, Build&& build) {
  best = std::numeric_limits<double>::infinity();
  for (int r = 1;; ++r) {
    const auto start = std::chrono::steady_clock::now();
    auto built = build();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (r >= repetitions) return built;
  }
}

// ---- weft ------------------------------------------------------------------

weft::Crs<int> build_crs(const Shape& s) {
  weft::Crs<int> dag;
  dag.row_map.reserve(static_cast<std::size_t>(s.n) + 1);
  dag.entries.reserve(s.kind == ShapeKind::wavefront ? 2 * static_cast<std::size_t>(s.n)
                                                     : static_cast<std::size_t>(s.n));
  dag.row_map.push_back(0);
  for (int i = 0; i < s.n; ++i) {
    s.for_each_successor(i, [&](int j) { dag.entries.push_back(j); });
    dag.row_map.push_back(static_cast<int>(dag.entries.size()));
  }
  return dag;
}

struct WeftResult {
  double build_s, run_s;
};

WeftResult time_weft(const Shape& s, const Options& opt, Probe& probe) {
  weft::ExecutorConfig cfg;
  cfg.cpu_workers = opt.threads;
  weft::Executor executor(cfg);
  WeftResult r{};
  // Building = describing the DAG as a Crs + the policy (validation, cycle
  // check, join counters, jobs).
  auto built = best_build(opt.repetitions, r.build_s, [&] {
    weft::Crs<int> dag = build_crs(s);
    weft::WorkGraphPolicy<int> policy(dag);
    return std::pair(std::move(dag), std::move(policy));
  });
  const weft::WorkGraphPolicy<int>& policy = built.second;
  const auto body = [&probe](int i) { probe(i); };
  r.run_s = verify_and_time(s, "weft", opt, probe, [&] { weft::parallel_for(executor, policy, body); });
  return r;
}

// ---- oneTBB flow graph -----------------------------------------------------

struct TbbResult {
  double build_s, run_s;
};

TbbResult time_tbb(const Shape& s, const Options& opt, Probe& probe) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                            static_cast<std::size_t>(opt.threads));
  TbbResult r{};
  auto dag =
      best_build(opt.repetitions, r.build_s, [&] { return std::make_unique<weft::bench::TbbDag>(s, probe); });
  r.run_s = verify_and_time(s, "oneTBB", opt, probe, [&] { dag->run(); });
  return r;
}

// ---- OpenMP tasks ------------------------------------------------------------

// OpenMP has no graph to build ahead: one thread creates the tasks while the
// team runs them, so its run time includes task creation and dependence
// matching (inherent to the model) and the start of the parallel region.
void run_omp_chain(const Shape& s, Probe& probe) {
  // Only its address matters: every task is inout on it. (g++ 12 calls a
  // variable used only in depend clauses unused.)
  [[maybe_unused]] char token = 0;
#pragma omp parallel
#pragma omp single
  for (int i = 0; i < s.n; ++i) {
#pragma omp task firstprivate(i) depend(inout : token)
    probe(i);
  }
}

void run_omp_independent(const Shape& s, Probe& probe) {
#pragma omp parallel
#pragma omp single
  for (int i = 0; i < s.n; ++i) {
#pragma omp task firstprivate(i)
    probe(i);
  }
}

// cells: (side+1) x (side+1) dependence addresses; block (r, c) writes
// cell (r+1, c+1). Row 0 and column 0 are never written, so the first row
// and column of blocks depend on them as on finished work.
void run_omp_wavefront(const Shape& s, Probe& probe, std::vector<char>& cells) {
  const int side = s.side, stride = s.side + 1;
  [[maybe_unused]] char* cell = cells.data();  // used only in depend clauses
#pragma omp parallel
#pragma omp single
  for (int r = 0; r < side; ++r) {
    for (int c = 0; c < side; ++c) {
      const int id = r * side + c;
      const int me = (r + 1) * stride + (c + 1);
#pragma omp task firstprivate(id) depend(in : cell[me - stride], cell[me - 1]) depend(out : cell[me])
      probe(id);
    }
  }
}

double time_omp(const Shape& s, const Options& opt, Probe& probe) {
  omp_set_num_threads(opt.threads);
  std::vector<char> cells;
  if (s.kind == ShapeKind::wavefront) cells.assign(static_cast<std::size_t>(s.side + 1) * (s.side + 1), 0);
  return verify_and_time(s, "OpenMP", opt, probe, [&] {
    switch (s.kind) {
      case ShapeKind::chain:
        run_omp_chain(s, probe);
        break;
      case ShapeKind::independent:
        run_omp_independent(s, probe);
        break;
      case ShapeKind::wavefront:
        run_omp_wavefront(s, probe, cells);
        break;
    }
  });
}

// ---- the benchmark -----------------------------------------------------------

void run_shape(ShapeKind kind, const Options& opt, Reporter& out) {
  const Shape s = make_shape(kind, opt);
  Probe probe("work_dag", s.n);
  // One runtime at a time: each one's threads are gone or idle while the next runs.
  const WeftResult weft = time_weft(s, opt, probe);
  const TbbResult tbb = time_tbb(s, opt, probe);
  const double omp = time_omp(s, opt, probe);

  const std::string name = std::string("work_dag.") + s.name;
  const std::string params = s.params(opt.threads);
  const double ns_per = 1e9 / s.n;
  out.compare(name + ".build", params, "ns/node", {"weft", weft.build_s * ns_per},
              {"oneTBB", tbb.build_s * ns_per});
  out.compare(name + ".run", params, "ns/task", {"weft", weft.run_s * ns_per},
              {"oneTBB", tbb.run_s * ns_per});
  out.compare(name + ".run", params, "ns/task", {"weft", weft.run_s * ns_per}, {"OpenMP", omp * ns_per});
}

}  // namespace

WEFT_BENCHMARK(work_dag_chain) { run_shape(ShapeKind::chain, opt, out); }
WEFT_BENCHMARK(work_dag_independent) { run_shape(ShapeKind::independent, opt, out); }
WEFT_BENCHMARK(work_dag_wavefront) { run_shape(ShapeKind::wavefront, opt, out); }

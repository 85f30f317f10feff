// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What tracing costs: a 1M-node work-DAG chain and 1M independent nodes run
// with tracing off and with tracing on, in the same process. With tracing
// off a job checks one relaxed flag (once per chain of nodes it runs), so
// "off" should match the work_dag benchmark's figures; "on" shows the price
// of recording a span per node.
#include "bench.hpp"

#include <weft/runtime/work_graph_policy.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

weft::Crs<int> chain_or_independent(int n, bool chain) {
  weft::Crs<int> g;
  g.row_map.resize(static_cast<std::size_t>(n) + 1);
  for (int i = 0; i <= n; ++i) g.row_map[static_cast<std::size_t>(i)] = chain ? std::min(i, n - 1) : 0;
  if (chain) {
    for (int i = 0; i + 1 < n; ++i) g.entries.push_back(i + 1);
  }
  return g;
}

}  // namespace

WEFT_BENCHMARK(trace_overhead) {
  const int n = opt.quick ? 10'000 : 1'000'000;
  weft::ExecutorConfig cfg;
  cfg.cpu_workers = opt.threads;
  cfg.gpu_workers = 0;
  weft::Executor executor(cfg);
  for (bool chain : {true, false}) {
    weft::WorkGraphPolicy<int> policy(chain_or_independent(n, chain));
    std::vector<int> ran(static_cast<std::size_t>(n), 0);
    auto body = [&](int i) {
      ran[static_cast<std::size_t>(i)] += 1;
      weft::bench::clobber_memory();
    };
    weft::parallel_for(executor, policy, body);  // warm-up
    const double off =
        weft::bench::best_seconds(opt.repetitions, [&] { weft::parallel_for(executor, policy, body); });
    double on = 0;
    on = weft::bench::best_seconds(opt.repetitions, [&] {
      executor.start_trace();  // fresh buffers each repetition
      weft::parallel_for(executor, policy, body);
    });
    executor.stop_trace();
    std::size_t events = 0;
    for (const auto& worker : executor.tracer().events()) events += worker.size();
    if (events != static_cast<std::size_t>(n)) {
      std::fprintf(stderr, "trace_overhead: expected %d events, recorded %zu\n", n, events);
      std::exit(1);
    }
    const int runs = 1 + 2 * std::max(1, opt.repetitions);  // warm-up, off, on
    for (int count : ran) {
      if (count != runs) {
        std::fprintf(stderr, "trace_overhead: a node ran %d times instead of %d\n", count, runs);
        std::exit(1);
      }
    }
    // off / on: the nearer 1, the less tracing costs (tools/bench/budgets.json holds it to a minimum).
    const std::string params = std::string(chain ? "chain" : "independent") + " n=" + std::to_string(n) +
                               " threads=" + std::to_string(opt.threads) + " higher=better";
    out.compare("trace.run", params, "ns/node", {"trace-off", off * 1e9 / n}, {"trace-on", on * 1e9 / n});
  }
}

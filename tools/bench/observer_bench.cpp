// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What an attached observer costs: a 1M-node work-DAG chain and 1M
// independent nodes, run with no observer and with one that only counts
// node ends, in the same process. (What no observer costs against a build
// without observers is the work_dag and task_dag benchmarks' business:
// docs/observers.md.)
#include "bench.hpp"

#include <weft/runtime/observer.hpp>
#include <weft/runtime/work_graph_policy.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
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

// The cheapest observer that still does something per node: a count per
// worker, each on its own cache line.
struct EndCounter : weft::Observer {
  struct alignas(64) Slot {
    std::atomic<long> ends{0};
  };
  explicit EndCounter(int workers) : slots(static_cast<std::size_t>(workers)) {}
  void on_node_end(const weft::NodeEvent& e) noexcept override {
    // relaxed: only this worker writes its slot; read once the runs ended.
    slots[static_cast<std::size_t>(e.worker)].ends.fetch_add(1, std::memory_order_relaxed);
  }
  long total() const {
    long sum = 0;
    for (const Slot& s : slots) sum += s.ends.load(std::memory_order_relaxed);
    return sum;
  }
  std::vector<Slot> slots;
};

}  // namespace

WEFT_BENCHMARK(observer_overhead) {
  const int n = opt.quick ? 10'000 : 1'000'000;
  weft::Executor executor(weft::bench::cpu_only(opt.threads));
  for (bool chain : {true, false}) {
    weft::WorkGraphPolicy<int> policy(chain_or_independent(n, chain));
    auto body = [](int) { weft::bench::clobber_memory(); };
    weft::parallel_for(executor, policy, body);  // warm-up
    const double off =
        weft::bench::best_seconds(opt.repetitions, [&] { weft::parallel_for(executor, policy, body); });
    auto counter = std::make_shared<EndCounter>(executor.worker_count());
    executor.attach(counter);
    const double on =
        weft::bench::best_seconds(opt.repetitions, [&] { weft::parallel_for(executor, policy, body); });
    executor.detach(counter);
    const long expected = static_cast<long>(n) * std::max(1, opt.repetitions);
    if (counter->total() != expected) {
      std::fprintf(stderr, "observer_overhead: expected %ld node ends, saw %ld\n", expected,
                   counter->total());
      std::exit(1);
    }
    const std::string params = std::string(chain ? "chain" : "independent") + " n=" + std::to_string(n) +
                               " threads=" + std::to_string(opt.threads);
    out.compare("observer.run", params, "ns/node", {"observed", on * 1e9 / n}, {"unobserved", off * 1e9 / n});
  }
}

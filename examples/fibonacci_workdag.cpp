// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Naive Fibonacci as a static work-DAG (Kokkos report, Figure 3.6): one work
// item per call of fib(k), each executing after the two items that compute
// fib(k-1) and fib(k-2). The DAG is built as "who must run after whom" and
// transposed to find each item's inputs.
//
//   fibonacci_workdag [n] [--workers N]      (default n = 25)
#include <weft/weft.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_support.hpp"

namespace {

struct FibDag {
  weft::Crs<int> after;   // row i: the item that needs fib(input[i]) (its parent)
  weft::Crs<int> inputs;  // row i: the items whose results item i adds up
  std::vector<long> input;
};

// Item 0 computes fib(n); an item for k >= 2 spawns items for k-1 and k-2.
FibDag build(long n) {
  FibDag dag;
  std::vector<int> parent;
  dag.input.push_back(n);
  parent.push_back(-1);
  for (std::size_t i = 0; i < dag.input.size(); ++i) {
    const long k = dag.input[i];
    if (k < 2) continue;
    for (long child : {k - 1, k - 2}) {
      dag.input.push_back(child);
      parent.push_back(static_cast<int>(i));
    }
  }
  const int items = static_cast<int>(dag.input.size());
  dag.after.row_map.push_back(0);
  for (int i = 0; i < items; ++i) {
    if (parent[static_cast<std::size_t>(i)] >= 0)
      dag.after.entries.push_back(parent[static_cast<std::size_t>(i)]);
    dag.after.row_map.push_back(static_cast<int>(dag.after.entries.size()));
  }
  weft::transpose_crs(dag.inputs, dag.after);
  return dag;
}

long serial_fib(long n) { return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2); }

int example_main(int argc, char** argv) {
  long n = 25;
  weft::ExecutorConfig config;
  CLI::App app("fibonacci_workdag: naive Fibonacci as weft's static work-DAG, one work item per call",
               "fibonacci_workdag");
  app.add_option("n", n, "which Fibonacci number")
      ->transform(weft::examples::whole_number<long>(0, 32))
      ->capture_default_str();
  app.add_option("--workers", config.cpu_workers, "CPU worker threads (default: the machine's cores)")
      ->transform(weft::examples::whole_number<int>(1, weft::examples::kMaxThreads));
  if (const auto code = weft::examples::parse(app, argc, argv)) return *code;

  const auto t0 = std::chrono::steady_clock::now();
  FibDag dag = build(n);
  weft::WorkGraphPolicy<int> policy(dag.after);
  const auto t1 = std::chrono::steady_clock::now();

  std::vector<long> value(dag.input.size());
  weft::Executor executor(config);
  weft::parallel_for(executor, policy, [&](int i) {
    const int k = dag.inputs.row_begin(i);
    value[static_cast<std::size_t>(i)] = dag.inputs.row_end(i) == k
                                             ? dag.input[static_cast<std::size_t>(i)]
                                             : value[static_cast<std::size_t>(dag.inputs.entries[k])] +
                                                   value[static_cast<std::size_t>(dag.inputs.entries[k + 1])];
  });
  const auto t2 = std::chrono::steady_clock::now();

  const long expected = serial_fib(n);
  const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf("fib(%ld) = %ld (serial check: %s)\n", n, value[0], value[0] == expected ? "ok" : "MISMATCH");
  std::printf(
      "work items: %d, roots: %d; DAG built in %.2f ms, run in %.2f ms (%.1f ns per item) on %d workers\n",
      policy.num_nodes(), policy.num_roots(), ms(t0, t1), ms(t1, t2), ms(t1, t2) * 1e6 / policy.num_nodes(),
      executor.worker_count());
  for (const weft::WorkerStats& s : executor.stats()) {
    std::printf("  worker %d (%s): %llu jobs, %llu steals, %llu sleeps\n", s.worker,
                weft::to_string(s.domain), s.jobs_run, s.steals, s.sleeps);
  }
  return value[0] == expected ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return weft::examples::run_main("fibonacci_workdag", [&] { return example_main(argc, argv); });
}

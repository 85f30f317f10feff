// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The shared harness of weft's benchmarks: one program, `weft-bench`, holds
// every benchmark; each compares weft with a baseline run in the same process
// and reports the ratio weft / baseline (lower is better for times).
//
//   WEFT_BENCHMARK(my_bench) {                 // (const Options& opt, Reporter& out)
//     const int n = opt.quick ? 1000 : 1000000;
//     double weft_ns = ..., tbb_ns = ...;
//     out.compare("my_bench", "n=" + std::to_string(n), "ns/task",
//                 {"weft", weft_ns}, {"oneTBB", tbb_ns});
//   }
#pragma once

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>
#include <vector>

#include <weft/runtime/executor_config.hpp>

namespace weft::bench {

// An executor of `threads` CPU workers and nothing else: what every CPU
// benchmark races against its baseline with.
inline ExecutorConfig cpu_only(int threads) { return ExecutorConfig::cpu_only(threads); }

struct Options {
  bool quick = false;   // small sizes: every benchmark runs in seconds (CI)
  int threads = 2;      // worker threads for weft and for every baseline
  int repetitions = 5;  // timed repetitions; the best is reported
};

struct Measurement {
  std::string name;  // "weft", "oneTBB", "OpenMP", "glibc", ...
  double value = 0;
};

struct Record {
  std::string benchmark, params, variant;
  double value = 0;
  std::string unit, baseline;
  double baseline_value = 0;
  double ratio = 0;
};

class Reporter {
 public:
  // Records weft's figure against one baseline and prints a table row.
  void compare(const std::string& benchmark, const std::string& params, const std::string& unit,
               const Measurement& weft, const Measurement& baseline);
  const std::vector<Record>& records() const noexcept { return records_; }
  void write_json(const std::string& path) const;

 private:
  std::vector<Record> records_;
};

using BenchmarkFn = void (*)(const Options&, Reporter&);

struct Registration {
  Registration(const char* name, BenchmarkFn fn);
};

#define WEFT_BENCHMARK(name)                                                                 \
  static void weft_bench_##name(const ::weft::bench::Options&, ::weft::bench::Reporter&);    \
  static const ::weft::bench::Registration weft_bench_reg_##name(#name, &weft_bench_##name); \
  static void weft_bench_##name(const ::weft::bench::Options& opt, ::weft::bench::Reporter& out)

// Wall-clock seconds of one call of f.
template <class F>
double seconds(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The fastest of `repetitions` calls, in seconds: the least disturbed by
// whatever else the machine is doing.
template <class F>
double best_seconds(int repetitions, F&& f) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < std::max(1, repetitions); ++r) best = std::min(best, seconds(f));
  return best;
}

// Keeps the compiler from deleting work whose result is unused.
template <class T>
inline void do_not_optimize(T const& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}
inline void clobber_memory() { asm volatile("" : : : "memory"); }

}  // namespace weft::bench

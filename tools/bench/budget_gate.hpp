// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The benchmark budget gate: a committed file of budgets (tools/bench/budgets.json,
// docs/benchmarks.md) bounds the ratio of the rows they name, and a run fails
// when a row's ratio misses its budget by more than the margin. A benchmark
// with a missed row runs again, up to kMaxRuns runs in all, and each row is
// judged by its best ratio.
//
//   const BudgetFile file = read_budgets("tools/bench/budgets.json");
//   check_registered(file, {"graph_chain", "views_saxpy"});  // throws on a budget for no benchmark
//   const GateResult result = gate(file, runs, [&](const std::string& name, int run) {
//     return rows_of_another_run_of(name);
//   });
//   for (const std::string& failure : result.failures) ...   // empty: every budget kept
#pragma once

#include "bench.hpp"
#include "usage_error.hpp"

#include <functional>
#include <string>
#include <vector>

namespace weft::bench {

// How many times the gate runs a benchmark at most: once, then twice more
// while one of its rows misses.
inline constexpr int kMaxRuns = 3;

// A budget file that cannot be read or says something impossible: weft-bench
// reports it before any benchmark runs and exits 2.
struct BudgetError : weft::examples::UsageError {
  using UsageError::UsageError;
};

// A bound on the ratio (weft / baseline) of the rows it matches.
struct Budget {
  std::string registered;  // the benchmark that prints the rows, as `weft-bench --list` names it
  std::string benchmark, variant, baseline;  // the rows' identity, as in the table and --json
  std::string params_contains;               // when not empty, a row's params must contain it
  double max_ratio = 0;                      // > 0: lower is better; a row misses above max_ratio * margin
  double min_ratio = 0;                      // > 0: higher is better; a row misses below min_ratio / margin
  double margin = 0;                         // the file's margin unless the budget gives its own
  bool gpu = false;  // its benchmark exists only in CUDA builds, and has rows only on a GPU
  std::string why;
};

struct BudgetFile {
  std::string source;  // the file's name, for messages
  double margin = 0;   // every budget's margin unless it gives its own
  std::vector<Budget> budgets;
};

// Throws BudgetError naming the file, the budget and the field at fault.
BudgetFile parse_budgets(const std::string& text, const std::string& source);
BudgetFile read_budgets(const std::string& path);

// Throws BudgetError when a budget names a benchmark that `registered` lacks,
// unless it is a GPU budget (a build without CUDA has no GPU benchmarks): a
// renamed benchmark must not lose its gate without a word.
void check_registered(const BudgetFile& file, const std::vector<std::string>& registered);

bool matches(const Budget& budget, const Record& row);
// The ratio past which a row misses: max_ratio * margin, or min_ratio / margin.
double limit(const Budget& budget);
// Whether a ratio misses the budget; a ratio that is not a positive number
// (a baseline that measured nothing) always does.
bool misses(const Budget& budget, double ratio);

// One row held to one budget; `runs` is how many runs of its benchmark it is
// the best of.
struct Check {
  const Budget* budget = nullptr;
  Record row;
  std::size_t occurrence = 0;  // earlier rows of its run with the same identity
  int runs = 1;
};

// "graph_chain.build [chain n=1000 threads=2] weft / oneTBB"
std::string describe_row(const Record& row);
// "ratio 0.231 <= 0.75 (max_ratio 0.5 x margin 1.5)", with "best of 3 runs"
// when the benchmark ran more than once.
std::string describe_check(const Check& check);

// The rows one benchmark printed in one run.
struct BenchmarkRun {
  std::string name;
  std::vector<Record> rows;
};

// Runs a benchmark again (`run`: 2, then 3) and returns its rows.
using RunAgain = std::function<std::vector<Record>(const std::string& name, int run)>;

struct GateResult {
  std::vector<Check> checks;          // every row held to a budget, missed or not
  std::vector<std::string> failures;  // one line each: a miss, or a budget that matched no row
  std::size_t budgets_not_run = 0;    // budgets whose benchmark did not run (--filter, no GPU)
};

// Holds the rows of every run to the budgets of its benchmark. A benchmark
// with a missed row runs again (run_again) until it has run kMaxRuns times or
// no row misses, and each row keeps its best ratio. A budget that matches no
// row of its benchmark's run fails, except a GPU budget whose benchmark
// printed no row at all (no GPU here).
GateResult gate(const BudgetFile& file, const std::vector<BenchmarkRun>& runs, const RunAgain& run_again);

}  // namespace weft::bench

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// weft-bench: runs the registered benchmarks and prints one table.
//   weft-bench [--quick] [--threads N] [--filter SUBSTRING] [--json FILE]
//              [--budgets FILE] [--list]
// --help gives each option's default; --list honours --filter. --budgets
// holds every row that ran to the budgets of that file (budget_gate.hpp,
// docs/benchmarks.md); CI runs `--quick --budgets tools/bench/budgets.json`.
// Exit codes: 0 success, 1 a benchmark, the JSON output or a budget failed,
// 2 usage error (a bad budgets file among them). The --json file and the
// budgets file are checked before the first benchmark runs.
#include "bench.hpp"
#include "budget_gate.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// The examples' argument checks and checked output files (header-only).
#include "cli_support.hpp"
#include "output_file.hpp"

namespace weft::bench {
namespace {

// Every benchmark by name, filled by WEFT_BENCHMARK's registrations.
std::map<std::string, BenchmarkFn>& registry() {
  static std::map<std::string, BenchmarkFn> all;
  return all;
}

}  // namespace

Registration::Registration(const char* name, BenchmarkFn fn) { registry()[name] = fn; }

void Reporter::compare(const std::string& benchmark, const std::string& params, const std::string& unit,
                       const Measurement& weft, const Measurement& baseline) {
  Record r{benchmark, params,        weft.name,      weft.value,
           unit,      baseline.name, baseline.value, baseline.value > 0 ? weft.value / baseline.value : 0.0};
  std::printf("%-28s %-26s %-10s %12.2f %-9s %-10s %12.2f %7.3f\n", r.benchmark.c_str(), r.params.c_str(),
              r.variant.c_str(), r.value, r.unit.c_str(), r.baseline.c_str(), r.baseline_value, r.ratio);
  std::fflush(stdout);
  records_.push_back(std::move(r));
}

void Reporter::write_json(const std::string& path) const {
  nlohmann::json out = nlohmann::json::array();
  for (const Record& r : records_) {
    out.push_back({{"benchmark", r.benchmark},
                   {"params", r.params},
                   {"variant", r.variant},
                   {"value", r.value},
                   {"unit", r.unit},
                   {"baseline", r.baseline},
                   {"baseline_value", r.baseline_value},
                   {"ratio", r.ratio}});
  }
  weft::examples::write_file(path, out.dump(2) + '\n');  // throws OutputError naming the file
}

}  // namespace weft::bench

namespace {

using namespace weft::bench;

// --filter's rule, shared by --list and the run: an empty filter selects every benchmark.
bool selected(const std::string& name, const std::string& filter) {
  return filter.empty() || name.find(filter) != std::string::npos;
}

std::vector<std::string> registered_names() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : registry()) names.push_back(name);
  return names;
}

// Runs each chosen benchmark once, printing the table; returns each one's rows.
std::vector<BenchmarkRun> run_all(const std::vector<std::string>& chosen, const Options& opt,
                                  Reporter& reporter) {
  std::printf("%-28s %-26s %-10s %12s %-9s %-10s %12s %7s\n", "benchmark", "params", "variant", "value",
              "unit", "baseline", "value", "ratio");
  std::vector<BenchmarkRun> runs;
  for (const std::string& name : chosen) {
    const std::size_t first = reporter.records().size();
    registry().at(name)(opt, reporter);
    const auto& all = reporter.records();
    runs.push_back({name, {all.begin() + static_cast<std::ptrdiff_t>(first), all.end()}});
  }
  return runs;
}

// One line per row held to a budget, and how many budgets were not checked.
void print_checks(const GateResult& result) {
  for (const Check& c : result.checks) {
    std::printf("gate: %-4s %s: %s\n", misses(*c.budget, c.row.ratio) ? "MISS" : "ok",
                describe_row(c.row).c_str(), describe_check(c).c_str());
  }
  std::printf(
      "gate: rows held to budgets: %zu; budgets not checked here: %zu (their benchmark did not run, "
      "or prints rows only on a GPU)\n",
      result.checks.size(), result.budgets_not_run);
}

// Holds the rows to the budgets: the checks on stdout, the failures on
// stderr. Returns the exit code.
int run_gate(const BudgetFile& file, const std::vector<BenchmarkRun>& runs, const Options& opt) {
  std::printf(
      "\ngate: budgets from %s, margin %g unless a budget gives its own; a benchmark with a missed row "
      "runs again, up to %d runs in all, and each row is judged by its best ratio\n",
      file.source.c_str(), file.margin, kMaxRuns);
  const GateResult result = gate(file, runs, [&opt](const std::string& name, int run) {
    std::printf("gate: %s missed a budget; running it again (run %d of at most %d)\n", name.c_str(), run,
                kMaxRuns);
    Reporter again;
    registry().at(name)(opt, again);
    return again.records();
  });
  print_checks(result);
  if (result.failures.empty()) {
    std::printf("gate: every budget kept\n");
    return weft::examples::kExitOk;
  }
  std::fflush(stdout);
  for (const std::string& failure : result.failures)
    std::fprintf(stderr, "weft-bench: %s\n", failure.c_str());
  std::fprintf(
      stderr,
      "weft-bench: budget failures: %zu (%s); docs/benchmarks.md says when and how a budget may move\n",
      result.failures.size(), file.source.c_str());
  return weft::examples::kExitFailed;
}

int bench_main(int argc, char** argv) {
  Options opt;
  std::string filter, json_path, budgets_path;
  bool list = false;
  CLI::App app("weft-bench: weft's benchmarks, each against a baseline in the same run", "weft-bench");
  app.add_flag("--quick", opt.quick,
               "small sizes and 2 repetitions, so every benchmark runs in seconds (CI) "
               "(default: off: full sizes, best of " +
                   std::to_string(opt.repetitions) + " repetitions)");
  app.add_option(
         "--threads", opt.threads,
         "worker threads for weft and for every baseline (default: " + std::to_string(opt.threads) + ")")
      ->transform(weft::examples::whole_number<int>(1, weft::examples::kMaxThreads));
  app.add_option("--filter", filter,
                 "run only the benchmarks whose name contains this text; with --list, list only them "
                 "(default: every benchmark)")
      ->type_name("SUBSTRING");
  app.add_option("--json", json_path,
                 "also write the table as JSON to this file, checked before the first benchmark runs "
                 "(default: none, the table only)")
      ->type_name("FILE");
  app.add_option("--budgets", budgets_path,
                 "after the run, hold every row to the budgets of this file (tools/bench/budgets.json): "
                 "a row that misses its budget by more than the margin, judged by the best of up to " +
                     std::to_string(kMaxRuns) +
                     " runs of its benchmark, fails the run; the file is checked before the first "
                     "benchmark runs (default: none, no gate)")
      ->type_name("FILE");
  app.add_flag("--list", list,
               "print the names of the benchmarks that would run, one a line, and exit (default: off)");
  app.footer(
      "Exit codes: 0 success; 1 a benchmark or the JSON output failed, or a row missed its budget; 2 usage "
      "error (an unknown option, a bad number, a --filter that matches no benchmark, a budgets file that "
      "cannot be read, is malformed or names a benchmark that does not exist). docs/benchmarks.md describes "
      "the budgets.");
  if (const auto code = weft::examples::parse(app, argc, argv)) return *code;
  if (opt.quick) opt.repetitions = 2;
  std::vector<std::string> chosen;
  for (const std::string& name : registered_names())
    if (selected(name, filter)) chosen.push_back(name);
  if (chosen.empty())
    throw weft::examples::UsageError("no benchmark matches '" + filter +
                                     "' (--list without --filter names them all)");
  std::optional<BudgetFile> budgets;
  if (!budgets_path.empty()) {
    budgets = read_budgets(budgets_path);  // throws BudgetError: exit 2
    check_registered(*budgets, registered_names());
  }
  if (list) {
    for (const std::string& name : chosen) std::printf("%s\n", name.c_str());
    return weft::examples::kExitOk;
  }
  if (!json_path.empty()) weft::examples::check_writable(json_path);

  Reporter reporter;
  const std::vector<BenchmarkRun> runs = run_all(chosen, opt, reporter);
  if (!json_path.empty()) reporter.write_json(json_path);
  return budgets ? run_gate(*budgets, runs, opt) : weft::examples::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return weft::examples::run_main("weft-bench", [&] { return bench_main(argc, argv); });
}

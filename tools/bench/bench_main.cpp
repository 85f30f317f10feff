// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// weft-bench: runs the registered benchmarks and prints one table.
//   weft-bench [--quick] [--threads N] [--filter SUBSTRING] [--json FILE] [--list]
// --help gives each option's default; --list honours --filter.
// Exit codes: 0 success, 1 a benchmark or the JSON output failed, 2 usage
// error. The --json file is checked before the first benchmark runs.
#include "bench.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// The examples' argument checks and checked output files (header-only).
#include "cli_support.hpp"
#include "output_file.hpp"

namespace weft::bench {
namespace {

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

// --filter's rule, shared by --list and the run: an empty filter selects every benchmark.
bool selected(const std::string& name, const std::string& filter) {
  return filter.empty() || name.find(filter) != std::string::npos;
}

int bench_main(int argc, char** argv) {
  using namespace weft::bench;
  Options opt;
  std::string filter, json_path;
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
  app.add_flag("--list", list,
               "print the names of the benchmarks that would run, one a line, and exit (default: off)");
  app.footer(
      "Exit codes: 0 success; 1 a benchmark or the JSON output failed; 2 usage error (an unknown option, a "
      "bad number, a --filter that matches no benchmark).");
  if (const auto code = weft::examples::parse(app, argc, argv)) return *code;
  if (opt.quick) opt.repetitions = 2;
  std::vector<std::string> chosen;
  for (const auto& [name, fn] : registry())
    if (selected(name, filter)) chosen.push_back(name);
  if (chosen.empty())
    throw weft::examples::UsageError("no benchmark matches '" + filter +
                                     "' (--list without --filter names them all)");
  if (list) {
    for (const std::string& name : chosen) std::printf("%s\n", name.c_str());
    return weft::examples::kExitOk;
  }
  if (!json_path.empty()) weft::examples::check_writable(json_path);

  std::printf("%-28s %-26s %-10s %12s %-9s %-10s %12s %7s\n", "benchmark", "params", "variant", "value",
              "unit", "baseline", "value", "ratio");
  Reporter reporter;
  for (const std::string& name : chosen) registry().at(name)(opt, reporter);
  if (!json_path.empty()) reporter.write_json(json_path);
  return weft::examples::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return weft::examples::run_main("weft-bench", [&] { return bench_main(argc, argv); });
}

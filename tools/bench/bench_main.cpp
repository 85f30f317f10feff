// weft-bench: runs the registered benchmarks and prints one table.
//   weft-bench [--quick] [--threads N] [--filter SUBSTRING] [--json FILE] [--list]
#include "bench.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

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
  std::ofstream file(path);
  if (!file) throw std::runtime_error("cannot write benchmark JSON to '" + path + "'");
  file << out.dump(2) << '\n';
}

}  // namespace weft::bench

int main(int argc, char** argv) {
  using namespace weft::bench;
  Options opt;
  std::string filter, json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "weft-bench: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--quick") {
      opt.quick = true;
      opt.repetitions = 2;
    } else if (arg == "--threads") {
      opt.threads = std::atoi(value().c_str());
      if (opt.threads < 1) {
        std::cerr << "weft-bench: --threads must be at least 1\n";
        return 2;
      }
    } else if (arg == "--filter") {
      filter = value();
    } else if (arg == "--json") {
      json_path = value();
    } else if (arg == "--list") {
      for (const auto& [name, fn] : registry()) std::cout << name << '\n';
      return 0;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << "usage: weft-bench [--quick] [--threads N] [--filter SUBSTRING] [--json FILE] [--list]\n";
      return 0;
    } else {
      std::cerr << "weft-bench: unknown argument '" << arg << "' (try --help)\n";
      return 2;
    }
  }
  std::printf("%-28s %-26s %-10s %12s %-9s %-10s %12s %7s\n", "benchmark", "params", "variant", "value",
              "unit", "baseline", "value", "ratio");
  Reporter reporter;
  int ran = 0;
  for (const auto& [name, fn] : registry()) {
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    fn(opt, reporter);
    ++ran;
  }
  if (ran == 0) {
    std::cerr << "weft-bench: no benchmark matches '" << filter << "'\n";
    return 2;
  }
  if (!json_path.empty()) reporter.write_json(json_path);
  return 0;
}

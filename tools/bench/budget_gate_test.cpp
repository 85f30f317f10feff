// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The budget gate's rules on made-up rows: no benchmark runs here.
#include "budget_gate.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

using namespace weft::bench;

namespace {

Record row(std::string benchmark, std::string params, double ratio, std::string variant = "weft",
           std::string baseline = "oneTBB") {
  return {std::move(benchmark),
          std::move(params),
          std::move(variant),
          ratio,
          "ns/node",
          std::move(baseline),
          1.0,
          ratio};
}

// A file of one margin (1.5) and the given budgets, each an object's fields.
BudgetFile file(const std::string& budgets) {
  return parse_budgets(R"({"margin": 1.5, "why": "noise on 2 cores", "budgets": [)" + budgets + "]}",
                       "test.json");
}

const char* kChainBuild =
    R"({"registered": "graph_chain", "benchmark": "graph_chain.build", "variant": "weft",
        "baseline": "oneTBB", "max_ratio": 0.5, "why": "docs/graphs.md"})";
const char* kTriad =
    R"({"registered": "views_triad", "benchmark": "views_triad", "variant": "weft",
        "baseline": "memcpy", "min_ratio": 0.85, "why": "docs/tensors.md"})";

// A gate that must not run anything again.
std::vector<Record> never(const std::string& name, int) {
  FAIL("ran " << name << " again");
  return {};
}

}  // namespace

TEST_CASE("BudgetGate.a_row_within_budget_times_margin_passes") {
  const BudgetFile f = file(kChainBuild);
  const GateResult r = gate(f, {{"graph_chain", {row("graph_chain.build", "chain n=1000", 0.74)}}}, never);
  CHECK(r.failures.empty());
  REQUIRE(r.checks.size() == 1);
  CHECK(describe_check(r.checks[0]) == "ratio 0.74 <= 0.75 (max_ratio 0.5 x margin 1.5)");
}

TEST_CASE("BudgetGate.a_missed_row_runs_again_and_is_judged_by_its_best_ratio") {
  const BudgetFile f = file(kChainBuild);
  std::vector<int> runs;
  const GateResult r = gate(f, {{"graph_chain", {row("graph_chain.build", "chain n=1000", 0.9)}}},
                            [&](const std::string&, int run) {
                              runs.push_back(run);
                              return std::vector<Record>{row("graph_chain.build", "chain n=1000", 0.6)};
                            });
  CHECK(runs == std::vector<int>{2});
  CHECK(r.failures.empty());
  CHECK(describe_check(r.checks.at(0)) == "ratio 0.6 (best of 2 runs) <= 0.75 (max_ratio 0.5 x margin 1.5)");
}

TEST_CASE("BudgetGate.a_row_that_misses_every_run_fails_naming_row_ratio_budget_and_margin") {
  const BudgetFile f = file(kChainBuild);
  std::vector<int> runs;
  const GateResult r =
      gate(f, {{"graph_chain", {row("graph_chain.build", "chain n=1000", 1.1)}}},
           [&](const std::string&, int run) {
             runs.push_back(run);
             return std::vector<Record>{row("graph_chain.build", "chain n=1000", 1.0 + run / 10.0)};
           });
  CHECK(runs == std::vector<int>{2, 3});
  REQUIRE(r.failures.size() == 1);
  CHECK(r.failures[0] ==
        "budget missed: graph_chain.build [chain n=1000] weft / oneTBB: ratio 1.1 (best of 3 runs) > 0.75 "
        "(max_ratio 0.5 x margin 1.5)");
}

TEST_CASE("BudgetGate.higher_is_better_rows_miss_below_min_ratio_over_margin") {
  const BudgetFile f = file(kTriad);
  const auto judge = [&](double ratio) {
    return gate(
        f,
        {{"views_triad", {row("views_triad", "n=2^20 higher=better goal>=0.85", ratio, "weft", "memcpy")}}},
        [&](const std::string&, int) {
          return std::vector<Record>{
              row("views_triad", "n=2^20 higher=better goal>=0.85", ratio, "weft", "memcpy")};
        });
  };
  CHECK(judge(0.57).failures.empty());  // 0.85 / 1.5 = 0.567
  CHECK(judge(0.56).failures.size() == 1);
  CHECK(judge(0.56).failures[0].find("ratio 0.56 (best of 3 runs) < 0.5667 (min_ratio 0.85 / margin 1.5)") !=
        std::string::npos);
}

TEST_CASE("BudgetGate.a_budget_holds_every_row_it_matches_and_params_contains_narrows_it") {
  const BudgetFile f = file(
      R"({"registered": "memory_pool", "benchmark": "memory_pool.batch1000", "variant": "weft",
          "baseline": "glibc", "max_ratio": 1, "why": "w"},
         {"registered": "memory_pool", "benchmark": "memory_pool.batch1000", "variant": "weft",
          "baseline": "glibc", "params_contains": "sb=256KiB", "max_ratio": 0.2, "why": "w"})");
  const std::vector<Record> rows{
      row("memory_pool.batch1000", "size=64 threads=1", 0.5, "weft", "glibc"),
      row("memory_pool.batch1000", "size=64 threads=1 sb=256KiB", 0.25, "weft", "glibc"),
      row("memory_pool.pair", "size=64 threads=1", 9, "weft", "glibc")};
  const GateResult r = gate(f, {{"memory_pool", rows}}, never);
  CHECK(r.checks.size() == 3);  // the first budget holds both batch rows, the second one
  CHECK(r.failures.empty());
}

TEST_CASE("BudgetGate.repeated_rows_are_matched_to_their_own_rerun") {
  const BudgetFile f = file(kChainBuild);
  const std::vector<Record> first{row("graph_chain.build", "n=1", 0.5), row("graph_chain.build", "n=1", 0.9)};
  const GateResult r = gate(f, {{"graph_chain", first}}, [](const std::string&, int) {
    return std::vector<Record>{row("graph_chain.build", "n=1", 2.0), row("graph_chain.build", "n=1", 0.7)};
  });
  CHECK(r.failures.empty());
  CHECK(r.checks.at(0).row.ratio == 0.5);  // the rerun's 2.0 belongs to this row and is worse
  CHECK(r.checks.at(1).row.ratio == 0.7);
}

TEST_CASE("BudgetGate.a_budget_matching_no_row_of_its_benchmark_fails_but_not_when_it_did_not_run") {
  const BudgetFile f = file(kChainBuild);
  const GateResult renamed = gate(f, {{"graph_chain", {row("graph_chain.built", "n=1", 0.1)}}}, never);
  REQUIRE(renamed.failures.size() == 1);
  CHECK(renamed.failures[0] ==
        "budget for graph_chain.build weft / oneTBB matched no row of graph_chain: rename or remove it with "
        "its row (docs/benchmarks.md)");
  const GateResult filtered = gate(f, {{"graph_tree", {row("graph_tree.build", "n=1", 9)}}}, never);
  CHECK(filtered.failures.empty());
  CHECK(filtered.budgets_not_run == 1);
}

TEST_CASE("BudgetGate.a_gpu_budget_is_checked_only_where_its_benchmark_printed_rows") {
  const BudgetFile f = file(
      R"({"registered": "cuda_flux_difference", "benchmark": "cuda_flux_difference.layouts", "gpu": true,
          "variant": "strided", "baseline": "contiguous", "max_ratio": 1, "why": "goal<1"})");
  check_registered(f, {"graph_chain"});  // no CUDA in this build: allowed
  const GateResult no_gpu = gate(f, {{"cuda_flux_difference", {}}}, never);
  CHECK(no_gpu.failures.empty());
  CHECK(no_gpu.budgets_not_run == 1);
  const GateResult gpu =
      gate(f,
           {{"cuda_flux_difference",
             {row("cuda_flux_difference.layouts", "n=1 goal<1", 2, "strided", "contiguous")}}},
           [](const std::string&, int) {
             return std::vector<Record>{
                 row("cuda_flux_difference.layouts", "n=1 goal<1", 2, "strided", "contiguous")};
           });
  CHECK(gpu.failures.size() == 1);
}

TEST_CASE("BudgetGate.a_budget_for_a_benchmark_that_does_not_exist_is_refused") {
  const BudgetFile f = file(kChainBuild);
  CHECK_NOTHROW(check_registered(f, {"graph_chain"}));
  CHECK_THROWS_WITH_AS(check_registered(f, {"graph_tree"}),
                       doctest::Contains("budget 1 (graph_chain.build weft / oneTBB) names benchmark "
                                         "'graph_chain', which this weft-bench does not have"),
                       BudgetError);
}

TEST_CASE("BudgetGate.a_bound_pointing_the_wrong_way_for_its_row_fails") {
  const BudgetFile f = file(
      R"({"registered": "views_triad", "benchmark": "views_triad", "variant": "weft",
          "baseline": "memcpy", "max_ratio": 2, "why": "w"})");
  const GateResult r =
      gate(f, {{"views_triad", {row("views_triad", "higher=better", 1, "weft", "memcpy")}}}, never);
  REQUIRE(r.failures.size() == 1);
  CHECK(r.failures[0].find("says higher=better: use min_ratio") != std::string::npos);
}

TEST_CASE("BudgetGate.a_ratio_that_is_not_a_positive_number_misses") {
  const BudgetFile f = file(kChainBuild);
  CHECK(misses(f.budgets[0], 0.0));
  CHECK(misses(f.budgets[0], std::numeric_limits<double>::quiet_NaN()));
  CHECK_FALSE(misses(f.budgets[0], 0.75));
}

TEST_CASE("BudgetGate.a_budget_may_give_its_own_margin_with_a_reason") {
  const BudgetFile f = file(
      R"({"registered": "trace_overhead", "benchmark": "trace.run", "variant": "trace-off",
          "baseline": "trace-on", "max_ratio": 1, "margin": 1.8, "margin_why": "noisy", "why": "w"})");
  CHECK(limit(f.budgets[0]) == doctest::Approx(1.8));
  CHECK_THROWS_WITH_AS(file(R"({"registered": "a", "benchmark": "a", "variant": "v", "baseline": "b",
                                 "max_ratio": 1, "margin": 1.8, "why": "w"})"),
                       doctest::Contains("needs a \"margin_why\""), BudgetError);
}

TEST_CASE("BudgetGate.malformed_files_are_refused_naming_the_budget_and_field") {
  const auto refused = [](const std::string& budgets) {
    try {
      file(budgets);
    } catch (const BudgetError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused(R"({"registered": "a", "benchmark": "a", "variant": "v", "baseline": "b", "why": "w"})") ==
        "test.json: budget 1: needs exactly one of \"max_ratio\" (lower is better) and \"min_ratio\" "
        "(higher is better)");
  CHECK(refused(R"({"registered": "a", "benchmark": "a", "variant": "v", "baseline": "b", "why": "w",
                    "max_raito": 1})")
            .find("unknown field \"max_raito\"") != std::string::npos);
  CHECK(refused(R"({"registered": "a", "benchmark": "a", "variant": "v", "baseline": "b",
                    "max_ratio": 1})") == "test.json: budget 1: needs \"why\" (a non-empty string)");
  CHECK(refused(R"({"registered": "a", "benchmark": "a", "variant": "v", "baseline": "b", "why": "w",
                    "max_ratio": -1})")
            .find("\"max_ratio\" must be a positive number, not -1") != std::string::npos);
  CHECK(refused(std::string(kChainBuild) + "," + kChainBuild)
            .find("budget 2 (graph_chain.build weft / oneTBB) "
                  "repeats an earlier budget") != std::string::npos);
  CHECK_THROWS_WITH_AS(parse_budgets("{", "x.json"), doctest::Contains("x.json: not valid JSON"),
                       BudgetError);
  CHECK_THROWS_WITH_AS(parse_budgets(R"({"why": "w", "budgets": []})", "x.json"),
                       doctest::Contains("x.json: needs \"margin\""), BudgetError);
  CHECK_THROWS_WITH_AS(parse_budgets(R"({"margin": 0.9, "why": "w", "budgets": []})", "x.json"),
                       doctest::Contains("\"margin\" must be a number of at least 1"), BudgetError);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "budget_gate.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace weft::bench {
namespace {

using nlohmann::json;

const std::set<std::string> kFileKeys{"margin", "why", "budgets"};
const std::set<std::string> kBudgetKeys{"registered",      "benchmark", "variant",   "baseline",
                                        "params_contains", "max_ratio", "min_ratio", "margin",
                                        "margin_why",      "gpu",       "why"};

std::string figure(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

std::string identity(const Budget& b) {
  return b.benchmark + " " + b.variant + " / " + b.baseline +
         (b.params_contains.empty() ? "" : " [params containing '" + b.params_contains + "']");
}

// Reads the fields of one JSON object, the file or one budget; `where`
// starts every complaint ("budgets.json: budget 3").
class Fields {
 public:
  Fields(const json& entry, std::string where) : entry_(entry), where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& what) const { throw BudgetError(where_ + ": " + what); }

  bool has(const char* key) const { return entry_.contains(key); }

  std::string text(const char* key, bool required) const {
    if (!has(key)) {
      if (required) fail("needs \"" + std::string(key) + "\" (a non-empty string)");
      return {};
    }
    const json& value = entry_.at(key);
    if (!value.is_string() || value.get<std::string>().empty())
      fail("\"" + std::string(key) + "\" must be a non-empty string, not " + value.dump());
    return value.get<std::string>();
  }

  // A finite positive number of at least `least`; 0 when the key is absent.
  double number(const char* key, double least, const char* meaning) const {
    if (!has(key)) return 0;
    const json& value = entry_.at(key);
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < least ||
        value.get<double>() <= 0)
      fail("\"" + std::string(key) + "\" must be " + meaning + ", not " + value.dump());
    return value.get<double>();
  }

  void only(const std::set<std::string>& allowed) const {
    for (const auto& item : entry_.items()) {
      if (!allowed.contains(item.key()))
        fail("unknown field \"" + item.key() + "\" (a misspelt field would be ignored)");
    }
  }

 private:
  const json& entry_;
  std::string where_;
};

Budget parse_budget(const json& entry, const std::string& where, double file_margin) {
  if (!entry.is_object()) throw BudgetError(where + ": must be an object, not " + entry.dump());
  const Fields f(entry, where);
  f.only(kBudgetKeys);
  Budget b;
  b.registered = f.text("registered", true);
  b.benchmark = f.text("benchmark", true);
  b.variant = f.text("variant", true);
  b.baseline = f.text("baseline", true);
  b.params_contains = f.text("params_contains", false);
  b.why = f.text("why", true);
  b.max_ratio = f.number("max_ratio", 0, "a positive number");
  b.min_ratio = f.number("min_ratio", 0, "a positive number");
  if ((b.max_ratio > 0) == (b.min_ratio > 0))
    f.fail("needs exactly one of \"max_ratio\" (lower is better) and \"min_ratio\" (higher is better)");
  b.margin = f.has("margin") ? f.number("margin", 1, "a number of at least 1") : file_margin;
  if (f.has("margin") != f.has("margin_why"))
    f.fail(
        "a budget's own \"margin\" needs a \"margin_why\" saying why the file's does not do, and only then");
  f.text("margin_why", false);
  if (f.has("gpu")) {
    if (!entry.at("gpu").is_boolean()) f.fail("\"gpu\" must be true or false, not " + entry.at("gpu").dump());
    b.gpu = entry.at("gpu").get<bool>();
  }
  return b;
}

bool row_says_higher_is_better(const Record& row) {
  return row.params.find("higher=better") != std::string::npos;
}

bool same_identity(const Record& a, const Record& b) {
  return a.benchmark == b.benchmark && a.params == b.params && a.variant == b.variant &&
         a.baseline == b.baseline;
}

// How far a ratio is from good: lower is better for both kinds of budget.
double badness(const Budget& budget, double ratio) {
  if (!std::isfinite(ratio) || ratio <= 0) return std::numeric_limits<double>::infinity();
  return budget.max_ratio > 0 ? ratio : 1 / ratio;
}

// Every row of a run that matches one of `budgets`, once per budget it matches.
std::vector<Check> hold(const std::vector<const Budget*>& budgets, const std::vector<Record>& rows) {
  std::vector<Check> checks;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto earlier =
        static_cast<std::size_t>(std::count_if(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(i),
                                               [&](const Record& r) { return same_identity(r, rows[i]); }));
    for (const Budget* b : budgets)
      if (matches(*b, rows[i])) checks.push_back({b, rows[i], earlier, 1});
  }
  return checks;
}

// Gives each check the better of its ratio and its row's in `again`.
void keep_best(std::vector<Check>& checks, const std::vector<Record>& again) {
  for (Check& c : checks) {
    std::size_t seen = 0;
    for (const Record& r : again) {
      if (!same_identity(r, c.row)) continue;
      if (seen++ != c.occurrence) continue;
      if (badness(*c.budget, r.ratio) < badness(*c.budget, c.row.ratio)) c.row = r;
      break;
    }
  }
}

bool any_missed(const std::vector<Check>& checks) {
  return std::any_of(checks.begin(), checks.end(),
                     [](const Check& c) { return misses(*c.budget, c.row.ratio); });
}

// The failures of one benchmark's checks: misses, budgets that matched no row,
// and bounds that point the wrong way for their row.
std::vector<std::string> failures_of(const BenchmarkRun& run, const std::vector<const Budget*>& budgets,
                                     const std::vector<Check>& checks) {
  std::vector<std::string> failures;
  for (const Budget* b : budgets) {
    const bool matched =
        std::any_of(checks.begin(), checks.end(), [b](const Check& c) { return c.budget == b; });
    if (matched || (b->gpu && run.rows.empty())) continue;
    failures.push_back("budget for " + identity(*b) + " matched no row of " + run.name +
                       ": rename or remove it with its row (docs/benchmarks.md)");
  }
  for (const Check& c : checks) {
    const bool higher = c.budget->min_ratio > 0;
    if (higher != row_says_higher_is_better(c.row)) {
      failures.push_back("budget for " + identity(*c.budget) + " has " +
                         (higher ? "min_ratio" : "max_ratio") + ", but its row " + describe_row(c.row) +
                         (higher ? " is lower-is-better" : " says higher=better") + ": use " +
                         (higher ? "max_ratio" : "min_ratio"));
    } else if (misses(*c.budget, c.row.ratio)) {
      failures.push_back("budget missed: " + describe_row(c.row) + ": " + describe_check(c));
    }
  }
  return failures;
}

}  // namespace

BudgetFile parse_budgets(const std::string& text, const std::string& source) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw BudgetError(source + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object()) throw BudgetError(source + ": must be an object {\"margin\", \"why\", \"budgets\"}");
  const Fields top(doc, source);
  top.only(kFileKeys);
  BudgetFile file{source, top.number("margin", 1, "a number of at least 1"), {}};
  if (file.margin == 0) top.fail("needs \"margin\", the factor a row may miss its budget by");
  top.text("why", true);
  if (!doc.contains("budgets") || !doc.at("budgets").is_array())
    top.fail("needs \"budgets\", a list of budgets (docs/benchmarks.md)");
  for (const json& entry : doc.at("budgets")) {
    const std::string where = source + ": budget " + std::to_string(file.budgets.size() + 1);
    Budget b = parse_budget(entry, where, file.margin);
    for (const Budget& other : file.budgets) {
      if (other.registered == b.registered && identity(other) == identity(b))
        throw BudgetError(where + " (" + identity(b) + ") repeats an earlier budget");
    }
    file.budgets.push_back(std::move(b));
  }
  return file;
}

BudgetFile read_budgets(const std::string& path) {
  errno = 0;
  std::ifstream in(path);
  if (!in) {
    throw BudgetError("cannot read the budgets file '" + path + "'" +
                      (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_budgets(text.str(), path);
}

void check_registered(const BudgetFile& file, const std::vector<std::string>& registered) {
  for (std::size_t i = 0; i < file.budgets.size(); ++i) {
    const Budget& b = file.budgets[i];
    if (b.gpu || std::find(registered.begin(), registered.end(), b.registered) != registered.end()) continue;
    throw BudgetError(file.source + ": budget " + std::to_string(i + 1) + " (" + identity(b) +
                      ") names benchmark '" + b.registered +
                      "', which this weft-bench does not have (weft-bench --list names them; "
                      "a budget for a CUDA-only benchmark says \"gpu\": true)");
  }
}

bool matches(const Budget& budget, const Record& row) {
  return row.benchmark == budget.benchmark && row.variant == budget.variant &&
         row.baseline == budget.baseline && row.params.find(budget.params_contains) != std::string::npos;
}

double limit(const Budget& budget) {
  return budget.max_ratio > 0 ? budget.max_ratio * budget.margin : budget.min_ratio / budget.margin;
}

bool misses(const Budget& budget, double ratio) {
  return badness(budget, ratio) > badness(budget, limit(budget));
}

std::string describe_row(const Record& row) {
  return row.benchmark + " [" + row.params + "] " + row.variant + " / " + row.baseline;
}

std::string describe_check(const Check& check) {
  const Budget& b = *check.budget;
  const bool missed = misses(b, check.row.ratio);
  const bool higher = b.min_ratio > 0;
  const char* relation = higher ? (missed ? " < " : " >= ") : (missed ? " > " : " <= ");
  std::string text = "ratio " + figure(check.row.ratio);
  if (check.runs > 1) text += " (best of " + std::to_string(check.runs) + " runs)";
  return text + relation + figure(limit(b)) + " (" + (higher ? "min_ratio " : "max_ratio ") +
         figure(higher ? b.min_ratio : b.max_ratio) + (higher ? " / margin " : " x margin ") +
         figure(b.margin) + ")";
}

GateResult gate(const BudgetFile& file, const std::vector<BenchmarkRun>& runs, const RunAgain& run_again) {
  GateResult result;
  std::size_t budgets_checked = 0;
  for (const BenchmarkRun& run : runs) {
    std::vector<const Budget*> budgets;
    for (const Budget& b : file.budgets)
      if (b.registered == run.name) budgets.push_back(&b);
    if (budgets.empty()) continue;
    std::vector<Check> checks = hold(budgets, run.rows);
    int runs_done = 1;
    while (runs_done < kMaxRuns && any_missed(checks)) keep_best(checks, run_again(run.name, ++runs_done));
    for (Check& c : checks) c.runs = runs_done;
    const std::vector<std::string> failures = failures_of(run, budgets, checks);
    result.failures.insert(result.failures.end(), failures.begin(), failures.end());
    budgets_checked += static_cast<std::size_t>(std::count_if(
        budgets.begin(), budgets.end(), [&](const Budget* b) { return !b->gpu || !run.rows.empty(); }));
    std::move(checks.begin(), checks.end(), std::back_inserter(result.checks));
  }
  result.budgets_not_run = file.budgets.size() - budgets_checked;
  return result;
}

}  // namespace weft::bench

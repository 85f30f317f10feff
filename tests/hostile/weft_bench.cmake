# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Hostile cases for weft-bench (included from CMakeLists.txt when it is built).
# The runs use --quick and one small benchmark (views_saxpy); exit codes as
# for the examples.
set(quick --quick --threads 1 --filter views_saxpy)
weft_hostile_case(weft_bench_prints_its_usage_on_help PROGRAM weft-bench EXIT 0 NO_FILES
  EXPECT "Usage: weft-bench .*--threads.*--json" FORBID "ratio" ARGS --help)
weft_hostile_case(weft_bench_lists_its_benchmarks PROGRAM weft-bench EXIT 0 NO_FILES
  EXPECT "views_saxpy" ARGS --list)
weft_hostile_case(weft_bench_lists_only_what_its_filter_selects PROGRAM weft-bench EXIT 0 NO_FILES
  EXPECT "task_dag_fib" FORBID "views_saxpy" ARGS --list --filter fib)
weft_hostile_case(weft_bench_help_gives_each_default PROGRAM weft-bench EXIT 0 NO_FILES
  EXPECT "default: off.*default: 2.*default: every benchmark.*default: none.*default: off" ARGS --help)
weft_hostile_case(weft_bench_writes_its_json PROGRAM weft-bench EXIT 0 WRITES b.json
  EXPECT "views_saxpy" SECONDS 60 ARGS ${quick} --json b.json)
weft_hostile_case(weft_bench_rejects_zero_threads PROGRAM weft-bench EXIT 2 NO_FILES
  EXPECT "weft-bench: --threads: '0' is out of range" ARGS --threads 0)
weft_hostile_case(weft_bench_rejects_negative_threads PROGRAM weft-bench EXIT 2 NO_FILES
  EXPECT "--threads: '-1' is out of range" ARGS --threads -1)
weft_hostile_case(weft_bench_rejects_threads_that_are_not_a_number PROGRAM weft-bench EXIT 2 NO_FILES
  EXPECT "--threads: 'abc' is not a whole number" ARGS --threads abc)
weft_hostile_case(weft_bench_rejects_threads_with_trailing_junk PROGRAM weft-bench EXIT 2 NO_FILES
  EXPECT "--threads: '2x' is not a whole number" ARGS --threads 2x)
weft_hostile_case(weft_bench_rejects_a_missing_json_file_name PROGRAM weft-bench EXIT 2 NO_FILES
  EXPECT "--json" ARGS --quick --json)
weft_hostile_case(weft_bench_rejects_an_unknown_option PROGRAM weft-bench EXIT 2 NO_FILES
  EXPECT "--bogus" ARGS --bogus)
weft_hostile_case(weft_bench_rejects_a_filter_that_matches_nothing PROGRAM weft-bench EXIT 2 NO_FILES
  EXPECT "weft-bench: no benchmark matches 'no_such_benchmark'" FORBID "ratio"
  ARGS --quick --filter no_such_benchmark)
weft_hostile_case(weft_bench_reports_a_json_file_under_proc_before_running PROGRAM weft-bench EXIT 1 NO_FILES
  EXPECT "weft-bench: cannot write '/proc/b.json'" FORBID "ratio" ARGS ${quick} --json /proc/b.json)
weft_hostile_case(weft_bench_reports_a_missing_json_folder_before_running PROGRAM weft-bench EXIT 1 NO_FILES
  EXPECT "cannot write 'nowhere/b.json': No such file" FORBID "ratio" ARGS ${quick} --json nowhere/b.json)
weft_hostile_case(weft_bench_reports_a_full_disk PROGRAM weft-bench EXIT 1 SECONDS 60
  EXPECT "weft-bench: error while writing '/dev/full': No space left" ARGS ${quick} --json /dev/full)

# The budget gate (--budgets, docs/benchmarks.md), on the files in budgets/:
# a miss fails after 3 runs naming the row, the ratio, the budget and the
# margin; a budget file that is wrong stops weft-bench before anything runs.
set(budgets ${CMAKE_CURRENT_SOURCE_DIR}/budgets)
weft_hostile_case(weft_bench_checks_the_committed_budgets PROGRAM weft-bench EXIT 0 NO_FILES
  EXPECT "views_saxpy" ARGS --list --budgets ${PROJECT_SOURCE_DIR}/tools/bench/budgets.json)
weft_hostile_case(weft_bench_fails_a_row_that_misses_its_budget PROGRAM weft-bench EXIT 1 NO_FILES SECONDS 60
  EXPECT "running it again \\(run 3 of at most 3\\).*weft-bench: budget missed: views_saxpy.parallel_for \\[n=2\\^16 goal<=1.11\\] weft / OpenMP: ratio [0-9.e+-]+ \\(best of 3 runs\\) > 1.5e-09 \\(max_ratio 1e-09 x margin 1.5\\)"
  ARGS ${quick} --budgets ${budgets}/impossible.json)
weft_hostile_case(weft_bench_passes_rows_within_their_budgets PROGRAM weft-bench EXIT 0 NO_FILES SECONDS 60
  EXPECT "gate: ok +views_saxpy.split .n=2\\^16 P=1 goal<=1.11. weft / OpenMP: ratio .*budgets not checked here: 2 .*every budget kept"
  FORBID "running it again" ARGS ${quick} --budgets ${budgets}/generous.json)
weft_hostile_case(weft_bench_fails_a_budget_that_matches_no_row PROGRAM weft-bench EXIT 1 NO_FILES SECONDS 60
  EXPECT "weft-bench: budget for views_saxpy.parallel_four weft / OpenMP matched no row of views_saxpy"
  ARGS ${quick} --budgets ${budgets}/renamed_row.json)
weft_hostile_case(weft_bench_refuses_a_budget_for_a_benchmark_it_does_not_have PROGRAM weft-bench EXIT 2 NO_FILES
  EXPECT "budget 1 \\(views_saxpy.parallel_for weft / OpenMP\\) names benchmark 'views_saxpi', which this weft-bench does not have"
  FORBID "ratio" ARGS ${quick} --budgets ${budgets}/missing_benchmark.json)
weft_hostile_case(weft_bench_refuses_a_malformed_budgets_file PROGRAM weft-bench EXIT 2 NO_FILES
  EXPECT "malformed.json: not valid JSON" FORBID "ratio" ARGS ${quick} --budgets ${budgets}/malformed.json)
weft_hostile_case(weft_bench_refuses_a_missing_budgets_file PROGRAM weft-bench EXIT 2 NO_FILES
  EXPECT "weft-bench: cannot read the budgets file 'nowhere.json': No such file" FORBID "ratio"
  ARGS ${quick} --budgets nowhere.json)

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

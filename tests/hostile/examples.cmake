# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Hostile cases for the examples (included from CMakeLists.txt when they are
# built). Exit codes: 0 ok, 1 the run or an output failed, 2 usage error.

# ---- heat2d [cells] [steps] [graph json] ----
weft_hostile_case(heat2d_prints_its_usage_on_help PROGRAM heat2d EXIT 0 NO_FILES
  EXPECT "Usage: heat2d .*cells.*steps" ARGS --help)
weft_hostile_case(heat2d_runs_a_small_problem PROGRAM heat2d EXIT 0 WRITES heat2d_graph.json
  EXPECT "8x8 cells.*max .weft - serial. = 0" ARGS 8 2)
weft_hostile_case(heat2d_rejects_a_negative_size PROGRAM heat2d EXIT 2 NO_FILES
  EXPECT "heat2d: cells: '-5' is not a whole number" ARGS -5)
weft_hostile_case(heat2d_rejects_a_size_with_trailing_junk PROGRAM heat2d EXIT 2 NO_FILES
  EXPECT "heat2d: cells: '256x' is not a whole number" ARGS 256x)
weft_hostile_case(heat2d_rejects_a_size_that_is_not_a_number PROGRAM heat2d EXIT 2 NO_FILES
  EXPECT "'abc' is not a whole number.*${usage}" ARGS abc)
weft_hostile_case(heat2d_rejects_a_hexadecimal_size PROGRAM heat2d EXIT 2 NO_FILES
  EXPECT "'0x10' is not a whole number" ARGS 0x10)
weft_hostile_case(heat2d_rejects_fewer_cells_than_devices PROGRAM heat2d EXIT 2 NO_FILES
  EXPECT "cells: '3' is out of range" ARGS 3)
weft_hostile_case(heat2d_rejects_a_size_beyond_64_bits PROGRAM heat2d EXIT 2 NO_FILES
  EXPECT "cells: '99999999999999999999' is out of range" ARGS 99999999999999999999)
weft_hostile_case(heat2d_rejects_an_odd_step_count PROGRAM heat2d EXIT 2 NO_FILES
  EXPECT "heat2d: steps: need an even number" ARGS 8 3)
weft_hostile_case(heat2d_rejects_zero_steps PROGRAM heat2d EXIT 2 NO_FILES
  EXPECT "steps: '0' is out of range" ARGS 8 0)
weft_hostile_case(heat2d_rejects_negative_steps PROGRAM heat2d EXIT 2 NO_FILES
  EXPECT "steps: '-2' is out of range" ARGS 8 -2)
weft_hostile_case(heat2d_rejects_a_step_count_beyond_int PROGRAM heat2d EXIT 2 NO_FILES
  EXPECT "steps: '99999999999' is out of range" ARGS 8 99999999999)
weft_hostile_case(heat2d_rejects_an_extra_argument PROGRAM heat2d EXIT 2 NO_FILES
  EXPECT "not expected: extra" ARGS 8 2 g.json extra)
weft_hostile_case(heat2d_rejects_an_unknown_option PROGRAM heat2d EXIT 2 NO_FILES
  EXPECT "--bogus" ARGS --bogus)
weft_hostile_case(heat2d_reports_a_graph_file_under_proc_before_the_run PROGRAM heat2d EXIT 1 NO_FILES
  EXPECT "heat2d: cannot write '/proc/x.json'" FORBID "max .weft" ARGS 8 2 /proc/x.json)
weft_hostile_case(heat2d_reports_a_missing_folder_before_the_run PROGRAM heat2d EXIT 1 NO_FILES
  EXPECT "cannot write 'no/such/folder/g.json': No such file" FORBID "max .weft" ARGS 8 2 no/such/folder/g.json)
weft_hostile_case(heat2d_reports_a_folder_as_graph_file PROGRAM heat2d EXIT 1 NO_FILES
  EXPECT "cannot write '.': it is a folder" ARGS 8 2 .)
weft_hostile_case(heat2d_reports_a_full_disk PROGRAM heat2d EXIT 1
  EXPECT "heat2d: error while writing '/dev/full': No space left" ARGS 8 2 /dev/full)
weft_hostile_case(heat2d_reports_a_full_standard_output PROGRAM heat2d EXIT 1 STDOUT /dev/full
  EXPECT "heat2d: cannot write the standard output" ARGS 8 2)
# Fields beyond this machine's memory (44 TB): refused before anything is
# allocated, saying how much is needed and how much there is.
weft_hostile_case(heat2d_refuses_fields_beyond_memory PROGRAM heat2d EXIT 2 NO_FILES
  EXPECT "heat2d: the run needs about [0-9.]+ GiB for two fields of 1000000\\^2 doubles.*(this machine has|control group allows it) [0-9.]+ GiB.*--ignore-memory-limit"
  ARGS 1000000 2)
# Under ulimit -v the limit is what the process may use.
weft_hostile_case(heat2d_refuses_fields_beyond_its_address_space_limit PROGRAM heat2d EXIT 2 NO_FILES
  MEMORY_LIMIT_MB ${memory_limit_mb} EXPECT "heat2d: the run needs about [0-9.]+ GiB.*address-space limit \\(ulimit -v\\) is [0-9.]+ [GM]iB"
  ARGS 20000 2)
# With --ignore-memory-limit the run goes on, and what it cannot have still
# fails cleanly. Sizes whose cell count wraps around 64 bits: an error
# before any allocation.
weft_hostile_case(heat2d_fails_cleanly_when_the_cell_count_overflows PROGRAM heat2d EXIT 1 NO_FILES
  EXPECT "heat2d: .*4611686018427387904.*overflow" ARGS 4611686018427387904 2 --ignore-memory-limit)
# 80 GB of cells, more than memory (the issue's case, an uncaught
# AllocationError before): under a limit the allocation fails at once,
# whatever the machine's memory and overcommit policy, and main says so.
weft_hostile_case(heat2d_fails_cleanly_on_more_cells_than_memory PROGRAM heat2d EXIT 1 NO_FILES
  MEMORY_LIMIT_MB ${memory_limit_mb} EXPECT "heat2d: .*cannot allocate [0-9]+ bytes"
  ARGS 100000 2 --ignore-memory-limit)

# ---- graph_basics [out.json] ----
weft_hostile_case(graph_basics_prints_its_usage_on_help PROGRAM graph_basics EXIT 0 NO_FILES
  EXPECT "Usage: graph_basics .*out" FORBID "written to" ARGS --help)
weft_hostile_case(graph_basics_writes_its_graph PROGRAM graph_basics EXIT 0 WRITES g.json
  EXPECT "graph: 5 nodes, 6 edges, written to g.json" ARGS g.json)
weft_hostile_case(graph_basics_rejects_an_unknown_option PROGRAM graph_basics EXIT 2 NO_FILES
  EXPECT "graph_basics: .*--bogus" ARGS --bogus)
weft_hostile_case(graph_basics_rejects_two_outputs PROGRAM graph_basics EXIT 2 NO_FILES
  EXPECT "not expected: b.json" ARGS a.json b.json)
weft_hostile_case(graph_basics_reports_a_full_disk PROGRAM graph_basics EXIT 1
  EXPECT "graph_basics: error while writing '/dev/full': No space left" ARGS /dev/full)
weft_hostile_case(graph_basics_reports_a_missing_folder_before_the_run PROGRAM graph_basics EXIT 1 NO_FILES
  EXPECT "graph_basics: cannot write 'missing/g.json'" FORBID "^A\n" ARGS missing/g.json)

weft_interrupted_output_case(graph_basics_keeps_the_previous_graph_when_cut_off PROGRAM graph_basics
  FILE g.json ARGS g.json)

# ---- graph_loop (no arguments) ----
weft_hostile_case(graph_loop_prints_its_usage_on_help PROGRAM graph_loop EXIT 0
  EXPECT "Usage: graph_loop" FORBID "reaches 1" ARGS --help)
weft_hostile_case(graph_loop_rejects_an_argument PROGRAM graph_loop EXIT 2
  EXPECT "graph_loop: .*not expected: 5" ARGS 5)
weft_hostile_case(graph_loop_reports_a_full_standard_output PROGRAM graph_loop EXIT 1 STDOUT /dev/full
  EXPECT "graph_loop: cannot write the standard output: No space left" ARGS)

# ---- fibonacci_tasks and fibonacci_workdag [n] [--workers N] ----
foreach(program_and_limit fibonacci_tasks:35 fibonacci_workdag:32)
  string(REPLACE ":" ";" pair ${program_and_limit})
  list(GET pair 0 fib)
  list(GET pair 1 limit)
  math(EXPR beyond "${limit} + 1")
  weft_hostile_case(${fib}_prints_its_usage_on_help PROGRAM ${fib} EXIT 0
    EXPECT "Usage: ${fib} .*--workers" FORBID "fib\\(" ARGS --help)
  weft_hostile_case(${fib}_runs_on_two_workers PROGRAM ${fib} EXIT 0
    EXPECT "fib\\(10\\) = 55 \\(serial check: ok\\)" ARGS 10 --workers 2)
  weft_hostile_case(${fib}_rejects_workers_that_are_not_a_number PROGRAM ${fib} EXIT 2
    EXPECT "${fib}: --workers: 'abc' is not a whole number" ARGS --workers abc)
  weft_hostile_case(${fib}_rejects_zero_workers PROGRAM ${fib} EXIT 2
    EXPECT "--workers: '0' is out of range" ARGS --workers 0)
  weft_hostile_case(${fib}_rejects_negative_workers PROGRAM ${fib} EXIT 2
    EXPECT "--workers: '-5' is out of range" ARGS --workers -5)
  weft_hostile_case(${fib}_rejects_a_huge_worker_count PROGRAM ${fib} EXIT 2
    EXPECT "--workers: '100000' is out of range" ARGS --workers 100000)
  weft_hostile_case(${fib}_rejects_a_missing_worker_count PROGRAM ${fib} EXIT 2
    EXPECT "--workers" ARGS 10 --workers)
  weft_hostile_case(${fib}_rejects_workers_with_trailing_junk PROGRAM ${fib} EXIT 2
    EXPECT "'2x' is not a whole number" ARGS --workers 2x)
  weft_hostile_case(${fib}_rejects_a_negative_n PROGRAM ${fib} EXIT 2
    EXPECT "${fib}: n: '-1' is out of range" ARGS -1)
  weft_hostile_case(${fib}_rejects_an_n_beyond_its_range PROGRAM ${fib} EXIT 2
    EXPECT "n: '${beyond}' is out of range: need a whole number in \\[0, ${limit}\\]" ARGS ${beyond})
  weft_hostile_case(${fib}_rejects_an_n_with_trailing_junk PROGRAM ${fib} EXIT 2
    EXPECT "n: '10x' is not a whole number" ARGS 10x)
endforeach()

# ---- euler2d ----
set(tiny --size 16x8 --partitions 2 --steps 2 --quiet)  # a run of a few milliseconds
weft_hostile_case(euler2d_prints_its_usage_on_help PROGRAM euler2d EXIT 0 NO_FILES
  EXPECT "Usage: euler2d .*--size.*Exit codes" ARGS --help)
weft_hostile_case(euler2d_runs_a_tiny_problem PROGRAM euler2d EXIT 0 WRITES d.png t.json g.json
  EXPECT "16x8.*2 steps.*density image: d.png" ARGS ${tiny} --png d.png --trace t.json --dump-graph g.json)
weft_hostile_case(euler2d_rejects_a_negative_size PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "euler2d: --size: '-1x8' is not NXxNY" ARGS --size -1x8)
weft_hostile_case(euler2d_rejects_a_size_with_trailing_junk PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--size: '16x8x' is not NXxNY" ARGS --size 16x8x)
weft_hostile_case(euler2d_rejects_a_size_with_a_sign PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--size: '\\+16x8' is not NXxNY" ARGS --size +16x8)
weft_hostile_case(euler2d_rejects_a_size_with_a_zero PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--size: '16x0' is not NXxNY" ARGS --size 16x0)
weft_hostile_case(euler2d_rejects_a_size_beyond_64_bits PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--size: '99999999999999999999x8' is not NXxNY" ARGS --size 99999999999999999999x8)
weft_hostile_case(euler2d_rejects_negative_partitions PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "euler2d: --partitions: '-1' is not a whole number" ARGS --partitions -1)
weft_hostile_case(euler2d_rejects_partitions_beyond_the_limit PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--partitions: '18446744073709551615' is out of range" ARGS --partitions 18446744073709551615)
weft_hostile_case(euler2d_rejects_negative_sub_partitions PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--sub-partitions: '-2' is not a whole number" ARGS --sub-partitions -2)
weft_hostile_case(euler2d_rejects_more_blocks_than_rows PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "8 rows cannot be split into 4 partitions x 4 sub-partitions" ARGS --size 16x8 --partitions 4
  --sub-partitions 4)
weft_hostile_case(euler2d_rejects_a_nan_end_time PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--end-time: 'nan' is not a finite number" ARGS --end-time nan)
weft_hostile_case(euler2d_rejects_an_infinite_end_time PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--end-time: 'inf' is not a finite number" ARGS --end-time inf)
weft_hostile_case(euler2d_rejects_a_negative_end_time PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--end-time: '-1' is out of range" ARGS --end-time -1)
weft_hostile_case(euler2d_rejects_an_end_time_with_trailing_junk PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--end-time: '0.1s' is not a finite number" ARGS --end-time 0.1s)
weft_hostile_case(euler2d_rejects_a_zero_end_time_without_steps PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--end-time 0 needs --steps" ARGS --end-time 0)
weft_hostile_case(euler2d_rejects_a_nan_cfl PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--cfl: 'nan' is not a finite number" ARGS --cfl nan)
weft_hostile_case(euler2d_rejects_a_zero_cfl PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--cfl: '0' is out of range" ARGS --cfl 0)
weft_hostile_case(euler2d_rejects_negative_steps PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--steps: '-3' is out of range" ARGS --steps -3)
weft_hostile_case(euler2d_rejects_zero_threads PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--threads: '0' is out of range" ARGS --threads 0)
weft_hostile_case(euler2d_rejects_threads_that_are_not_a_number PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--threads: 'abc' is not a whole number" ARGS --threads abc)
weft_hostile_case(euler2d_rejects_negative_gpus PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--gpus: '-1' is out of range" ARGS --gpus -1)
weft_hostile_case(euler2d_rejects_a_negative_png_interval PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--png-every: '-1' is out of range" ARGS --png-every -1)
weft_hostile_case(euler2d_rejects_an_unknown_layout PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "--layout: 'diagonal'" ARGS --layout diagonal)
# Outputs: checked before the run (nothing runs, nothing is left behind) ...
weft_hostile_case(euler2d_reports_a_png_under_proc_before_the_run PROGRAM euler2d EXIT 1 NO_FILES
  EXPECT "euler2d: cannot write '/proc/x.png'" FORBID "steps to t" ARGS ${tiny} --png /proc/x.png)
weft_hostile_case(euler2d_reports_a_missing_trace_folder_before_the_run PROGRAM euler2d EXIT 1 NO_FILES
  EXPECT "cannot write 'nowhere/t.json': No such file" FORBID "steps to t"
  ARGS ${tiny} --png p.png --trace nowhere/t.json)
weft_hostile_case(euler2d_reports_every_bad_output_at_once PROGRAM euler2d EXIT 1 NO_FILES
  EXPECT "euler2d: cannot write 'nowhere/d.png'.*\neuler2d: cannot write 'nowhere/t.json'.*\neuler2d: cannot write 'nowhere/g.json'"
  FORBID "steps to t" ARGS ${tiny} --png nowhere/d.png --dump-graph nowhere/g.json --trace nowhere/t.json)
weft_hostile_case(euler2d_reports_a_folder_as_png_before_the_run PROGRAM euler2d EXIT 1 NO_FILES
  EXPECT "cannot write '.': it is a folder" FORBID "steps to t" ARGS ${tiny} --png .)
# ... and through close after it: a full disk fails the one output, the
# others are still written.
weft_hostile_case(euler2d_writes_the_trace_and_graph_when_the_png_fails PROGRAM euler2d EXIT 1
  WRITES t.json g.json EXPECT "euler2d: error while writing '/dev/full': No space left"
  ARGS ${tiny} --png /dev/full --trace t.json --dump-graph g.json)
weft_hostile_case(euler2d_writes_the_png_when_the_graph_fails PROGRAM euler2d EXIT 1 WRITES d.png
  EXPECT "euler2d: error while writing '/dev/full'" ARGS ${tiny} --png d.png --dump-graph /dev/full)
weft_hostile_case(euler2d_writes_the_png_when_the_trace_fails PROGRAM euler2d EXIT 1 WRITES d.png
  EXPECT "euler2d: trace: error while writing '/dev/full'" ARGS ${tiny} --png d.png --trace /dev/full)
weft_hostile_case(euler2d_reports_a_full_standard_output PROGRAM euler2d EXIT 1 STDOUT /dev/full
  WRITES d.png EXPECT "euler2d: cannot write the standard output" ARGS ${tiny} --png d.png)
# ... and an output cut off mid-write (an interrupt, a full disk) leaves the
# previous file: each is written beside it and renamed into place.
weft_interrupted_output_case(euler2d_keeps_the_previous_vtk_file_when_cut_off PROGRAM euler2d
  FILE state.vti ARGS ${tiny} --png /dev/null --vtk state.vti)
weft_interrupted_output_case(euler2d_keeps_the_previous_png_when_cut_off PROGRAM euler2d
  FILE d.png ARGS --size 64x32 --steps 2 --quiet --png d.png)
weft_interrupted_output_case(euler2d_keeps_the_previous_trace_when_cut_off PROGRAM euler2d
  FILE t.json ARGS --size 64x32 --steps 2 --quiet --png "" --trace t.json)
# Fields beyond memory (5 TB): refused before the run, exit 2.
weft_hostile_case(euler2d_refuses_fields_beyond_memory PROGRAM euler2d EXIT 2 NO_FILES
  EXPECT "euler2d: the run needs about [0-9.]+ GiB for the fields of 400000x200000 cells.*(this machine has|control group allows it)"
  ARGS --size 400000x200000 --steps 1 --quiet)
# Problems too large, run anyway: the exception reaches main, exit 1.
weft_hostile_case(euler2d_fails_cleanly_when_the_cell_count_overflows PROGRAM euler2d EXIT 1 NO_FILES
  EXPECT "euler2d: .*2305843009213693952.*overflow"
  ARGS --size 2305843009213693952x8 --steps 1 --quiet --ignore-memory-limit)
# 16 GB a field, 4 GB a partition: the first allocation already fails.
weft_hostile_case(euler2d_fails_cleanly_on_more_cells_than_memory PROGRAM euler2d EXIT 1 NO_FILES
  MEMORY_LIMIT_MB ${memory_limit_mb} EXPECT "euler2d: .*cannot allocate [0-9]+ bytes"
  ARGS --size 32000x16000 --steps 1 --quiet --ignore-memory-limit)
# 2000 threads' stacks do not fit in the limit: the executor cannot start
# them all, and says so.
weft_hostile_case(euler2d_fails_cleanly_when_threads_cannot_start PROGRAM euler2d EXIT 1 NO_FILES
  MEMORY_LIMIT_MB ${memory_limit_mb} EXPECT "euler2d: .*could not start all 2000 worker threads"
  ARGS ${tiny} --threads 2000 --png p.png)

# ---- eikonal ----
# The issue's 3D case (92 GiB of doubles), under a limit so that it is
# beyond memory on any machine: refused before the run.
weft_hostile_case(eikonal_refuses_fields_beyond_memory PROGRAM eikonal EXIT 2 NO_FILES
  MEMORY_LIMIT_MB ${memory_limit_mb}
  EXPECT "eikonal: the run needs about [0-9.]+ GiB for two fields of 1600x1600x1600 cells.*--ignore-memory-limit"
  ARGS --size 1600x1600x1600 --partitions 4)

# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Hostile cases for the weft program (included from CMakeLists.txt when it is
# built). Exit codes: 0 ok, 1 invalid input, 2 usage error. Its message and
# file-format cases live in tests/cli; these are the endless, huge and
# memory-starved inputs.

weft_hostile_case(weft_refuses_an_endless_file PROGRAM weft_cli EXIT 1
  EXPECT "^/dev/zero: larger than the input limit of 16777216 bytes .it goes on past it.; --max-bytes raises"
  ARGS graph validate --max-bytes 16M /dev/zero)
weft_hostile_case(weft_refuses_an_endless_standard_input PROGRAM weft_cli EXIT 1 STDIN /dev/zero
  EXPECT "^<stdin>: larger than the input limit of 16777216 bytes" ARGS trace summary --max-bytes 16m -)
# The default limit (1 GiB) stops /dev/zero too; it takes seconds to reach.
weft_hostile_case(weft_stops_an_endless_file_at_the_default_limit PROGRAM weft_cli EXIT 1 NOT_UNDER_SANITIZERS
  SECONDS 120 EXPECT "^/dev/zero: larger than the input limit of 1073741824 bytes" ARGS graph validate /dev/zero)
# Under a memory limit the same read fails cleanly, naming the file.
weft_hostile_case(weft_names_the_file_it_has_no_memory_for PROGRAM weft_cli EXIT 1 MEMORY_LIMIT_MB 256
  EXPECT "^/dev/zero: not enough memory to read it" ARGS graph validate /dev/zero)
weft_hostile_case(weft_rejects_a_limit_that_is_not_a_size PROGRAM weft_cli EXIT 2
  EXPECT "--max-bytes" ARGS graph validate --max-bytes -5 /dev/null)
weft_hostile_case(weft_rejects_a_misspelt_command_with_a_suggestion PROGRAM weft_cli EXIT 2
  EXPECT "Did you mean 'trace'" ARGS tarce summary x.json)

# A merge cut off mid-write (an interrupt, a full disk) leaves the previous
# OUT: it is written beside it and renamed into place.
weft_interrupted_output_case(weft_trace_merge_keeps_the_previous_output_when_cut_off PROGRAM weft_cli
  FILE merged.json ARGS trace merge merged.json ${PROJECT_SOURCE_DIR}/tests/cli/fixtures/trace_many_processes.json)

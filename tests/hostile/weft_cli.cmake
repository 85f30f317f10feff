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

# A document that does not fit in the memory left (--max-memory 1g lets it
# past the estimate): the clean error naming it, where the half-built
# document's teardown used to abort. Without --max-memory the estimate
# refuses it before the parse: the limit is what the process may use.
if(NOT WEFT_SANITIZE)  # the sanitizers' shadow memory does not fit under ulimit -v
  set(trace_command trace summary --max-memory 1g big.json)
  set(trace_expect "big.json: not enough memory to load a trace")
  set(graph_command graph validate --max-memory 1g big.json)
  set(graph_expect "big.json: not enough memory to load a graph")
  set(estimate_command trace summary big.json)
  set(estimate_expect "big.json: loading a trace of 22400017 bytes may take up to 684 MiB of memory .32 bytes a byte., more than the 146 MiB this process may use")
  foreach(case trace graph estimate)
    add_test(NAME Hostile.weft_${case}_loading_out_of_memory_fails_cleanly
             COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:weft_cli> -DLIMIT_KB=150000
                     "-DEXPECT=${${case}_expect}"
                     -DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}/work/weft_${case}_loading_out_of_memory
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/json_out_of_memory.cmake -- ${${case}_command})
    set_tests_properties(Hostile.weft_${case}_loading_out_of_memory_fails_cleanly
                         PROPERTIES LABELS hostile TIMEOUT 90)
  endforeach()
endif()

# An input whose load may need more than --max-memory is refused before it
# is parsed, with the figures.
weft_hostile_case(weft_refuses_an_input_that_may_not_fit_in_max_memory PROGRAM weft_cli EXIT 1
  EXPECT "trace_many_processes.json: loading a trace of 6923 bytes may take up to 216 KiB of memory .32 bytes a byte., more than the 100 KiB of --max-memory; --max-memory raises"
  ARGS trace summary --max-memory 100k ${PROJECT_SOURCE_DIR}/tests/cli/fixtures/trace_many_processes.json)

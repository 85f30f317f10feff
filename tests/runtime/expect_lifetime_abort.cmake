# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Runs PROGRAM with WEFT_CHECK_LIFETIMES=1 and passes if it ends without
# success, having said why, and without reaching its last line.
set(ENV{WEFT_CHECK_LIFETIMES} 1)
execute_process(COMMAND ${PROGRAM} TIMEOUT 50 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the program succeeded although its future outlived the scheduler\n${all}")
endif()
if(NOT all MATCHES "TaskScheduler destroyed while 1 futures \\(or when-alls, events\\) still refer to its tasks")
  message(FATAL_ERROR "the abort did not say why (exit ${rc})\n${all}")
endif()
if(all MATCHES "nothing noticed")
  message(FATAL_ERROR "the program went on past the scheduler\n${all}")
endif()
message(STATUS "refused as expected (${rc})")

# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Runs COMMAND (a ;-list) and passes if it exits non-zero within LIMIT
# seconds: a job whose rank died must end, not hang, and must not succeed.
separate_arguments(command NATIVE_COMMAND "${COMMAND}")
string(TIMESTAMP start "%s")
execute_process(COMMAND ${command} TIMEOUT ${LIMIT} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(TIMESTAMP end "%s")
math(EXPR seconds "${end} - ${start}")
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "the job did not end within ${LIMIT} s (${rc})\n${out}\n${err}")
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "the job succeeded although a rank died\n${out}\n${err}")
endif()
message(STATUS "the job ended with exit code ${rc} after ${seconds} s")

# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# `weft trace summary` of a trace with one job in each of COUNT processes
# must stay linear in the processes: it took 20 s for 100,000 when each row
# looked its process's name up in a list. ctest's TIMEOUT is the check.
#   cmake -DWEFT=<program> -DCOUNT=<n> -DTRACE=<file to write> -P many_processes.cmake
cmake_minimum_required(VERSION 3.25)

file(WRITE "${TRACE}" "{\"traceEvents\": [\n")
set(chunk "")
math(EXPR last "${COUNT} - 1")
foreach(pid RANGE ${last})
  if(pid GREATER 0)
    string(APPEND chunk ",\n")
  endif()
  string(APPEND chunk "{\"name\": \"job\", \"ph\": \"X\", \"ts\": ${pid}, \"dur\": 1, \"pid\": ${pid}, \"tid\": 0}")
  math(EXPR in_chunk "${pid} % 1000")
  if(in_chunk EQUAL 999)
    file(APPEND "${TRACE}" "${chunk}")
    set(chunk "")
  endif()
endforeach()
file(APPEND "${TRACE}" "${chunk}\n]}\n")

execute_process(COMMAND "${WEFT}" trace summary "${TRACE}" RESULT_VARIABLE code OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
file(REMOVE "${TRACE}")
if(NOT code EQUAL 0 OR NOT out MATCHES "${COUNT} jobs on ${COUNT} workers in ${COUNT} processes")
  message(FATAL_ERROR "weft trace summary of ${COUNT} processes: exit ${code}\n${err}\n${out}")
endif()

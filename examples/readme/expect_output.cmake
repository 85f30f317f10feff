# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Runs a README program and checks that it keeps README's promise: exit code
# 0, and standard output that matches every regular expression given after
# `--`, each after the previous one's match.
#
#   cmake -DPROGRAM=<path> -P expect_output.cmake -- <regex>...
#
# A regex may not contain ';' (CMake would split it into two).
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED PROGRAM)
  message(FATAL_ERROR "expect_output.cmake: pass -DPROGRAM=<the program to run>")
endif()
execute_process(COMMAND "${PROGRAM}" RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(shown "--- stdout:\n${out}--- stderr:\n${err}---")
if(NOT code STREQUAL "0")
  message(FATAL_ERROR "${PROGRAM} exited with ${code}, README promises 0\n${shown}")
endif()

set(rest "${out}")
set(after_dashes OFF)
set(checked 0)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  set(arg "${CMAKE_ARGV${i}}")
  if(NOT after_dashes)
    if(arg STREQUAL "--")
      set(after_dashes ON)
    endif()
    continue()
  endif()
  string(REGEX MATCH "${arg}" found "${rest}")
  if(found STREQUAL "")
    message(FATAL_ERROR "${PROGRAM}: output does not match what README promises:\n"
                        "expected (regex) '${arg}'\n${shown}")
  endif()
  string(FIND "${rest}" "${found}" at)
  string(LENGTH "${found}" length)
  math(EXPR next "${at} + ${length}")
  string(SUBSTRING "${rest}" ${next} -1 rest)
  math(EXPR checked "${checked} + 1")
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "expect_output.cmake: no regex after `--`: nothing would be checked")
endif()

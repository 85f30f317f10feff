# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Runs one hostile case: a weft program on a bad input, and checks that it
# failed (or succeeded) cleanly.
#   cmake -DPROGRAM=<file> -DEXIT=<code> -DEXPECT=<regex> -DWORKDIR=<folder>
#         [-DFORBID=<regex>] [-DSECONDS=<limit>] [-DMEMORY_LIMIT_KB=<kb>]
#         [-DSTDIN=<file>] [-DSTDOUT=<file>] [-DWRITES=<file|file...>] [-DNO_FILES=ON]
#         -P run_case.cmake -- <arguments...>
# The program runs in WORKDIR, emptied first, so relative outputs land there.
# Checks: the exit code is EXIT exactly (a signal, a crash or a time-out never
# is); stdout+stderr match EXPECT and not FORBID; a failure says something on
# stderr; every file in WRITES (relative to WORKDIR) exists afterwards; with
# NO_FILES the program left WORKDIR empty. MEMORY_LIMIT_KB runs the program
# under `ulimit -v`; SECONDS (default 30) bounds it.
cmake_minimum_required(VERSION 3.25)

include(${CMAKE_CURRENT_LIST_DIR}/../script_arguments.cmake)

if(NOT DEFINED SECONDS)
  set(SECONDS 30)
endif()
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")

set(command "${PROGRAM}" ${arguments})
if(DEFINED MEMORY_LIMIT_KB)
  # sh sets the limit, then becomes the program: its arguments pass untouched.
  set(command sh -c "ulimit -v \"$0\" && exec \"$@\"" "${MEMORY_LIMIT_KB}" "${PROGRAM}" ${arguments})
endif()
set(redirections)
if(DEFINED STDIN)
  list(APPEND redirections INPUT_FILE "${STDIN}")
endif()
if(DEFINED STDOUT)
  list(APPEND redirections OUTPUT_FILE "${STDOUT}")
endif()
execute_process(COMMAND ${command} ${redirections} WORKING_DIRECTORY "${WORKDIR}" TIMEOUT ${SECONDS}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)

set(problems)
if(NOT code STREQUAL EXIT)
  # A string rather than a number: killed by a signal, or timed out.
  list(APPEND problems "exit: ${code}, expected ${EXIT}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  list(APPEND problems "output does not match: ${EXPECT}")
endif()
if(DEFINED FORBID AND "${out}${err}" MATCHES "${FORBID}")
  list(APPEND problems "output matches what it must not: ${FORBID}")
endif()
if(NOT EXIT STREQUAL "0" AND err STREQUAL "")
  list(APPEND problems "nothing on stderr, but the run failed")
endif()
string(REPLACE "|" ";" WRITES "${WRITES}")
foreach(written IN LISTS WRITES)
  if(NOT EXISTS "${WORKDIR}/${written}")
    list(APPEND problems "did not write ${written}")
  endif()
endforeach()
if(NO_FILES)
  file(GLOB left RELATIVE "${WORKDIR}" "${WORKDIR}/*")
  if(left)
    list(APPEND problems "left files behind: ${left}")
  endif()
endif()

if(problems)
  get_filename_component(name "${PROGRAM}" NAME)
  list(JOIN arguments " " command_line)
  list(JOIN problems "\n  " problem_lines)
  message(FATAL_ERROR "${name} ${command_line}\n  ${problem_lines}\n--- stdout ---\n${out}--- stderr ---\n${err}")
endif()

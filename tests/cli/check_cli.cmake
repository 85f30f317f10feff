# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Runs the weft program once and checks what it did:
#   cmake -DWEFT=<program> -DEXIT=<code> [-DSTDOUT=<regex>] [-DSTDERR=<regex>]
#         [-DSTDOUT_FILE=<file>] [-DSTDIN=<file>] [-DWRITES=<file> -DWRITES_FILE=<file>]
#         -P check_cli.cmake -- <arguments...>
# STDOUT_FILE: standard output must equal that file. WRITES and WRITES_FILE:
# the program must write the file WRITES (removed first), equal to WRITES_FILE.
# Whatever is given, a run
# that exits 0 must print nothing on stderr, and one that fails must say why
# on stderr and, unless STDOUT is given, print nothing on stdout.
cmake_minimum_required(VERSION 3.25)

include(${CMAKE_CURRENT_LIST_DIR}/../script_arguments.cmake)

set(input_option)
if(DEFINED STDIN)
  set(input_option INPUT_FILE "${STDIN}")
endif()
if(DEFINED WRITES)
  file(REMOVE "${WRITES}")
endif()
execute_process(COMMAND "${WEFT}" ${arguments} ${input_option}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)

set(problems)
if(NOT code STREQUAL EXIT)
  list(APPEND problems "exit code ${code}, expected ${EXIT}")
endif()
if(DEFINED STDOUT AND NOT out MATCHES "${STDOUT}")
  list(APPEND problems "stdout does not match: ${STDOUT}")
endif()
if(DEFINED STDERR AND NOT err MATCHES "${STDERR}")
  list(APPEND problems "stderr does not match: ${STDERR}")
endif()
if(DEFINED STDOUT_FILE)
  file(READ "${STDOUT_FILE}" expected)
  if(NOT out STREQUAL expected)
    list(APPEND problems "stdout differs from ${STDOUT_FILE}")
  endif()
endif()
if(DEFINED WRITES)
  if(NOT EXISTS "${WRITES}")
    list(APPEND problems "${WRITES} was not written")
  else()
    file(READ "${WRITES}" written)
    file(READ "${WRITES_FILE}" expected)
    if(NOT written STREQUAL expected)
      list(APPEND problems "${WRITES} differs from ${WRITES_FILE}")
    endif()
  endif()
endif()
if(EXIT STREQUAL "0" AND NOT err STREQUAL "")
  list(APPEND problems "stderr is not empty on success")
endif()
if(NOT EXIT STREQUAL "0")
  if(err STREQUAL "")
    list(APPEND problems "stderr is empty on failure")
  endif()
  if(NOT DEFINED STDOUT AND NOT out STREQUAL "")
    list(APPEND problems "stdout is not empty on failure")
  endif()
endif()

if(problems)
  list(JOIN arguments " " command_line)
  list(JOIN problems "\n  " problem_lines)
  message(FATAL_ERROR "weft ${command_line}\n  ${problem_lines}\n--- stdout ---\n${out}--- stderr ---\n${err}")
endif()

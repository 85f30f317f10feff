# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Runs the weft program, which must exit 0 with one JSON document on stdout,
# and checks fields of that document:
#   cmake -DWEFT=<program> "-DFIELDS=<path>=<value>|<path>=<value>..."
#         -P check_json_fields.cmake -- <arguments...>
# A path is keys and array indices joined by dots ("executor.devices.0.kind");
# values compare as CMake's string(JSON GET) prints them (true is ON, false
# OFF, null is empty). "<path>=*" only asks that the field exists.
cmake_minimum_required(VERSION 3.25)

include(${CMAKE_CURRENT_LIST_DIR}/../script_arguments.cmake)

execute_process(COMMAND "${WEFT}" ${arguments} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)

set(problems)
if(NOT code STREQUAL "0")
  list(APPEND problems "exit code ${code}, expected 0")
endif()
if(NOT err STREQUAL "")
  list(APPEND problems "stderr is not empty on success")
endif()
string(JSON type ERROR_VARIABLE parse_error TYPE "${out}")
if(parse_error)
  list(APPEND problems "stdout is not JSON: ${parse_error}")
else()
  string(REPLACE "|" ";" fields "${FIELDS}")
  foreach(field IN LISTS fields)
    string(FIND "${field}" "=" split)
    string(SUBSTRING "${field}" 0 ${split} path)
    math(EXPR value_start "${split} + 1")
    string(SUBSTRING "${field}" ${value_start} -1 expected)
    string(REPLACE "." ";" keys "${path}")
    string(JSON actual ERROR_VARIABLE get_error GET "${out}" ${keys})
    if(get_error)
      list(APPEND problems "${path}: missing (${get_error})")
    elseif(NOT expected STREQUAL "*" AND NOT actual STREQUAL expected)
      list(APPEND problems "${path} is '${actual}', expected '${expected}'")
    endif()
  endforeach()
endif()

if(problems)
  list(JOIN arguments " " command_line)
  list(JOIN problems "\n  " problem_lines)
  message(FATAL_ERROR "weft ${command_line}\n  ${problem_lines}\n--- stdout ---\n${out}--- stderr ---\n${err}")
endif()

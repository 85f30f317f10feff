# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# README's C++ blocks are the files of examples/readme, verbatim: each block
# follows a marker line naming its file,
#
#   <!-- file: examples/readme/first_program.cpp -->
#   ```cpp
#   ...the file's text...
#   ```
#
# This script fails, listing every problem, when a block differs from its
# file, a ```cpp block has no marker, a marker names a missing file, or a
# program in examples/readme is not in README. With -DUPDATE=ON it copies the
# files into README instead (after editing a program).
#
#   cmake -DROOT=<repository> [-DREADME=<file>] [-DUPDATE=ON] -P check_readme.cmake
cmake_minimum_required(VERSION 3.25)  # policies: while(TRUE) and if() as documented
if(NOT DEFINED ROOT)
  get_filename_component(ROOT "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
endif()
if(NOT DEFINED README)
  set(README "${ROOT}/README.md")
endif()
set(marker_open "<!-- file: ")
set(marker_close " -->\n")
set(fence_open "```cpp\n")
set(fence_close "\n```")

file(READ "${README}" text)
set(rest "${text}")
set(updated "")
set(problems "")
set(named "")
set(markers 0)
while(TRUE)
  string(FIND "${rest}" "${marker_open}" at)
  if(at EQUAL -1)
    string(APPEND updated "${rest}")
    break()
  endif()
  math(EXPR markers "${markers} + 1")
  string(LENGTH "${marker_open}" skip)
  math(EXPR name_at "${at} + ${skip}")
  string(SUBSTRING "${rest}" 0 ${name_at} before)
  string(APPEND updated "${before}")
  string(SUBSTRING "${rest}" ${name_at} -1 rest)
  string(FIND "${rest}" "${marker_close}" name_end)
  if(name_end EQUAL -1)
    string(APPEND problems "  a '${marker_open}' marker is not closed by '-->' at the end of its line\n")
    break()
  endif()
  string(SUBSTRING "${rest}" 0 ${name_end} name)
  string(LENGTH "${marker_close}" skip)
  math(EXPR after_marker "${name_end} + ${skip}")
  string(SUBSTRING "${rest}" 0 ${after_marker} marker_tail)
  string(APPEND updated "${marker_tail}")
  string(SUBSTRING "${rest}" ${after_marker} -1 rest)
  list(APPEND named "${name}")

  # The block must start on the marker's next line.
  string(LENGTH "${fence_open}" open_length)
  string(SUBSTRING "${rest}" 0 ${open_length} opening)
  if(NOT opening STREQUAL fence_open)
    string(APPEND problems "  ${name}: the line after its marker is not ```cpp\n")
    continue()
  endif()
  string(SUBSTRING "${rest}" ${open_length} -1 body_and_rest)
  string(FIND "${body_and_rest}" "${fence_close}" body_end)
  if(body_end EQUAL -1)
    string(APPEND problems "  ${name}: its ```cpp block is never closed\n")
    string(APPEND updated "${rest}")
    break()
  endif()
  math(EXPR body_length "${body_end} + 1")  # the block's text keeps its last newline
  string(SUBSTRING "${body_and_rest}" 0 ${body_length} block)
  string(SUBSTRING "${body_and_rest}" ${body_length} -1 rest)

  if(NOT EXISTS "${ROOT}/${name}")
    string(APPEND problems "  ${name}: README names it, but there is no such file\n")
    string(APPEND updated "${fence_open}${block}")
    continue()
  endif()
  file(READ "${ROOT}/${name}" program)
  string(APPEND updated "${fence_open}${program}")
  if(NOT block STREQUAL program)
    string(APPEND problems "  ${name}: README's block differs from the file\n")
  endif()
endwhile()

# Every ```cpp block has its marker, and every program is in README.
string(REGEX MATCHALL "```cpp\n" fences "${text}")
list(LENGTH fences fence_count)
if(NOT fence_count EQUAL markers)
  string(APPEND problems
         "  README has ${fence_count} ```cpp blocks and ${markers} '${marker_open}' markers: "
         "give each block the file it comes from\n")
endif()
file(GLOB programs RELATIVE "${ROOT}" "${ROOT}/examples/readme/*.cpp" "${ROOT}/examples/readme/*.cu")
foreach(program IN LISTS programs)
  list(FIND named "${program}" found)
  if(found EQUAL -1)
    string(APPEND problems "  ${program}: not in README (add a marker and its block)\n")
  endif()
endforeach()

if(UPDATE)
  # Only differing blocks are UPDATE's to mend; with any other problem README
  # is left as it is.
  string(REGEX REPLACE "[^\n]*differs from the file\n" "" problems "${problems}")
  if(problems STREQUAL "" AND NOT updated STREQUAL text)
    file(WRITE "${README}" "${updated}")
    message(STATUS "check_readme: copied the programs into ${README}")
  endif()
endif()
if(NOT problems STREQUAL "")
  message(FATAL_ERROR "${README} and examples/readme/ disagree:\n${problems}"
                      "Edit the program in examples/readme/, then copy it into README with\n"
                      "  cmake -DUPDATE=ON -P examples/readme/check_readme.cmake")
endif()

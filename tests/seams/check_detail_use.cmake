# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Checks that one layer uses only the public API of another: no name that
# INTERNAL's `namespace detail` blocks declare (and its public API does not
# overload) appears in USER's sources as detail::name, as a type name, or in
# an unqualified call. Internal headers of INTERNAL
# (include/weft/<layer>/detail/) may not be included either.
#
#   cmake -DINTERNAL=<dir> -DUSER=<dir> -DLAYER=<name> -P check_detail_use.cmake
#
# Exits non-zero listing every use found. A textual check: it reads the
# clang-formatted sources (namespace contents are not indented, and a detail
# block ends with "}  // namespace detail").
# A file's lines as a CMake list. Semicolons and square brackets would split
# or join list elements, so they become "," "<" and ">" (nothing matched
# below needs them).
function(read_lines path out)
  file(READ "${path}" text)
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "[" "<" text "${text}")
  string(REPLACE "]" ">" text "${text}")
  string(REPLACE "\n" ";" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

if(NOT DEFINED INTERNAL OR NOT DEFINED USER OR NOT DEFINED LAYER)
  message(FATAL_ERROR "usage: cmake -DINTERNAL=<dir> -DUSER=<dir> -DLAYER=<name> -P check_detail_use.cmake")
endif()

# ---- the names INTERNAL declares in detail (and, apart, outside it) ----------
file(GLOB_RECURSE internal_headers "${INTERNAL}/*.hpp")
set(names "")
set(public_names "")
foreach(header IN LISTS internal_headers)
  read_lines("${header}" lines)
  set(inside FALSE)
  foreach(line IN LISTS lines)
    if(line MATCHES "^namespace (weft::)?detail {")
      set(inside TRUE)
      continue()
    endif()
    if(line MATCHES "^}  // namespace (weft::)?detail")
      set(inside FALSE)
      continue()
    endif()
    set(name "")
    # Types and aliases (declared at namespace scope: no indentation).
    if(line MATCHES "^(template <[^>]*> )?(struct|class|union|enum class|enum) ([A-Za-z_][A-Za-z0-9_]*)")
      set(name "${CMAKE_MATCH_3}")
    elseif(line MATCHES "^using ([A-Za-z_][A-Za-z0-9_]*) =")
      set(name "${CMAKE_MATCH_1}")
    # Functions and variables: a name followed by "(" or "{" on an
    # unindented declaration line.
    elseif(line MATCHES "^[A-Za-z][^(=;/]* [*&]?([A-Za-z_][A-Za-z0-9_]*)[({]")
      set(name "${CMAKE_MATCH_1}")
    endif()
    if(name STREQUAL "")
      continue()
    elseif(inside)
      list(APPEND names "${name}")
    else()
      list(APPEND public_names "${name}")
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES names)
if(public_names)
  list(REMOVE_ITEM names ${public_names})  # overloaded in the public API too (to_string, say)
endif()
list(LENGTH names count)
if(count EQUAL 0)
  message(FATAL_ERROR "check_detail_use: found no detail names under ${INTERNAL}; the parser needs updating")
endif()

# ---- their uses in USER ----------------------------------------------------------
file(GLOB_RECURSE user_sources "${USER}/*.hpp" "${USER}/*.cpp" "${USER}/*.cu" "${USER}/*.cuh")
set(found "")
foreach(source IN LISTS user_sources)
  read_lines("${source}" lines)
  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    if(line MATCHES "#include <weft/${LAYER}/detail/")
      list(APPEND found "${source}:${number}: includes an internal header of ${LAYER}: ${line}")
    endif()
    string(REGEX REPLACE "//.*$" "" code "${line}")  # comments may name anything
    foreach(name IN LISTS names)
      if(code MATCHES "detail::${name}([^A-Za-z0-9_]|$)")
        list(APPEND found "${source}:${number}: names ${LAYER}'s detail::${name}")
      elseif(name MATCHES "[A-Z]" AND code MATCHES "(^|[^A-Za-z0-9_:.>])${name}([^A-Za-z0-9_]|$)")
        list(APPEND found "${source}:${number}: names ${LAYER}'s internal ${name}")
      elseif(code MATCHES "(^|[^A-Za-z0-9_:.>])${name}\\(")  # an unqualified call, inside a detail block
        list(APPEND found "${source}:${number}: calls ${LAYER}'s internal ${name}")
      endif()
    endforeach()
  endforeach()
endforeach()

if(found)
  list(JOIN found "\n  " report)
  message(FATAL_ERROR "${USER} reaches into ${LAYER}'s internals (names from its detail namespace; use its "
                      "public API):\n  ${report}")
endif()
list(JOIN names ", " listed)
message(STATUS "${USER} uses none of the ${count} names ${LAYER} keeps in detail: ${listed}")

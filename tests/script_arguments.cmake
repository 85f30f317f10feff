# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# For test scripts run as `cmake -D... -P script.cmake -- <arguments...>`:
# sets `arguments` to the list after the "--".
set(arguments)
set(after_separator FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after_separator)
    list(APPEND arguments "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()

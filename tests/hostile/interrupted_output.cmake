# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# An output cut off mid-write must leave the previous file as it was.
#   cmake -DPROGRAM=<file> -DFILE=<output> -DWORKDIR=<folder> -P interrupted_output.cmake -- <arguments...>
# FILE (relative to WORKDIR, emptied first) holds a previous output; the
# program runs under a file-size limit of one block (ulimit -f 1), which the
# new output exceeds: the kernel stops the write (SIGXFSZ) as an interrupt or
# a full disk would. The run must fail, and FILE must hold exactly what it
# held before.
cmake_minimum_required(VERSION 3.25)

include(${CMAKE_CURRENT_LIST_DIR}/../script_arguments.cmake)

file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
set(previous "the previous, good output\n")
file(WRITE "${WORKDIR}/${FILE}" "${previous}")

execute_process(COMMAND sh -c "ulimit -c 0 && ulimit -f 1 && exec \"$@\"" sh "${PROGRAM}" ${arguments}
                WORKING_DIRECTORY "${WORKDIR}" TIMEOUT 60 RESULT_VARIABLE code OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(code STREQUAL "0")
  message(FATAL_ERROR "the run succeeded: the output fit in the file-size limit, so nothing was cut off")
endif()
file(READ "${WORKDIR}/${FILE}" now)
if(NOT now STREQUAL previous)
  string(LENGTH "${now}" bytes)
  message(FATAL_ERROR "${FILE} was written in place: it now holds ${bytes} bytes of a cut-off output "
                      "instead of the previous file (exit: ${code})")
endif()

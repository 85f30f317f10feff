# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Loading a JSON document that does not fit in the memory left must end in
# the clean "not enough memory" error, never an abort. nlohmann's teardown of
# a half-built array allocates, and an allocation failing while a bad_alloc
# unwinds called std::terminate.
#   cmake -DPROGRAM=<weft> -DWORKDIR=<folder> -DLIMIT_KB=<address space> -DEXPECT=<regex>
#         -P json_out_of_memory.cmake -- <arguments, with big.json among them>
# big.json (22 MB, 400,000 trace events; it takes about 15 times that to
# load) is written in WORKDIR; the program runs there under ulimit -v.
cmake_minimum_required(VERSION 3.25)

include(${CMAKE_CURRENT_LIST_DIR}/../script_arguments.cmake)

file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
set(event "{\"name\":\"step\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":0,\"tid\":0}")
string(REPEAT "${event}," 399999 events)
file(WRITE "${WORKDIR}/big.json" "{\"traceEvents\":[${events}${event}]}")

execute_process(COMMAND sh -c "ulimit -c 0 && ulimit -v ${LIMIT_KB} && exec \"$@\"" sh "${PROGRAM}" ${arguments}
                WORKING_DIRECTORY "${WORKDIR}" TIMEOUT 60 RESULT_VARIABLE code OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
file(REMOVE_RECURSE "${WORKDIR}")
if(NOT code STREQUAL "1" OR NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "weft ${arguments} under ulimit -v ${LIMIT_KB}\n  exit: ${code}, expected 1\n"
                      "  expected on stderr: ${EXPECT}\n--- stderr ---\n${err}")
endif()

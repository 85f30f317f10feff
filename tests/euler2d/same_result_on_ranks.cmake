# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Runs an example as one process and under mpiexec on RANKS ranks, with the
# same arguments, and checks that both succeed and print the same result:
#   cmake -DPROGRAM=<example> -DMPIEXEC=<mpiexec> -DNUMPROC_FLAG=-n -DRANKS=<n>
#         "-DMPIEXEC_FLAGS=<flags, space-separated>" -DRESULT=<regex with one group>
#         [-DRANKS_SHOWN=<regex the distributed run must print>]
#         -P same_result_on_ranks.cmake -- <arguments...>
# RESULT's group is what must be equal, character for character (euler2d's
# checksum, a hash of every bit of the final state). Used by the euler2d and
# heat2d tests (examples/).
cmake_minimum_required(VERSION 3.25)

include(${CMAKE_CURRENT_LIST_DIR}/../script_arguments.cmake)
separate_arguments(flags UNIX_COMMAND "${MPIEXEC_FLAGS}")

execute_process(COMMAND "${PROGRAM}" ${arguments} RESULT_VARIABLE one_code OUTPUT_VARIABLE one_out
                ERROR_VARIABLE one_err)
execute_process(COMMAND "${MPIEXEC}" ${NUMPROC_FLAG} ${RANKS} ${flags} "${PROGRAM}" ${arguments}
                RESULT_VARIABLE ranks_code OUTPUT_VARIABLE ranks_out ERROR_VARIABLE ranks_err)

set(problems)
foreach(run one ranks)
  if(NOT ${run}_code STREQUAL "0")
    list(APPEND problems "the ${run} run exited with ${${run}_code}")
  elseif(NOT ${run}_out MATCHES "${RESULT}")
    list(APPEND problems "the ${run} run printed no result matching ${RESULT}")
  else()
    set(${run}_result "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(NOT problems AND NOT one_result STREQUAL ranks_result)
  list(APPEND problems "one process: ${one_result}; ${RANKS} ranks: ${ranks_result}")
endif()
if(DEFINED RANKS_SHOWN AND NOT ranks_out MATCHES "${RANKS_SHOWN}")
  list(APPEND problems "the ${RANKS}-rank run does not say ${RANKS_SHOWN}")
endif()

if(problems)
  list(JOIN arguments " " command_line)
  list(JOIN problems "\n  " problem_lines)
  message(FATAL_ERROR "${PROGRAM} ${command_line}\n  ${problem_lines}\n"
                      "--- one process ---\n${one_out}${one_err}--- ${RANKS} ranks ---\n${ranks_out}${ranks_err}")
endif()
message(STATUS "one process and ${RANKS} ranks: ${one_result}")

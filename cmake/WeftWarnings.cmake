# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Warning and sanitizer flags shared by every weft target.
add_library(weft_build_flags INTERFACE)
target_compile_options(weft_build_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${WEFT_WERROR}>>:-Werror>)
# GCC 12 at -O3 (Release) reports -Wrestrict inside libstdc++ for any
# "literal" + std::string (GCC bug 105651), which failed Release
# builds with WEFT_WERROR in three places that do nothing wrong.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(weft_build_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()

if(WEFT_SANITIZE STREQUAL "thread")
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=thread> $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=thread)
elseif(WEFT_SANITIZE STREQUAL "address")
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=address,undefined)
elseif(NOT WEFT_SANITIZE STREQUAL "")
  message(FATAL_ERROR "WEFT_SANITIZE must be thread, address or empty (got '${WEFT_SANITIZE}')")
endif()

# weft_add_layer(<name> [SOURCES ...] [LINKS ...]) makes the library target
# weft_<name> with its public headers under <name>/include.
function(weft_add_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINKS;PRIVATE_LINKS" ${ARGN})
  set(target weft_${name})
  if(ARG_SOURCES)
    add_library(${target} STATIC ${ARG_SOURCES})
    set(scope PUBLIC)
    target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:weft_build_flags> ${ARG_PRIVATE_LINKS})
    # Position-independent, so that the static libraries can go into a
    # shared library; -fno-semantic-interposition keeps that from costing
    # speed: without it GCC may not inline or specialise calls between a
    # library's own functions (any could be interposed), which made the
    # task-DAG's per-task path 3% slower. (Thread-locals: see tls_running.)
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-semantic-interposition>)
    endif()
  else()
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
  endif()
  # weft::<name> in this build and, through EXPORT_NAME, in an install.
  add_library(weft::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  target_compile_features(${target} ${scope} cxx_std_20)
  target_include_directories(${target} ${scope}
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  if(ARG_LINKS)
    target_link_libraries(${target} ${scope} ${ARG_LINKS})
  endif()
  set_property(GLOBAL APPEND PROPERTY WEFT_LAYER_TARGETS ${target})
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()

# weft_cuda_sources(<target>): what a target with .cu files of its own needs:
# C++20 for nvcc, and the host compiler's warnings through -Xcompiler, as
# errors with WEFT_WERROR (weft_build_flags covers C++ sources only;
# -Wpedantic is left out: it rejects the line markers nvcc writes into its
# generated host code).
function(weft_cuda_sources target)
  set_target_properties(${target} PROPERTIES CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wshadow>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${WEFT_WERROR}>>:-Werror=all-warnings>)
endfunction()

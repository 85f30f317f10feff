# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Decides whether the CUDA backend is built. AUTO builds it when nvcc is found,
# ON insists on it, OFF leaves it out. Without a GPU or driver the backend still
# builds and simply reports zero devices at run time.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 90)
endif()

set(WEFT_HAS_CUDA OFF)
if(WEFT_ENABLE_CUDA STREQUAL "AUTO" OR WEFT_ENABLE_CUDA STREQUAL "ON")
  if(NOT CMAKE_CUDA_COMPILER)
    find_program(WEFT_NVCC nvcc PATHS /usr/local/cuda/bin NO_CACHE)
    if(WEFT_NVCC)
      set(CMAKE_CUDA_COMPILER "${WEFT_NVCC}")
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    # CMake 3.25 predates nvcc's C++20 support and would refuse cxx_std_20
    # on targets with CUDA sources; teach it the flag nvcc 12+ accepts.
    if(NOT "cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES
       AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
      set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
    endif()
    find_package(CUDAToolkit REQUIRED)
    set(WEFT_HAS_CUDA ON)
  elseif(WEFT_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "WEFT_ENABLE_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
elseif(NOT WEFT_ENABLE_CUDA STREQUAL "OFF")
  message(FATAL_ERROR "WEFT_ENABLE_CUDA must be AUTO, ON or OFF (got '${WEFT_ENABLE_CUDA}')")
endif()
message(STATUS "weft: CUDA backend ${WEFT_HAS_CUDA}")

# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# weft.pc (and weft-mpi.pc when the mpi layer is built) for pkg-config users:
#   g++ -std=c++20 app.cpp $(pkg-config --cflags --libs weft)
# The layers are static libraries, so everything they link (hwloc, threads,
# cudart) is in Libs or Requires, not in the .private fields. The C++ standard
# is left to the consumer (at least -std=c++20): a -std in Cflags would pull a
# C++23 project back to C++20.

# weft_pc_library_flags(<out> <targets...>): -l flags for the static layer
# libraries among <targets>, in link order (a layer before the ones it uses).
function(weft_pc_library_flags out)
  set(flags "")
  foreach(target IN LISTS ARGN)
    get_target_property(type ${target} TYPE)
    if(NOT type STREQUAL "STATIC_LIBRARY")
      continue()
    endif()
    get_target_property(name ${target} OUTPUT_NAME)
    if(NOT name)
      set(name ${target})
    endif()
    list(PREPEND flags "-l${name}")  # WEFT_LAYER_TARGETS lists the layers bottom-up
  endforeach()
  list(JOIN flags " " flags)
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

# The .pc files find the prefix from their own place, so an installed tree
# can be moved (cmake --install --prefix, DESTDIR).
set(weft_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(weft_pc_prefix "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH weft_pc_up "/root/${weft_pc_dir}" "/root")
  string(REGEX REPLACE "/$" "" weft_pc_up "${weft_pc_up}")  # ../..
  set(weft_pc_prefix "\${pcfiledir}/${weft_pc_up}")
endif()
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(weft_pc_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(weft_pc_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()

get_property(weft_pc_targets GLOBAL PROPERTY WEFT_LAYER_TARGETS)
list(REMOVE_ITEM weft_pc_targets weft_mpi)
weft_pc_library_flags(weft_pc_libs ${weft_pc_targets})
set(weft_pc_cflags "-I\${includedir}")
set(weft_pc_extra_libs "-lpthread")
if(WEFT_HAS_CUDA)
  foreach(dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
    string(APPEND weft_pc_cflags " -I${dir}")
  endforeach()
  string(PREPEND weft_pc_extra_libs "-L${CUDAToolkit_LIBRARY_DIR} -lcudart ")
endif()
configure_file(cmake/weft.pc.in ${CMAKE_CURRENT_BINARY_DIR}/weft.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/weft.pc DESTINATION ${weft_pc_dir})

if(WEFT_HAS_MPI)
  weft_pc_library_flags(weft_pc_mpi_libs weft_mpi)
  # MPI's own .pc name differs between Open MPI and MPICH; FindMPI's answer
  # is the same everywhere.
  set(weft_pc_mpi_cflags "")
  foreach(dir IN LISTS MPI_CXX_INCLUDE_DIRS)
    string(APPEND weft_pc_mpi_cflags " -I${dir}")
  endforeach()
  foreach(definition IN LISTS MPI_CXX_COMPILE_DEFINITIONS)
    string(APPEND weft_pc_mpi_cflags " -D${definition}")
  endforeach()
  list(JOIN MPI_CXX_LIBRARIES " " weft_pc_mpi_extra_libs)
  configure_file(cmake/weft-mpi.pc.in ${CMAKE_CURRENT_BINARY_DIR}/weft-mpi.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/weft-mpi.pc DESTINATION ${weft_pc_dir})
endif()

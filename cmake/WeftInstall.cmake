# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# `cmake --install` puts headers, the layer libraries, weftConfig.cmake (with
# its version file) and weft.pc under the prefix, so an outside project can
# find_package(weft 0.1) and link weft::weft, or ask pkg-config (docs/install.md).
# Only the layers and the umbrella are exported: weft_build_flags (warnings,
# -Werror) reaches the layers through $<BUILD_INTERFACE:...> and stays here.
include(CMakePackageConfigHelpers)
get_property(weft_layer_targets GLOBAL PROPERTY WEFT_LAYER_TARGETS)
install(TARGETS weft ${weft_layer_targets} EXPORT weftTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT weftTargets NAMESPACE weft:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft)
configure_package_config_file(cmake/weftConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/weftConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft)
# 0.x: a new minor version may break the API, so 0.1 accepts 0.1.* only.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/weftConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/weftConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/weftConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft)

include(cmake/WeftPkgConfig.cmake)

# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The API reference: Doxygen over the public headers (docs/Doxyfile.in).
#   cmake -S . -B build -DWEFT_BUILD_DOCS=ON && cmake --build build --target weft_docs
# writes build/docs/html/index.html. Needs Debian's doxygen (and awk, for the
# filter that reads the headers' // comments: docs/doxygen-filter.awk). With
# WEFT_WERROR=ON a Doxygen warning fails the target, as tools/ci/check-docs
# expects.
option(WEFT_BUILD_DOCS "Add the weft_docs target: the Doxygen API reference (needs doxygen)" OFF)
include(FeatureSummary)
add_feature_info(weft.docs WEFT_BUILD_DOCS "the weft_docs target, Doxygen API reference (WEFT_BUILD_DOCS)")
if(NOT WEFT_BUILD_DOCS)
  return()
endif()

find_package(Doxygen REQUIRED)
find_program(WEFT_AWK NAMES awk mawk gawk REQUIRED)

set(WEFT_DOCS_OUTPUT_DIR ${PROJECT_BINARY_DIR}/docs)
# Every layer's public headers, the mpi layer's too (built or not), the
# umbrella header and the generated config header; quoted for Doxygen, which
# splits lists at spaces.
set(WEFT_DOCS_INPUT)
foreach(dir backends/include memory/include runtime/include views/include graph/include mpi/include include)
  string(APPEND WEFT_DOCS_INPUT " \"${PROJECT_SOURCE_DIR}/${dir}\"")
endforeach()
string(APPEND WEFT_DOCS_INPUT " \"${PROJECT_BINARY_DIR}/backends/generated\"")
set(WEFT_DOCS_STRIP "${WEFT_DOCS_INPUT}")
if(WEFT_WERROR)
  set(WEFT_DOCS_WARN_AS_ERROR FAIL_ON_WARNINGS)
else()
  set(WEFT_DOCS_WARN_AS_ERROR NO)
endif()
configure_file(${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${WEFT_DOCS_OUTPUT_DIR}/Doxyfile @ONLY)

file(GLOB_RECURSE weft_public_headers CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/*/include/weft/*.hpp ${PROJECT_SOURCE_DIR}/include/weft/*.hpp)
add_custom_command(
  OUTPUT ${WEFT_DOCS_OUTPUT_DIR}/html/index.html
  COMMAND ${DOXYGEN_EXECUTABLE} ${WEFT_DOCS_OUTPUT_DIR}/Doxyfile
  DEPENDS ${WEFT_DOCS_OUTPUT_DIR}/Doxyfile ${weft_public_headers}
          ${PROJECT_SOURCE_DIR}/docs/doxygen-filter.awk
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
  COMMENT "weft_docs: Doxygen API reference in ${WEFT_DOCS_OUTPUT_DIR}/html"
  VERBATIM)
add_custom_target(weft_docs DEPENDS ${WEFT_DOCS_OUTPUT_DIR}/html/index.html)

# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# One line per option at the end of configuring: what this build of weft
# contains and what it leaves out. A parent project that adds weft as a
# subproject gets the lines in its own feature_summary() instead.
include(FeatureSummary)
set(weft_sanitize_on OFF)
if(WEFT_SANITIZE)
  set(weft_sanitize_on ON)
endif()
add_feature_info(weft.CUDA WEFT_HAS_CUDA "CUDA backend (WEFT_ENABLE_CUDA=${WEFT_ENABLE_CUDA})")
add_feature_info(weft.MPI WEFT_HAS_MPI "mpi layer, distributed graphs (WEFT_ENABLE_MPI=${WEFT_ENABLE_MPI})")
add_feature_info(weft.tests WEFT_BUILD_TESTS "doctest suites (WEFT_BUILD_TESTS)")
add_feature_info(weft.examples WEFT_BUILD_EXAMPLES "examples (WEFT_BUILD_EXAMPLES)")
add_feature_info(weft.benchmarks WEFT_BUILD_BENCHMARKS "tools/bench (WEFT_BUILD_BENCHMARKS)")
add_feature_info(weft.tools WEFT_BUILD_TOOLS "the weft command-line program (WEFT_BUILD_TOOLS)")
add_feature_info(weft.fuzzers WEFT_BUILD_FUZZERS "libFuzzer targets (WEFT_BUILD_FUZZERS)")
add_feature_info(weft.sanitizer weft_sanitize_on "sanitizer build (WEFT_SANITIZE=${WEFT_SANITIZE})")
add_feature_info(weft.Werror WEFT_WERROR "warnings are errors (WEFT_WERROR)")
if(PROJECT_IS_TOP_LEVEL)
  feature_summary(WHAT ALL)
endif()

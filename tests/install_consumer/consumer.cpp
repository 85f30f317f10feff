// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runs a three-node work-DAG through weft as an outside project sees it
// (installed, through pkg-config, or as a subproject), and checks that the
// version macros agree with the version the build system found
// (WEFT_EXPECTED_VERSION, a string such as "0.1.0").
#include <weft/weft.hpp>

#include <cstdio>
#include <string>
#include <vector>

#ifndef WEFT_EXPECTED_VERSION
#error "compile with -DWEFT_EXPECTED_VERSION=\"<the version found>\""
#endif

int main() {
  const std::string parts = std::to_string(WEFT_VERSION_MAJOR) + "." + std::to_string(WEFT_VERSION_MINOR) +
                            "." + std::to_string(WEFT_VERSION_PATCH);
  std::printf("weft %s (WEFT_VERSION_MAJOR.MINOR.PATCH %s)\n", WEFT_VERSION_STRING, parts.c_str());
  if (parts != WEFT_EXPECTED_VERSION || std::string(WEFT_VERSION_STRING) != WEFT_EXPECTED_VERSION) {
    std::printf("version macros differ from the version found: %s\n", WEFT_EXPECTED_VERSION);
    return 1;
  }

  weft::Crs<int> dag;  // 0 -> 2, 1 -> 2
  dag.row_map = {0, 1, 2, 2};
  dag.entries = {2, 2};
  std::vector<int> value(3, 0);
  weft::Executor executor;
  weft::parallel_for(executor, weft::WorkGraphPolicy<int>(dag), [&](int i) {
    value[static_cast<std::size_t>(i)] = i < 2 ? i + 1 : value[0] + value[1];
  });
  std::printf("weft works: %d + %d = %d\n", value[0], value[1], value[2]);
  return value[2] == 3 ? 0 : 1;
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The names of euler2d's output files that derive from the names given:
// frames after --png, traces a rank after --trace.
//
//   frame_name("out/run.png", 40) == "out/run_000040.png"
//   rank_trace_name("t.json", 1) == "t.1.json"
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace weft::euler {

// Where `path`'s extension starts (its size when it has none): the last
// dot of its last component, unless that dot opens the component (".../.x").
inline std::size_t extension_start(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  return has_extension ? dot : path.size();
}

// The frame --png-every writes at `step`: --png's name with the step before
// its extension ("out/run.png", step 40: "out/run_000040.png").
inline std::string frame_name(const std::string& png, long step) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "_%06ld", step);
  const std::size_t at = extension_start(png);
  return png.substr(0, at) + digits + png.substr(at);
}

// The trace file of `rank` of a run over ranks: path with ".RANK" before its
// extension (t.json: t.0.json, t.1.json, ..., which weft trace merge
// joins); path itself for one process (rank < 0).
inline std::string rank_trace_name(const std::string& path, int rank) {
  if (rank < 0 || path.empty()) return path;
  const std::size_t at = extension_start(path);
  return path.substr(0, at) + "." + std::to_string(rank) + path.substr(at);
}

}  // namespace weft::euler

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// euler2d's command-line options, shared by the host and the GPU runs.
#pragma once

#include <cstddef>
#include <string>

#include "../usage_error.hpp"

namespace weft::euler {

struct Options {
  std::string problem = "shock-bubble";
  std::string size = "800x400";
  std::size_t partitions = 4, sub_partitions = 1;
  long steps = 0;
  double end_time = -1.0;  // < 0: the problem's default
  std::string layout = "strided";
  int threads = 0;  // 0: the machine's cores
  int gpus = 0;
  double cfl = 0.9;
  std::string field = "density";  // what the images show: density, pressure, velocity or schlieren
  std::string png;                // main sets the default, euler2d_<field>.png; "" for none
  long png_every = 0;             // frames: png's name with _<step> before its extension
  std::string vtk;                // a .vti file ("" for none); over ranks a piece a rank and a .pvti
  std::string dump_graph, trace;
  bool quiet = false;
  bool checksum = false;             // print a hash of the final state, to compare runs bit for bit
  bool ignore_memory_limit = false;  // run even when the fields cannot fit in memory
};

using weft::examples::UsageError;  // exit 2

}  // namespace weft::euler

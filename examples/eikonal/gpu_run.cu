// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// eikonal --gpus: the same run as on the host (run.hpp) with the solver's
// fields in GPU memory (gpu_solver.cuh). nvcc compiles this file.
#include "gpu_run.hpp"
#include "gpu_solver.cuh"

namespace weft::eikonal {

int run_on_gpus(const Options& o, const Problem& p) {
  const bool strided = o.layout == "strided";
  if (o.precision == "float")
    return strided ? solve<float, StridedView, GpuPlace>(o, p) : solve<float, ContiguousView, GpuPlace>(o, p);
  return strided ? solve<double, StridedView, GpuPlace>(o, p) : solve<double, ContiguousView, GpuPlace>(o, p);
}

}  // namespace weft::eikonal

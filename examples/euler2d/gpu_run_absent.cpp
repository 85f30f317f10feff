// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// euler2d --gpus in a build without weft's CUDA backend.
#include "gpu_run.hpp"

namespace weft::euler {

namespace {

[[noreturn]] void refuse() {
  throw UsageError(
      "--gpus: this weft was built without the CUDA backend (no nvcc found, or WEFT_ENABLE_CUDA=OFF)");
}

}  // namespace

int run_on_gpus(const Options&, SolverConfig, const weft::examples::OneProcess&) { refuse(); }
#if WEFT_EXAMPLES_MPI
int run_on_gpus(const Options&, SolverConfig, const weft::examples::MpiRanks&) { refuse(); }
#endif

}  // namespace weft::euler

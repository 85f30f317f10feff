// euler2d --gpus in a build without weft's CUDA backend.
#include "gpu_run.hpp"

namespace weft::euler {

int run_on_gpus(const Options& /*o*/, SolverConfig /*config*/) {
  throw UsageError(
      "--gpus: this weft was built without the CUDA backend (no nvcc found, or WEFT_ENABLE_CUDA=OFF)");
}

}  // namespace weft::euler

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// eikonal --gpus in a build without weft's CUDA backend.
#include "gpu_run.hpp"

namespace weft::eikonal {

int run_on_gpus(const Options&, const Problem&) {
  throw weft::examples::UsageError(
      "--gpus: this weft was built without the CUDA backend (no nvcc found, or WEFT_ENABLE_CUDA=OFF)");
}

}  // namespace weft::eikonal

// euler2d --gpus: the same solver and run as on the host (run_solver.hpp),
// instantiated with its kernels on the GPU. nvcc compiles this file.
#include <weft/views/cuda/block_kernel_cuda.cuh>

#include "gpu_run.hpp"
#include "run_solver.hpp"

namespace weft::euler {

int run_on_gpus(const Options& o, SolverConfig config) {
  config.gpus = o.gpus;
  return o.layout == "strided" ? run_solver<StridedView, true>(o, config)
                               : run_solver<ContiguousView, true>(o, config);
}

}  // namespace weft::euler

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// euler2d --gpus: the same solver and run as on the host (run_solver.hpp),
// instantiated with its kernels on the GPU. nvcc compiles this file.
#include <weft/views/cuda/block_kernel_cuda.cuh>

#include "gpu_run.hpp"
#include "run_solver.hpp"

namespace weft::euler {

namespace {

template <class Ranks>
int run_with(const Options& o, SolverConfig config, const Ranks& ranks) {
  config.gpus = o.gpus;
  return o.layout == "strided" ? run_solver<StridedView, true>(o, config, ranks)
                               : run_solver<ContiguousView, true>(o, config, ranks);
}

}  // namespace

int run_on_gpus(const Options& o, SolverConfig config, const weft::examples::OneProcess& ranks) {
  return run_with(o, config, ranks);
}

#if WEFT_EXAMPLES_MPI
int run_on_gpus(const Options& o, SolverConfig config, const weft::examples::MpiRanks& ranks) {
  return run_with(o, config, ranks);
}
#endif

}  // namespace weft::euler

// euler2d --gpus: the run on CUDA GPUs, built from gpu_run.cu when weft has
// its CUDA backend (gpu_run_absent.cpp otherwise).
#pragma once

#include "options.hpp"
#include "solver.hpp"

namespace weft::euler {

// Runs the solver with its fields in GPU memory on o.gpus devices. Throws
// UsageError in a build without the CUDA backend.
int run_on_gpus(const Options& o, SolverConfig config);

}  // namespace weft::euler

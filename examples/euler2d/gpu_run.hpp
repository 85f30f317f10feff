// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// euler2d --gpus: the run on CUDA GPUs, built from gpu_run.cu when weft has
// its CUDA backend (gpu_run_absent.cpp otherwise).
#pragma once

#include "../ranks.hpp"
#include "options.hpp"
#include "solver.hpp"

#if WEFT_EXAMPLES_MPI
#include "../mpi_ranks.hpp"
#endif

namespace weft::euler {

// Runs the solver with its fields in GPU memory on o.gpus devices. Throws
// UsageError in a build without the CUDA backend.
int run_on_gpus(const Options& o, SolverConfig config, const weft::examples::OneProcess& ranks);
#if WEFT_EXAMPLES_MPI
// Over MPI ranks: each rank's partitions on GPU local_rank % o.gpus.
int run_on_gpus(const Options& o, SolverConfig config, const weft::examples::MpiRanks& ranks);
#endif

}  // namespace weft::euler

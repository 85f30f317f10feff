// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// eikonal --gpus: the run on CUDA GPUs, built from gpu_run.cu when weft has
// its CUDA backend, else from gpu_run_absent.cpp (a usage error).
#pragma once

#include "fim.hpp"
#include "run.hpp"

namespace weft::eikonal {

// Solves p with the fields on o.gpus devices and prints what solve() does.
// Throws UsageError when this build has no CUDA backend.
int run_on_gpus(const Options& o, const Problem& p);

}  // namespace weft::eikonal

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// --gpus N for the examples: more GPUs than CUDA finds is a usage error
// (exit 2), named with why CUDA found fewer, before anything is allocated.
#pragma once

#include <cstddef>
#include <string>

#include <weft/backends/cuda_devices.hpp>

#include "usage_error.hpp"

namespace weft::examples {

inline void check_gpu_count(int gpus) {
  const CudaDiscovery found = discover_cuda_devices();
  if (gpus <= 0 || static_cast<std::size_t>(gpus) <= found.devices.size()) return;
  const std::string hint = found.devices.empty()
                               ? ""
                               : "; WEFT_CUDA_LOGICAL_DEVICES=" + std::to_string(gpus) + " runs " +
                                     std::to_string(gpus) + " logical devices on the GPUs present";
  throw UsageError("--gpus " + std::to_string(gpus) + ": only " + std::to_string(found.devices.size()) +
                   " CUDA device(s) found" + (found.note.empty() ? "" : " (" + found.note + ")") + hint);
}

}  // namespace weft::examples

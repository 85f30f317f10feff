// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Weft's CUDA device numbers and the CUDA runtime's, for the backend's .cu
// files (private to the backends library). Weft's numbers are logical when
// WEFT_CUDA_LOGICAL_DEVICES is set (cuda_devices.hpp), and equal CUDA's
// otherwise. Every CUDA runtime call that takes a device ordinal gets it
// from cuda_ordinal() or set_cuda_device(); ordinals that come from CUDA
// itself (cudaGetDevice, cudaStreamGetDevice) are CUDA's already.
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace weft::detail {

struct CudaDeviceCount {
  cudaError_t status = cudaSuccess;  // of cudaGetDeviceCount
  int physical = 0;                  // GPUs the CUDA runtime reports
  int logical = 0;                   // the logical device count, 0 when off
  int visible = 0;                   // devices weft sees: logical, else physical; 0 without a GPU
};

// cudaGetDeviceCount is asked once per process (the GPUs a process sees do
// not change; a failure's error is cleared) and the logical count each call.
// Throws std::invalid_argument for a bad WEFT_CUDA_LOGICAL_DEVICES.
CudaDeviceCount cuda_device_count();

// "2 CUDA devices present", or with logical devices "4 CUDA devices present
// (WEFT_CUDA_LOGICAL_DEVICES=4, on 1 GPU)": for messages about device numbers.
std::string describe(const CudaDeviceCount& count);

// "device 3", or "device 3 (on GPU 1)" when it runs on a GPU of another
// number: for error messages.
std::string device_words(int device);

// The CUDA device ordinal that weft's `device` runs on: the one place the
// mapping happens (detail::physical_device_of).
int cuda_ordinal(int device) noexcept;

// cudaSetDevice(cuda_ordinal(device)).
inline cudaError_t set_cuda_device(int device) noexcept { return cudaSetDevice(cuda_ordinal(device)); }

}  // namespace weft::detail

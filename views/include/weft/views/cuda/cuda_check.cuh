// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Error checking for the CUDA side of weft: every CUDA call's status becomes
// a std::runtime_error naming the call, the device and CUDA's own words.
//
//   weft::cuda::check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream),
//                     "cudaMemcpyAsync", device);
//   // throws "weft::cuda: cudaMemcpyAsync failed on device 0: invalid argument (cudaErrorInvalidValue)"
//
// Only for .cu files compiled by nvcc.
#pragma once

#if !defined(__CUDACC__)
#error "<weft/views/cuda/cuda_check.cuh> is CUDA code: include it from a .cu file compiled by nvcc"
#endif

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace weft::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* call, int device,
                                          const char* who = "weft::cuda") {
  (void)cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  throw std::runtime_error(std::string(who) + ": " + call + " failed on device " + std::to_string(device) +
                           ": " + cudaGetErrorString(status) + " (" + cudaGetErrorName(status) + ")");
}

inline void check(cudaError_t status, const char* call, int device, const char* who = "weft::cuda") {
  if (status != cudaSuccess) throw_cuda_error(status, call, device, who);
}

namespace detail {

// For the duration of a launch, makes current the device that `stream`
// belongs to (a launch goes to the current device, and the calling worker
// may have another one current), then gives the thread its device back.
class StreamDevice {
 public:
  StreamDevice(const char* who, cudaStream_t stream) : who_(who) {
    const cudaError_t found = cudaStreamGetDevice(stream, &device_);
    if (found != cudaSuccess) {
      if (cudaGetDevice(&device_) != cudaSuccess) device_ = -1;
      throw_cuda_error(found, "cudaStreamGetDevice", device_, who_);
    }
    check(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device_) {
      check(cudaSetDevice(device_), "cudaSetDevice");
      switched_ = true;
    }
  }
  ~StreamDevice() {
    // Setting back the device that was current a moment ago fails only
    // while CUDA shuts down, and a destructor cannot report it.
    if (switched_) (void)cudaSetDevice(previous_);
  }
  StreamDevice(const StreamDevice&) = delete;
  StreamDevice& operator=(const StreamDevice&) = delete;

  int device() const noexcept { return device_; }
  const char* who() const noexcept { return who_; }
  void check(cudaError_t status, const char* call) const { cuda::check(status, call, device_, who_); }

 private:
  const char* who_;
  int device_ = 0;
  int previous_ = 0;
  bool switched_ = false;
};

}  // namespace detail
}  // namespace weft::cuda

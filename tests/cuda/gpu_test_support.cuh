// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Helpers for the GPU suite: skip without a device, logical devices for one
// test, and device arrays that tests fill from and read back into std::vectors.
#pragma once

#include <weft/backends/cuda_devices.hpp>
#include <weft/backends/memory_space.hpp>
#include <weft/views/cuda/cuda_check.cuh>

#include <doctest/doctest.h>

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

namespace weft::test {

// False, after a MESSAGE saying why, on a machine without a usable GPU.
inline bool gpu_present() {
  const CudaDiscovery found = discover_cuda_devices();
  if (found.devices.empty()) {
    MESSAGE("no GPU is present (" << found.note << "): skipping this GPU test");
    return false;
  }
  return true;
}

// Sets the logical CUDA device count (cuda_devices.hpp) for one test case,
// then puts back the count that was in force: with a GPU present, the
// multi-device paths then run on it.
class LogicalDevices {
 public:
  explicit LogicalDevices(int count) : previous_(cuda_logical_devices()) { set_cuda_logical_devices(count); }
  ~LogicalDevices() { set_cuda_logical_devices(previous_); }
  LogicalDevices(const LogicalDevices&) = delete;
  LogicalDevices& operator=(const LogicalDevices&) = delete;

 private:
  int previous_;
};

// n values of T on device 0. Transfers are synchronous and finish with a
// device synchronisation: a synchronous cudaMemcpy from pageable memory may
// return before its DMA is done, and the kernels under test run on
// non-blocking streams that do not wait for the legacy default stream.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t n) : buffer_(CudaSpace(0), n * sizeof(T)), size_(n) {}
  explicit DeviceArray(const std::vector<T>& values) : DeviceArray(values.size()) { upload(values); }

  T* data() const noexcept { return static_cast<T*>(buffer_.data()); }
  std::size_t size() const noexcept { return size_; }

  void upload(const std::vector<T>& values) {
    REQUIRE(values.size() == size_);
    buffer_.space().copy_from_host(buffer_.data(), values.data(), size_ * sizeof(T));
    cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", 0);
  }

  // Waits for all work on the device first.
  std::vector<T> download() const {
    cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", 0);
    std::vector<T> values(size_);
    buffer_.space().copy_to_host(values.data(), buffer_.data(), size_ * sizeof(T));
    return values;
  }

 private:
  SpaceBuffer<CudaSpace> buffer_;
  std::size_t size_;
};

}  // namespace weft::test

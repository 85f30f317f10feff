// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The devices a weft program schedules onto: the CUDA GPUs that are present,
// or, when asked for or when there are none, host virtual devices.
//
//   weft::DeviceRegistry reg(/*virtual_devices=*/4);
//   reg.gpu_count();        // CUDA devices found (0 on a machine without one)
//   reg.device_count();     // GPUs if any were found, else the 4 virtual ones
#pragma once

#include <string>
#include <vector>

#include <weft/backends/device.hpp>

namespace weft {

class DeviceRegistry {
 public:
  // virtual_devices: how many host virtual devices to provide when no CUDA
  // device is used (0: none). use_cuda = false ignores GPUs even if present.
  explicit DeviceRegistry(int virtual_devices = 0, bool use_cuda = true);

  const std::vector<DeviceInfo>& devices() const noexcept { return devices_; }
  int device_count() const noexcept { return static_cast<int>(devices_.size()); }
  int gpu_count() const noexcept { return gpu_count_; }
  bool uses_virtual_devices() const noexcept { return gpu_count_ == 0 && !devices_.empty(); }
  // Why no CUDA device is used (empty when some are).
  const std::string& cuda_note() const noexcept { return cuda_note_; }

 private:
  std::vector<DeviceInfo> devices_;
  int gpu_count_ = 0;
  std::string cuda_note_;
};

}  // namespace weft

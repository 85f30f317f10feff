// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Discovery of CUDA devices.
//
//   weft::CudaDiscovery found = weft::discover_cuda_devices();
//   if (found.devices.empty()) std::puts(found.note.c_str());  // why none
//
// A build without the CUDA backend, or a machine without a GPU or driver,
// yields zero devices and a note saying why; discovery never throws for that.
//
// Logical devices: multi-GPU code paths on one GPU. With the environment
// variable WEFT_CUDA_LOGICAL_DEVICES=N (1 to 64), or set_cuda_logical_devices(N),
// weft sees N CUDA devices whatever the GPUs present; logical device k runs on
// GPU k % (GPUs present). Every weft device number (DeviceStreams, CudaSpace,
// stream_ops, GpuStream::device, on_gpu, Tensor placement) is then a logical
// one, and each logical device has its own streams, events and allocations,
// so cross-device events, copies between devices and multi-device placement
// all run on a single GPU. Two logical devices on one GPU are peers (their
// copies are plain device-to-device copies) and share its memory.
//
//   WEFT_CUDA_LOGICAL_DEVICES=4 ./euler2d --gpus 4 ...   // 4 devices on one GPU
//
// N may also be less than the GPUs present: weft then uses the first N.
// Unset or empty, each GPU is one device, as without the feature. A bad value
// (not a whole number from 1 to 64) makes discovery, and anything that checks
// a device number, throw std::invalid_argument naming the variable and the
// value. A build without the CUDA backend ignores the variable (zero devices).
#pragma once

#include <string>
#include <vector>

#include <weft/backends/config.hpp>
#include <weft/backends/device.hpp>

namespace weft {

struct CudaDiscovery {
  std::vector<DeviceInfo> devices;
  std::string note;  // empty when devices were found; otherwise the reason none were
  // The GPUs the CUDA runtime reports: devices.size(), unless logical
  // devices are set (then each device's physical_id is one of these).
  int physical_devices = 0;
};

// Queries the CUDA runtime once per call: count, names, memory and peer
// access. Throws std::invalid_argument for a bad WEFT_CUDA_LOGICAL_DEVICES.
CudaDiscovery discover_cuda_devices();

// True when this build contains the CUDA backend (it may still see no device).
constexpr bool cuda_backend_compiled() noexcept { return WEFT_HAS_CUDA != 0; }

// The logical CUDA device count in force: 0 when off (one device per GPU).
// The first call reads WEFT_CUDA_LOGICAL_DEVICES, unless
// set_cuda_logical_devices came first; a bad value throws
// std::invalid_argument, on this call and the next ones. Thread-safe.
int cuda_logical_devices();

// Sets the logical device count for the rest of the process, in place of
// the environment variable: 1 to 64, or 0 for off. Throws
// std::invalid_argument for any other count. Meant to be called before any
// device is used (tests, programs with a --logical-devices option); calling
// it later is safe, because a device's GPU does not depend on the count:
// streams and memory made before stay valid, and only the devices that
// discovery reports and that device checks accept change.
void set_cuda_logical_devices(int count);

}  // namespace weft

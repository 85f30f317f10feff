// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Discovery through the CUDA runtime. "No driver" and "no device" are normal
// answers on build machines: they yield zero devices and a note, not an error.
// Also the logical -> CUDA device mapping every .cu file of the backend uses
// (cuda_device_map.hpp).
#include <weft/backends/cuda_devices.hpp>

#include <weft/backends/detail/logical_devices.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "cuda_device_map.hpp"

namespace weft {
namespace detail {
namespace {

struct PhysicalCount {
  cudaError_t status = cudaSuccess;
  int count = 0;
};

const PhysicalCount& physical_count() {
  static const PhysicalCount found = [] {
    PhysicalCount p;
    p.status = cudaGetDeviceCount(&p.count);
    if (p.status != cudaSuccess) {
      p.count = 0;
      (void)cudaGetLastError();  // clear the sticky error so later calls start clean
    }
    return p;
  }();
  return found;
}

}  // namespace

CudaDeviceCount cuda_device_count() {
  CudaDeviceCount c;
  c.logical = cuda_logical_devices();  // first: a bad value is an error with or without a GPU
  const PhysicalCount& p = physical_count();
  c.status = p.status;
  c.physical = p.count;
  c.visible = visible_device_count(c.logical, c.physical);
  return c;
}

std::string describe(const CudaDeviceCount& count) {
  std::string text = std::to_string(count.visible) + " CUDA devices present";
  if (count.logical > 0) {
    text += " (" + std::string(kLogicalDevicesVariable) + "=" + std::to_string(count.logical) + ", on " +
            std::to_string(count.physical) + (count.physical == 1 ? " GPU)" : " GPUs)");
  }
  return text;
}

int cuda_ordinal(int device) noexcept { return physical_device_of(device, physical_count().count); }

std::string device_words(int device) {
  const int gpu = cuda_ordinal(device);
  std::string words = "device " + std::to_string(device);
  if (gpu != device) words += " (on GPU " + std::to_string(gpu) + ")";
  return words;
}

}  // namespace detail

namespace {

// What the CUDA runtime says about GPU `gpu` of `count`.
DeviceInfo describe_gpu(int gpu, int count) {
  DeviceInfo d;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, gpu) == cudaSuccess) {
    d.name = prop.name;
    d.total_memory = prop.totalGlobalMem;
    d.compute_capability_major = prop.major;
    d.compute_capability_minor = prop.minor;
  }
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaSetDevice(gpu) == cudaSuccess && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
    d.free_memory = free_bytes;
  }
  d.id = gpu;
  d.physical_id = gpu;
  d.kind = DeviceKind::Cuda;
  d.peer_access.assign(static_cast<std::size_t>(count), false);
  for (int j = 0; j < count; ++j) {
    int can = 0;
    if (gpu == j) {
      d.peer_access[static_cast<std::size_t>(j)] = true;
    } else if (cudaDeviceCanAccessPeer(&can, gpu, j) == cudaSuccess) {
      d.peer_access[static_cast<std::size_t>(j)] = can != 0;
    }
  }
  return d;
}

// Logical device k is GPU k % (GPUs) under another number: devices on one
// GPU are peers, devices on two GPUs are peers when the GPUs are.
DeviceInfo logical_device(const std::vector<DeviceInfo>& gpus, int k, int logical_count) {
  const int physical = static_cast<int>(gpus.size());
  DeviceInfo d = gpus[static_cast<std::size_t>(detail::physical_device_of(k, physical))];
  d.id = k;
  d.name += " (logical device " + std::to_string(k) + " on GPU " + std::to_string(d.physical_id) + ")";
  std::vector<bool> peers(static_cast<std::size_t>(logical_count));
  for (int j = 0; j < logical_count; ++j) {
    const int gpu = detail::physical_device_of(j, physical);
    peers[static_cast<std::size_t>(j)] = gpu == d.physical_id || d.peer_access[static_cast<std::size_t>(gpu)];
  }
  d.peer_access = std::move(peers);
  return d;
}

}  // namespace

CudaDiscovery discover_cuda_devices() {
  CudaDiscovery result;
  const detail::CudaDeviceCount count = detail::cuda_device_count();
  if (count.status != cudaSuccess) {
    result.note = std::string("no CUDA device usable: ") + cudaGetErrorName(count.status) + " (" +
                  cudaGetErrorString(count.status) + ")";
    return result;
  }
  if (count.physical == 0) {
    result.note = "the CUDA runtime reports zero devices";
    return result;
  }
  result.physical_devices = count.physical;
  std::vector<DeviceInfo> gpus;
  gpus.reserve(static_cast<std::size_t>(count.physical));
  for (int i = 0; i < count.physical; ++i) gpus.push_back(describe_gpu(i, count.physical));
  if (count.logical == 0) {
    result.devices = std::move(gpus);
    return result;
  }
  result.devices.reserve(static_cast<std::size_t>(count.logical));
  for (int k = 0; k < count.logical; ++k) result.devices.push_back(logical_device(gpus, k, count.logical));
  return result;
}

}  // namespace weft

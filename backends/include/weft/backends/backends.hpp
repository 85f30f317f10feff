// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The backends layer: devices (CUDA discovery, host virtual devices), memory
// spaces (HostSpace, HostPinnedSpace, CudaSpace) and the WEFT_HOST_DEVICE
// portability macro.
#pragma once

#include <weft/backends/config.hpp>
#include <weft/backends/cuda_devices.hpp>
#include <weft/backends/cuda_streams.hpp>
#include <weft/backends/device.hpp>
#include <weft/backends/device_placement.hpp>
#include <weft/backends/device_registry.hpp>
#include <weft/backends/event_pool.hpp>
#include <weft/backends/host_device.hpp>
#include <weft/backends/host_devices.hpp>
#include <weft/backends/memory_space.hpp>

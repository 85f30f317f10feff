// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host backend's virtual devices: N devices that live in host memory, so
// multi-device graphs can be built, run and tested on a machine with no GPU.
//
//   std::vector<weft::DeviceInfo> devs = weft::host_virtual_devices(4);
//   // devs[2].name == "host-virtual-2", every device is a peer of every other
#pragma once

#include <vector>

#include <weft/backends/device.hpp>

namespace weft {

std::vector<DeviceInfo> host_virtual_devices(int count);

}  // namespace weft

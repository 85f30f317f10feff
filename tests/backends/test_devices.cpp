// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Device discovery: CUDA devices when present (zero, with a reason, when not)
// and host virtual devices.
#include <weft/backends/backends.hpp>

#include <doctest/doctest.h>

#include <stdexcept>

TEST_CASE("Devices.cuda_discovery_never_fails") {
  const weft::CudaDiscovery found = weft::discover_cuda_devices();
  if (found.devices.empty()) {
    MESSAGE("no CUDA device: " << found.note);
    CHECK_FALSE(found.note.empty());
  }
  for (const weft::DeviceInfo& d : found.devices) {
    CHECK(d.kind == weft::DeviceKind::Cuda);
    CHECK(d.total_memory > 0);
    CHECK(d.peer_access.size() == found.devices.size());
    CHECK(d.peer_access[static_cast<std::size_t>(d.id)]);
  }
}

TEST_CASE("Devices.host_virtual_devices") {
  const auto devices = weft::host_virtual_devices(3);
  REQUIRE(devices.size() == 3);
  CHECK(devices[2].id == 2);
  CHECK(devices[2].name == "host-virtual-2");
  CHECK(devices[1].kind == weft::DeviceKind::HostVirtual);
  CHECK(devices[0].peer_access == std::vector<bool>{true, true, true});
  CHECK(weft::host_virtual_devices(0).empty());
  CHECK_THROWS_AS(weft::host_virtual_devices(-1), std::invalid_argument);
}

TEST_CASE("Devices.registry_falls_back_to_virtual_devices") {
  weft::DeviceRegistry forced(4, /*use_cuda=*/false);
  CHECK(forced.gpu_count() == 0);
  CHECK(forced.device_count() == 4);
  CHECK(forced.uses_virtual_devices());
  weft::DeviceRegistry automatic(2);
  if (automatic.gpu_count() == 0) {
    CHECK(automatic.device_count() == 2);
  } else {
    CHECK(automatic.device_count() == automatic.gpu_count());
  }
}

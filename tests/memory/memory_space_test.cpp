// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Memory spaces: raw allocation, alignment, copies, and what happens without
// a GPU.
#include <weft/backends/memory_space.hpp>

#include <weft/backends/cuda_devices.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

TEST_CASE("MemorySpace.host_space") {
  const weft::HostSpace host;
  void* p = host.allocate(10000);
  REQUIRE(p != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(p) % weft::HostSpace::alignment == 0);
  const std::vector<char> text(10000, 'x');
  host.copy_from_host(p, text.data(), text.size());
  std::vector<char> back(10000);
  host.copy_to_host(back.data(), p, back.size());
  CHECK(back == text);
  host.deallocate(p, 10000);
  CHECK(host.allocate(0) == nullptr);
  host.deallocate(nullptr, 0);
}

TEST_CASE("MemorySpace.sizes_beyond_the_address_space_are_refused") {
  // Rounding up to whole pages must not wrap a huge request into a tiny block.
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  std::string message;
  try {
    (void)weft::HostSpace{}.allocate(max - 10);
  } catch (const weft::AllocationError& e) {
    message = e.what();
  }
  CHECK(message == "HostSpace: cannot allocate 18446744073709551605 bytes (larger than the address space)");
  CHECK_THROWS_AS((void)weft::HostPinnedSpace{}.allocate(max), weft::AllocationError);
  CHECK_THROWS_AS((weft::SpaceBuffer<weft::HostSpace>(weft::HostSpace{}, max)), std::bad_alloc);
}

TEST_CASE("MemorySpace.host_pinned_space") {
  const weft::HostPinnedSpace pinned;
  weft::SpaceBuffer<weft::HostPinnedSpace> buffer(pinned, 1 << 16);
  REQUIRE(buffer.data() != nullptr);
  CHECK(buffer.size() == (1u << 16));
  std::memset(buffer.data(), 1, buffer.size());  // host memory either way
  if (!weft::cuda_backend_compiled()) CHECK_FALSE(weft::HostPinnedSpace::pins_memory());
  weft::SpaceBuffer<weft::HostPinnedSpace> moved = std::move(buffer);
  CHECK(buffer.data() == nullptr);
  CHECK(moved.size() == (1u << 16));
}

TEST_CASE("MemorySpace.cuda_space_without_gpu") {
  const weft::CudaDiscovery found = weft::discover_cuda_devices();
  if (!found.devices.empty()) {
    weft::SpaceBuffer<weft::CudaSpace> buffer(weft::CudaSpace(0), 4096);
    CHECK(buffer.data() != nullptr);
    const std::vector<std::uint32_t> in(1024, 7u);
    std::vector<std::uint32_t> out(1024, 0u);
    buffer.space().copy_from_host(buffer.data(), in.data(), 4096);
    buffer.space().copy_to_host(out.data(), buffer.data(), 4096);
    CHECK(out == in);
    return;
  }
  MESSAGE("no GPU is present (" << found.note << "): CudaSpace must refuse to allocate");
  std::string message;
  try {
    (void)weft::CudaSpace(0).allocate(4096);
  } catch (const weft::AllocationError& e) {
    message = e.what();
  }
  CHECK(message.find("CudaSpace: cannot allocate 4096 bytes on device 0") != std::string::npos);
  CHECK(weft::CudaSpace(0).allocate(0) == nullptr);
}

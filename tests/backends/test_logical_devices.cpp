// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Logical CUDA devices without a GPU: reading WEFT_CUDA_LOGICAL_DEVICES, the
// logical -> GPU mapping, and the process-wide count. With a GPU present the
// same count makes discovery report that many devices (tests/cuda checks
// the devices themselves); without one, or without the CUDA backend, it
// changes nothing.
#include <weft/backends/cuda_devices.hpp>
#include <weft/backends/detail/logical_devices.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "../test_support.hpp"

namespace {

std::string parse_error(const char* value) {
  return weft::test::invalid_argument_message([value] { (void)weft::detail::parse_logical_devices(value); });
}

}  // namespace

// First in the file: later cases set the count, which then wins over the
// variable. ctest also runs this case alone with the variable set to a good
// and to a bad value (tests/backends/CMakeLists.txt).
TEST_CASE("LogicalDevices.the_count_comes_from_the_environment") {
  const char* value = std::getenv(weft::detail::kLogicalDevicesVariable);
  const std::string shown = value != nullptr ? "'" + std::string(value) + "'" : std::string("unset");
  MESSAGE(std::string(weft::detail::kLogicalDevicesVariable) << " is " << shown);
  const std::string error = parse_error(value);
  if (error.empty()) {
    const int expected = weft::detail::parse_logical_devices(value);
    CHECK(weft::cuda_logical_devices() == expected);
    const weft::CudaDiscovery found = weft::discover_cuda_devices();
    if (found.physical_devices > 0 && expected > 0) CHECK(found.devices.size() == std::size_t(expected));
    return;
  }
  // A bad value: an error naming the variable and the value, every time it
  // is asked for; discovery too, unless the build has no CUDA backend.
  CHECK(error.find(weft::detail::kLogicalDevicesVariable + std::string("='") + value + "'") == 0);
  CHECK_THROWS_WITH_AS(weft::cuda_logical_devices(), error.c_str(), std::invalid_argument);
  CHECK_THROWS_WITH_AS(weft::cuda_logical_devices(), error.c_str(), std::invalid_argument);
  if (weft::cuda_backend_compiled()) {
    CHECK_THROWS_WITH_AS(weft::discover_cuda_devices(), error.c_str(), std::invalid_argument);
  } else {
    CHECK(weft::discover_cuda_devices().devices.empty());
  }
}

TEST_CASE("LogicalDevices.parse_takes_a_whole_number_from_1_to_64_or_nothing") {
  using weft::detail::parse_logical_devices;
  CHECK(parse_logical_devices(nullptr) == 0);  // unset: off
  CHECK(parse_logical_devices("") == 0);       // set empty: off too
  CHECK(parse_logical_devices("1") == 1);
  CHECK(parse_logical_devices("2") == 2);
  CHECK(parse_logical_devices("007") == 7);
  CHECK(parse_logical_devices("64") == weft::detail::kMaxLogicalDevices);
}

TEST_CASE("LogicalDevices.parse_refuses_anything_else_naming_the_variable_and_the_value") {
  CHECK(parse_error("0") ==
        "WEFT_CUDA_LOGICAL_DEVICES='0': expected a whole number of logical CUDA devices from 1 to 64 (or the "
        "variable unset)");
  for (const char* bad :
       {"65", "1000", "99999999999999999999999", "-1", "+2", " 2", "2 ", "two", "2x", "1e3", "0x4", "3.0"}) {
    CAPTURE(bad);
    const std::string message = parse_error(bad);
    CHECK(message.find("WEFT_CUDA_LOGICAL_DEVICES='" + std::string(bad) + "': expected") == 0);
  }
}

TEST_CASE("LogicalDevices.devices_are_dealt_round_robin_over_the_gpus") {
  using weft::detail::physical_device_of;
  for (int k = 0; k < 8; ++k) CHECK(physical_device_of(k, 1) == 0);  // all on the one GPU
  CHECK(physical_device_of(0, 2) == 0);
  CHECK(physical_device_of(3, 2) == 1);
  CHECK(physical_device_of(5, 4) == 1);
  CHECK(physical_device_of(2, 8) == 2);    // fewer logical devices than GPUs: the first ones
  CHECK(physical_device_of(3, 0) == 3);    // no GPU: passed through for CUDA to refuse
  CHECK(physical_device_of(-1, 2) == -1);  // likewise a negative device
  static_assert(physical_device_of(6, 4) == 2);

  using weft::detail::visible_device_count;
  CHECK(visible_device_count(0, 2) == 2);  // off: the GPUs present
  CHECK(visible_device_count(4, 1) == 4);
  CHECK(visible_device_count(1, 8) == 1);
  CHECK(visible_device_count(4, 0) == 0);  // no GPU: nothing to map onto
}

TEST_CASE("LogicalDevices.set_overrides_the_count_and_is_checked") {
  const int previous = weft::cuda_logical_devices();
  weft::set_cuda_logical_devices(3);
  CHECK(weft::cuda_logical_devices() == 3);
  const weft::CudaDiscovery found = weft::discover_cuda_devices();
  if (found.physical_devices == 0) {
    CHECK(found.devices.empty());  // no GPU or no CUDA backend: nothing to map onto
    CHECK_FALSE(found.note.empty());
  } else {
    REQUIRE(found.devices.size() == 3);
    for (int k = 0; k < 3; ++k) {
      CHECK(found.devices[static_cast<std::size_t>(k)].id == k);
      CHECK(found.devices[static_cast<std::size_t>(k)].physical_id == k % found.physical_devices);
    }
  }
  weft::set_cuda_logical_devices(0);
  CHECK(weft::cuda_logical_devices() == 0);
  CHECK(weft::test::invalid_argument_message([] { weft::set_cuda_logical_devices(65); }) ==
        "set_cuda_logical_devices(65): expected 0 (off) or a logical CUDA device count from 1 to 64");
  CHECK(weft::test::invalid_argument_message([] { weft::set_cuda_logical_devices(-2); }) ==
        "set_cuda_logical_devices(-2): expected 0 (off) or a logical CUDA device count from 1 to 64");
  CHECK(weft::cuda_logical_devices() == 0);  // a refused count changes nothing
  weft::set_cuda_logical_devices(previous);
}

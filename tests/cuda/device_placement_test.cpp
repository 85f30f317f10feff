// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DevicePlacement: partitions spread round robin over the devices, or placed
// one by one, with errors that say what was wrong.
#include <weft/backends/device_placement.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "../test_support.hpp"

TEST_CASE("DevicePlacement.round_robin") {
  const weft::DevicePlacement placement(6, /*device_count=*/4);
  CHECK(placement.partitions() == 6);
  CHECK(placement.device_count() == 4);
  CHECK(placement.devices() == std::vector<int>{0, 1, 2, 3, 0, 1});
  CHECK(placement.device_of(5) == 1);
  CHECK(placement.partitions_on(1) == std::vector<std::size_t>{1, 5});
  CHECK(placement.partitions_on(3) == std::vector<std::size_t>{3});
  CHECK(placement.same_device(0, 4));
  CHECK_FALSE(placement.same_device(0, 1));
}

TEST_CASE("DevicePlacement.one_device_holds_every_partition") {
  // One GPU running a multi-partition pipeline.
  const weft::DevicePlacement placement(3, /*device_count=*/1);
  CHECK(placement.devices() == std::vector<int>{0, 0, 0});
  CHECK(placement.partitions_on(0) == std::vector<std::size_t>{0, 1, 2});
}

TEST_CASE("DevicePlacement.fewer_partitions_than_devices") {
  const weft::DevicePlacement placement(2, /*device_count=*/4);
  CHECK(placement.devices() == std::vector<int>{0, 1});
  CHECK(placement.partitions_on(3).empty());
}

TEST_CASE("DevicePlacement.explicit_mapping") {
  const weft::DevicePlacement placement({1, 1, 0, 1}, /*device_count=*/2);
  CHECK(placement.device_of(0) == 1);
  CHECK(placement.device_of(2) == 0);
  CHECK(placement.partitions_on(1) == std::vector<std::size_t>{0, 1, 3});
  CHECK(placement.same_device(0, 3));
}

TEST_CASE("DevicePlacement.rejects_bad_placements") {
  CHECK(weft::test::invalid_argument_message([] { weft::DevicePlacement(4, 0); }) ==
        "DevicePlacement: device count 0 (expected at least 1 device to place partitions on)");
  CHECK(weft::test::invalid_argument_message([] { weft::DevicePlacement(std::vector<int>{0}, -2); }) ==
        "DevicePlacement: device count -2 (expected at least 1 device to place partitions on)");
  CHECK(weft::test::invalid_argument_message([] {
          weft::DevicePlacement({0, 1, 2, 1}, 2);
        }) == "DevicePlacement: partition 2 is mapped to device 2 (expected a device in [0, 2))");
  CHECK(weft::test::invalid_argument_message([] {
          weft::DevicePlacement({0, -1}, 2);
        }) == "DevicePlacement: partition 1 is mapped to device -1 (expected a device in [0, 2))");
}

TEST_CASE("DevicePlacement.rejects_out_of_range_questions") {
  const weft::DevicePlacement placement(3, 2);
  try {
    (void)placement.device_of(3);
    FAIL("device_of(3) did not throw");
  } catch (const std::out_of_range& e) {
    CHECK(std::string(e.what()) == "DevicePlacement: partition 3 out of range (3 partitions placed)");
  }
  try {
    (void)placement.partitions_on(2);
    FAIL("partitions_on(2) did not throw");
  } catch (const std::out_of_range& e) {
    CHECK(std::string(e.what()) == "DevicePlacement: device 2 out of range (2 devices)");
  }
  CHECK_THROWS_AS((void)placement.partitions_on(-1), std::out_of_range);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Topology over hwloc: cores, cache sharing, pinning (or a clear warning).
#include <weft/runtime/topology.hpp>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

TEST_CASE("Topology.describes_this_machine") {
  const weft::Topology& topo = weft::Topology::system();
  MESSAGE("topology: " << topo.describe());
  if (!topo.usable()) {
    CHECK_FALSE(topo.warning().empty());
    std::string why;
    CHECK_FALSE(topo.pin_current_thread(0, &why));
    CHECK_FALSE(why.empty());
    return;
  }
  CHECK(topo.core_count() >= 1);
  CHECK(topo.package_count() >= 1);  // every core sits in a package
  CHECK(topo.package_count() <= topo.core_count());
  for (const weft::CoreInfo& core : topo.cores()) CHECK_FALSE(core.os_cpus.empty());
  CHECK(topo.cache_distance(0, 0) == 0);
  if (topo.core_count() > 1) {
    const int d = topo.cache_distance(0, 1);
    CHECK(d >= 1);
    CHECK(d <= 4);
    CHECK(d == topo.cache_distance(1, 0));
  }
  CHECK_THROWS_AS(topo.cache_distance(0, topo.core_count()), std::out_of_range);
}

TEST_CASE("Topology.pins_a_thread_or_says_why") {
  const weft::Topology& topo = weft::Topology::system();
  std::string why;
  const bool pinned = topo.pin_current_thread(0, &why);
  if (!pinned) MESSAGE("pinning refused: " << why);
  CHECK((pinned || !why.empty()));
}

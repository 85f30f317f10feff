// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ChaseLevDeque on one thread: LIFO for the owner, FIFO for thieves, growth.
// The multi-threaded stress test lives in tests/stress.
#include <weft/runtime/chase_lev_deque.hpp>

#include <doctest/doctest.h>

#include <cstdint>

TEST_CASE("ChaseLevDeque.owner_pops_newest_first") {
  weft::ChaseLevDeque<std::intptr_t> deque(4);
  for (std::intptr_t i = 1; i <= 3; ++i) deque.push(i);
  CHECK(deque.pop() == 3);
  CHECK(deque.pop() == 2);
  CHECK(deque.pop() == 1);
  CHECK_FALSE(deque.pop().has_value());
  CHECK_FALSE(deque.steal().has_value());
}

TEST_CASE("ChaseLevDeque.thieves_take_oldest_first") {
  weft::ChaseLevDeque<std::intptr_t> deque;
  for (std::intptr_t i = 1; i <= 3; ++i) deque.push(i);
  CHECK(deque.steal() == 1);
  CHECK(deque.steal() == 2);
  CHECK(deque.pop() == 3);
  CHECK(deque.empty_hint());
}

TEST_CASE("ChaseLevDeque.grows_and_keeps_every_item") {
  weft::ChaseLevDeque<std::intptr_t> deque(2);
  const std::intptr_t n = 10000;
  for (std::intptr_t i = 0; i < n; ++i) deque.push(i);
  CHECK(deque.capacity() >= static_cast<std::size_t>(n));
  CHECK(deque.size_hint() == static_cast<std::size_t>(n));
  // Steal half from the old end, pop the rest from the new end.
  for (std::intptr_t i = 0; i < n / 2; ++i) REQUIRE(deque.steal() == i);
  for (std::intptr_t i = n - 1; i >= n / 2; --i) REQUIRE(deque.pop() == i);
  CHECK_FALSE(deque.pop().has_value());
}

TEST_CASE("ChaseLevDeque.wraps_around_without_growing") {
  weft::ChaseLevDeque<std::intptr_t> deque(8);
  const std::size_t capacity = deque.capacity();
  for (std::intptr_t round = 0; round < 1000; ++round) {
    deque.push(round);
    deque.push(round + 1);
    REQUIRE(deque.steal() == round);
    REQUIRE(deque.pop() == round + 1);
  }
  CHECK(deque.capacity() == capacity);
}

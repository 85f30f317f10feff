// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One owner pushing and popping, several thieves stealing: every item is
// taken exactly once, and the buffer grows while thieves read it.
#include <weft/runtime/chase_lev_deque.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "stress_scale.hpp"

TEST_CASE("ChaseLevDeque.stress.owner_and_3_thieves") {
  const std::intptr_t items = weft::test::scaled(1'000'000, 1);  // a million, TSan included
  weft::ChaseLevDeque<std::intptr_t> deque(2);                   // tiny: force many grows under contention
  auto taken = std::make_unique<std::atomic<std::uint8_t>[]>(static_cast<std::size_t>(items));
  std::atomic<bool> owner_done{false};
  std::atomic<std::intptr_t> total{0};

  auto take = [&](std::intptr_t item) {
    taken[static_cast<std::size_t>(item)].fetch_add(1, std::memory_order_relaxed);
    total.fetch_add(1, std::memory_order_relaxed);
  };
  std::vector<std::thread> thieves;
  for (int t = 0; t < 3; ++t) {
    thieves.emplace_back([&] {
      while (!owner_done.load(std::memory_order_acquire) || !deque.empty_hint()) {
        if (auto item = deque.steal()) take(*item);
      }
    });
  }
  // The owner pushes in bursts and pops about a third of what it pushed.
  std::intptr_t next = 0;
  while (next < items) {
    const std::intptr_t burst = std::min<std::intptr_t>(items - next, 1 + next % 97);
    for (std::intptr_t i = 0; i < burst; ++i) deque.push(next++);
    for (std::intptr_t i = 0; i < burst / 3; ++i) {
      if (auto item = deque.pop()) take(*item);
    }
  }
  while (auto item = deque.pop()) take(*item);
  owner_done.store(true, std::memory_order_release);
  for (auto& t : thieves) t.join();

  CHECK(total.load() == items);
  std::intptr_t exactly_once = 0;
  for (std::intptr_t i = 0; i < items; ++i) exactly_once += taken[static_cast<std::size_t>(i)].load() == 1;
  CHECK(exactly_once == items);
}

TEST_CASE("ChaseLevDeque.stress.pointer_payloads_are_published") {
  // Thieves read the object a stolen pointer points to: the push must make
  // the writes before it visible (TSan checks the happens-before edge).
  struct Payload {
    std::intptr_t value;
  };
  const std::intptr_t items = weft::test::scaled(200'000);
  std::vector<Payload> payloads(static_cast<std::size_t>(items));
  weft::ChaseLevDeque<Payload*> deque(4);
  std::atomic<bool> done{false};
  std::atomic<std::intptr_t> sum{0};
  std::thread thief([&] {
    while (!done.load(std::memory_order_acquire) || !deque.empty_hint()) {
      if (auto p = deque.steal()) sum.fetch_add((*p)->value, std::memory_order_relaxed);
    }
  });
  for (std::intptr_t i = 0; i < items; ++i) {
    payloads[static_cast<std::size_t>(i)].value = i + 1;  // plain write, published by push
    deque.push(&payloads[static_cast<std::size_t>(i)]);
    if (i % 5 == 0) {
      if (auto p = deque.pop()) sum.fetch_add((*p)->value, std::memory_order_relaxed);
    }
  }
  while (auto p = deque.pop()) sum.fetch_add((*p)->value, std::memory_order_relaxed);
  done.store(true, std::memory_order_release);
  thief.join();
  CHECK(sum.load() == items * (items + 1) / 2);
}

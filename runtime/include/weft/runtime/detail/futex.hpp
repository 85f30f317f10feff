// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one way a weft thread sleeps: on a 32-bit word (a Linux futex) until
// a wake-up for one of the kinds it sleeps for. Idle workers (EventCount),
// waits outside the pool (the executor's completion count and run word) and
// a promise's waiters all go through these two calls; each caller keeps its
// own "someone sleeps" mark, so that a wake-up costs a system call only when
// a sleeper may be there. Internal to the runtime.
#pragma once

#include <atomic>
#include <bit>
#include <climits>
#include <cstdint>

namespace weft::detail {

// Checks a waiter makes, a yield apart, before it sleeps: most waits are
// short, and a futex sleep and its wake-up cost microseconds each, a yield
// well under one. Workers look for work as many times before they sleep.
inline constexpr int kChecksBeforeSleep = 16;

// Which sleepers a wake-up is for: a bit set, one bit per kind of sleeper
// sharing a word (FUTEX_WAKE_BITSET). A wake-up reaches a sleeper when their
// sets share a bit.
using WakeKinds = std::uint32_t;
inline constexpr WakeKinds kAllWakeKinds = ~WakeKinds{0};

// Sleeps unless *word != expected (the kernel compares, atomically with
// going to sleep), until a futex_wake() on `word` for a kind in `kinds`, or
// for at most timeout_ns when that is positive. May return spuriously:
// callers check what they wait for and sleep again.
void futex_wait(const std::uint32_t* word, std::uint32_t expected, WakeKinds kinds = kAllWakeKinds,
                std::int64_t timeout_ns = 0) noexcept;
// Wakes up to `count` threads sleeping on `word` for a kind in `kinds`. It
// only hands the kernel an address: `word` may be gone by then (the wake-up
// then reaches nobody, or whoever sleeps on reused memory, spuriously).
void futex_wake(const std::uint32_t* word, WakeKinds kinds = kAllWakeKinds, int count = INT_MAX) noexcept;

// The word a futex sleeps on: a 32-bit atomic, or the low half of a 64-bit
// one (the kernel reads it, never C++ code, so the word stays one atomic
// object to the program).
inline const std::uint32_t* futex_word(const std::atomic<std::uint32_t>& word) noexcept {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  return reinterpret_cast<const std::uint32_t*>(&word);
}
inline const std::uint32_t* futex_word_low_half(const std::atomic<std::uint64_t>& word) noexcept {
  static_assert(sizeof(std::atomic<std::uint64_t>) == sizeof(std::uint64_t));
  return reinterpret_cast<const std::uint32_t*>(&word) + (std::endian::native == std::endian::little ? 0 : 1);
}

}  // namespace weft::detail

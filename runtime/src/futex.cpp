// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/runtime/detail/futex.hpp>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

namespace weft::detail {

void futex_wait(const std::uint32_t* word, std::uint32_t expected, WakeKinds kinds,
                std::int64_t timeout_ns) noexcept {
  // FUTEX_WAIT_BITSET takes an absolute deadline on CLOCK_MONOTONIC.
  timespec deadline{};
  timespec* until = nullptr;
  if (timeout_ns > 0) {
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    const std::int64_t ns = deadline.tv_nsec + timeout_ns;
    deadline.tv_sec += static_cast<time_t>(ns / 1'000'000'000);
    deadline.tv_nsec = static_cast<long>(ns % 1'000'000'000);
    until = &deadline;
  }
  ::syscall(SYS_futex, word, FUTEX_WAIT_BITSET_PRIVATE, expected, until, nullptr, kinds);
}

void futex_wake(const std::uint32_t* word, WakeKinds kinds, int count) noexcept {
  ::syscall(SYS_futex, word, FUTEX_WAKE_BITSET_PRIVATE, count, nullptr, nullptr, kinds);
}

}  // namespace weft::detail

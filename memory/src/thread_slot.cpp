// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/memory/thread_slot.hpp>

#include <atomic>

namespace weft::detail {

WEFT_INITIAL_EXEC_TLS thread_local constinit std::uint32_t host_thread_slot_plus_one = 0;

std::uint32_t assign_host_thread_slot() noexcept {
  static std::atomic<std::uint32_t> next{0};
  // relaxed: only uniqueness matters, and the RMW gives each thread its own value.
  const std::uint32_t slot = next.fetch_add(1, std::memory_order_relaxed);
  // Skip the value whose successor would wrap to 0 ("unassigned").
  host_thread_slot_plus_one = slot + 1 != 0 ? slot + 1 : 1;
  return host_thread_slot_plus_one - 1;
}

}  // namespace weft::detail

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A small number that tells host threads apart: the memory pool uses it to
// give each thread its own allocation hints and its own starting superblock,
// so threads that allocate the same sizes do not fight over one superblock.
//
//   std::uint32_t me = weft::detail::host_thread_slot();   // stable per thread
//
// Slots are handed out in the order threads first ask (0, 1, 2, ...) and are
// never reused; users reduce them modulo what they index.
#pragma once

#include <cstdint>

#include <weft/backends/initial_exec_tls.hpp>

namespace weft::detail {

#if !defined(__CUDA_ARCH__)
// The calling thread's slot plus one; 0 until the thread first asks.
WEFT_INITIAL_EXEC_TLS extern thread_local constinit std::uint32_t host_thread_slot_plus_one;

// Gives the calling thread the next slot (out of line: runs once per thread).
std::uint32_t assign_host_thread_slot() noexcept;

inline std::uint32_t host_thread_slot() noexcept {
  const std::uint32_t slot = host_thread_slot_plus_one;
  return slot != 0 ? slot - 1 : assign_host_thread_slot();
}
#endif

}  // namespace weft::detail

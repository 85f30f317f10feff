// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/runtime/fence.hpp>

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace weft {

namespace {

long membarrier(int command) noexcept { return ::syscall(SYS_membarrier, command, 0u, 0); }

bool register_heavy_fence() noexcept {
  const long supported = membarrier(MEMBARRIER_CMD_QUERY);
  if (supported < 0 || (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0 ||
      (supported & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0) {
    return false;
  }
  // One call after registering proves it works: heavy_fence() cannot fall
  // back later, since light sides would already rely on it.
  return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
         membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
}

}  // namespace

bool enable_heavy_fence() noexcept {
  if constexpr (kThreadSanitizer) return false;
  static const bool available = register_heavy_fence();  // once per process
  return available;
}

void heavy_fence() noexcept {
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  // Registered and tested in enable_heavy_fence(), but the registration
  // belongs to an address space: a child forked after it may not have it.
  // Register again once.
  if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
      membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) {
    return;
  }
  // Failing now would let a wake-up be lost, so stop rather than hang.
  std::perror("weft: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed");
  std::abort();
}

}  // namespace weft

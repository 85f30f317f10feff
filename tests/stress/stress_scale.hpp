// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stress tests run smaller under ThreadSanitizer, which slows atomics ~10x,
// while still crossing every race window many thousands of times.
#pragma once

#include <weft/runtime/fence.hpp>

namespace weft::test {

inline constexpr bool under_tsan = kThreadSanitizer;

// `full` normally; `full / divisor` under TSan.
constexpr long scaled(long full, long divisor = 4) { return under_tsan ? full / divisor : full; }

}  // namespace weft::test

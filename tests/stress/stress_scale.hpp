// Stress tests run smaller under ThreadSanitizer, which slows atomics ~10x,
// while still crossing every race window many thousands of times.
#pragma once

namespace weft::test {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool under_tsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool under_tsan = true;
#else
inline constexpr bool under_tsan = false;
#endif
#else
inline constexpr bool under_tsan = false;
#endif

// `full` normally; `full / divisor` under TSan.
constexpr long scaled(long full, long divisor = 4) { return under_tsan ? full / divisor : full; }

}  // namespace weft::test

// Store-load (Dekker) fences that ThreadSanitizer can live with.
//
//   x.store(1, weft::around_fence(std::memory_order_relaxed));
//   weft::store_load_fence();
//   int seen = y.load(weft::around_fence(std::memory_order_relaxed));
//
// TSan does not model std::atomic_thread_fence, and g++ refuses to compile
// one under -fsanitize=thread. In sanitized builds the fence is dropped and
// the operations around it become seq_cst instead: seq_cst operations share
// one total order, which gives the same "one of us sees the other" guarantee
// (on x86 the seq_cst store is an xchg, a full barrier). Normal builds keep
// the cheaper fence with the orderings written at the call site.
#pragma once

#include <atomic>

namespace weft {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif

constexpr std::memory_order around_fence(std::memory_order normal) noexcept {
  return kThreadSanitizer ? std::memory_order_seq_cst : normal;
}

inline void store_load_fence() noexcept {
  if constexpr (!kThreadSanitizer) std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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

// Asymmetric store-load fences, for a Dekker pair where one side runs very
// often (a worker publishing work) and the other rarely (a worker about to
// sleep). The frequent side writes `light_fence()`, which only stops the
// compiler from moving its store after its load; the rare side writes
// `heavy_fence()`, a membarrier(2) system call that makes every running
// thread of the process execute a full barrier before it returns. Either
// the light side's store and load both precede that barrier, and the heavy
// side's later load sees the store, or the load follows it, and sees the
// heavy side's earlier store: one of the two always sees the other, as with
// a seq_cst fence on both sides.
//
// enable_heavy_fence() registers the process once and says whether the
// kernel offers it (Linux 4.14 and later, when no seccomp filter refuses
// it); where it does not, both sides must use store_load_fence() instead.
// Never under ThreadSanitizer, which cannot see either fence.
bool enable_heavy_fence() noexcept;
void heavy_fence() noexcept;
inline void light_fence() noexcept { std::atomic_signal_fence(std::memory_order_seq_cst); }

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Small helpers shared by the doctest suites.
#pragma once

// WEFT_TEST_UNDER_TSAN: defined when ThreadSanitizer instruments the build,
// which makes every memory access many times slower (stress tests run less).
#if defined(__SANITIZE_THREAD__)
#define WEFT_TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WEFT_TEST_UNDER_TSAN 1
#endif
#endif

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

namespace weft::test {

// The message of the `Error` that `f` throws ("" if none).
template <class Error, class F>
std::string thrown_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The message of the std::invalid_argument that `f` throws ("" if none).
template <class F>
std::string invalid_argument_message(F&& f) {
  return thrown_message<std::invalid_argument>(f);
}

// How often the calling thread has gone to sleep (Linux counts a context
// switch as voluntary when the thread blocked); -1 when it cannot tell.
inline long times_this_thread_slept() {
  std::ifstream status("/proc/thread-self/status");
  const std::string key = "voluntary_ctxt_switches:";
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with(key)) return std::stol(line.substr(key.size()));
  }
  return -1;
}

// Sets an environment variable while alive and unsets it after (tests
// set only variables the environment does not hold): WEFT_GPU_PLAN, say,
// which a graph reads when it first runs.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedVariable() { ::unsetenv(name_); }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
};

}  // namespace weft::test

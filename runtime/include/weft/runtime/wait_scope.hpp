// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Work that must not wait for itself. A thread running a job that belongs
// to a scope (a graph's nodes, a TaskGroup's callables) is inside that
// scope; a wait for something that can only finish after the scope's work
// (the graph's runs, the group) is then a self-wait, which would never
// return, and throws std::logic_error with the scope's message instead.
//
//   weft::WaitScope scope("MyQueue::wait: called from one of its own jobs");
//   {
//     weft::WaitScope::Inside inside(&scope);   // this thread runs the scope's work
//     if (scope.entered()) throw std::logic_error(scope.refusal());
//   }
//
// Scopes nest: a job waiting on a worker runs other jobs meanwhile, so a
// thread may be inside several at once; entered() looks at all of them. A
// scope entered further out than the innermost one is a wait cycle through
// other work (a node of graph A waits for graph B, and B's node, run on
// the same stack meanwhile, waits for A), which refusal() names apart.
// Promise<T> takes a scope (waiting for its future from inside is an
// error), and WorkGraphPolicy::start puts the threads running its nodes in one.
#pragma once

#include <atomic>
#include <string>
#include <utility>

#include <weft/backends/initial_exec_tls.hpp>

namespace weft {

class WaitScope {
 public:
  // `self_wait_message`: what a self-wait throws; `cycle_message`: what a
  // wait entered through other scopes throws (null: the same). Strings
  // that outlive the scope.
  explicit WaitScope(const char* self_wait_message, const char* cycle_message = nullptr) noexcept
      : message_(self_wait_message),
        cycle_message_(cycle_message != nullptr ? cycle_message : self_wait_message) {}
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;
  ~WaitScope() { delete description_.load(std::memory_order_relaxed); }

  // What the scope's work is, for messages that name it ("the graph whose
  // first node is 'fill'"): set once, by the first call; later calls and
  // reads before it find it unchanged or empty. Any thread.
  void describe_as(std::string text) {
    auto* mine = new std::string(std::move(text));
    const std::string* none = nullptr;
    if (!description_.compare_exchange_strong(none, mine, std::memory_order_acq_rel)) delete mine;
  }
  bool described() const noexcept { return description_.load(std::memory_order_acquire) != nullptr; }
  // The description, or `otherwise` before one was set.
  std::string description(const char* otherwise) const {
    const std::string* text = description_.load(std::memory_order_acquire);
    return text != nullptr ? *text : std::string(otherwise);
  }

  // Whether the calling thread is inside this scope (at any depth).
  bool entered() const noexcept;
  const char* self_wait_message() const noexcept { return message_; }
  // For a thread that entered() it: the self-wait message when this scope
  // is the innermost one, the cycle message when another is inside it.
  const char* refusal() const noexcept {
    return innermost != nullptr && innermost->scope_ == this ? message_ : cycle_message_;
  }

  // Calls f(const WaitScope*) for each scope the calling thread is inside,
  // innermost first.
  template <class F>
  static void for_each_entered(F f) {
    for (const Inside* frame = innermost; frame != nullptr; frame = frame->outer_)
      if (frame->scope_ != nullptr) f(frame->scope_);
  }

  // Marks the calling thread as inside `scope` (nothing for null) until destroyed.
  class Inside {
   public:
// The frame is published while it lives and unlinked by its destructor
// (GCC 12 warns about the store all the same).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif
    explicit Inside(const WaitScope* scope) noexcept : scope_(scope), outer_(innermost) {
      if (scope != nullptr) innermost = this;
    }
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic pop
#endif
    ~Inside() {
      if (scope_ != nullptr) innermost = outer_;
    }
    Inside(const Inside&) = delete;
    Inside& operator=(const Inside&) = delete;

   private:
    friend class WaitScope;
    const WaitScope* scope_;
    Inside* outer_;
  };

 private:
  // The calling thread's innermost scope frame (they link outwards).
  WEFT_INITIAL_EXEC_TLS static inline thread_local constinit Inside* innermost = nullptr;
  const char* message_;
  const char* cycle_message_;
  std::atomic<const std::string*> description_{nullptr};
};

inline bool WaitScope::entered() const noexcept {
  for (const Inside* frame = innermost; frame != nullptr; frame = frame->outer_)
    if (frame->scope_ == this) return true;
  return false;
}

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A node's work held apart from a graph: any callable with the arguments to
// call it with, stored by type erasure (a table of function pointers and the
// bytes of a tuple; no std::function), so nodes of any signature share one
// type. make_node() makes one; the graph moves its state into its own
// storage when the node is added.
//
//   weft::NodeWork w = weft::NodeWork::make([](const char* s) { std::puts(s); }, "hi");
//   w();   // prints "hi"
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace weft {

namespace detail {
class CallableStore;

// A condition node's result as the successor index the work-DAG takes: a
// value no int holds (negative, or above INT_MAX in a wider type) chooses
// nothing, like any other index out of range, instead of being cut.
template <class Result>
constexpr int to_choice(Result choice) noexcept {
  constexpr auto most = static_cast<unsigned long long>(std::numeric_limits<int>::max());
  if constexpr (std::is_signed_v<Result>) {
    const auto wide = static_cast<long long>(choice);
    return wide < 0 || static_cast<unsigned long long>(wide) > most ? -1 : static_cast<int>(wide);
  } else {
    const auto wide = static_cast<unsigned long long>(choice);
    return wide > most ? -1 : static_cast<int>(wide);
  }
}
}  // namespace detail

class NodeWork {
 public:
  using RawCall = void (*)(void*);

  NodeWork() = default;

  template <class F, class... Args>
  static NodeWork make(F&& f, Args&&... args) {
    using State = std::tuple<std::decay_t<F>, std::decay_t<Args>...>;
    static_assert(std::is_invocable_v<std::decay_t<F>&, std::decay_t<Args>&...>,
                  "a graph node's callable must be invocable with the arguments given to it");
    NodeWork w;
    w.state_ = std::make_shared<State>(std::forward<F>(f), std::forward<Args>(args)...);
    w.ops_ = &ops_for<State>;
    return w;
  }

  // A condition node's work (make_branch): f(args...) returns the index of
  // the successor to run.
  template <class F, class... Args>
  static NodeWork make_condition(F&& f, Args&&... args) {
    using State = std::tuple<std::decay_t<F>, std::decay_t<Args>...>;
    using Result = std::invoke_result_t<std::decay_t<F>&, std::decay_t<Args>&...>;
    static_assert(std::is_integral_v<Result> && !std::is_same_v<Result, bool>,
                  "weft::make_branch: the callable returns the index (an int) of the successor to run");
    NodeWork w = make(std::forward<F>(f), std::forward<Args>(args)...);
    w.ops_ = &condition_ops_for<State>;
    return w;
  }

  explicit operator bool() const noexcept { return ops_ != nullptr; }
  bool is_condition() const noexcept { return ops_ != nullptr && ops_->choose != nullptr; }
  void operator()() const { ops_->call(state_.get()); }

  // The two halves of a call, for lowering into a flat array (the state
  // stays owned by this NodeWork and its copies).
  RawCall raw_call() const noexcept { return ops_ != nullptr ? ops_->call : nullptr; }
  void* raw_state() const noexcept { return state_.get(); }

 private:
  friend class detail::CallableStore;
  struct Ops {
    RawCall call;
    void (*move_to)(void* from, void* to);  // move-constructs the state at `to`
    void (*destroy)(void* state) noexcept;
    std::size_t size, align;
    int (*choose)(void* state);  // condition nodes: call, returning the choice (else null)
  };
  template <class State>
  static void call_state(void* s) {
    std::apply([](auto& fn, auto&... a) { fn(a...); }, *static_cast<State*>(s));
  }
  template <class State>
  static void move_state(void* from, void* to) {
    ::new (to) State(std::move(*static_cast<State*>(from)));
  }
  template <class State>
  static void destroy_state(void* s) noexcept {
    static_cast<State*>(s)->~State();
  }
  template <class State>
  static int choose_with(void* s) {
    return detail::to_choice(
        std::apply([](auto& fn, auto&... a) { return fn(a...); }, *static_cast<State*>(s)));
  }
  template <class State>
  static constexpr Ops ops_for{&call_state<State>, &move_state<State>, &destroy_state<State>,
                               sizeof(State),      alignof(State),     nullptr};
  template <class State>
  static constexpr Ops condition_ops_for{&call_state<State>, &move_state<State>, &destroy_state<State>,
                                         sizeof(State),      alignof(State),     &choose_with<State>};

  const Ops* ops_ = nullptr;
  std::shared_ptr<void> state_;
};

}  // namespace weft

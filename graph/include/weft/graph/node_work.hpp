// A node's work: any callable with the arguments to call it with, stored by
// type erasure (one function pointer and the bytes of a tuple; no
// std::function), so nodes of any signature share one type.
//
//   weft::NodeWork w = weft::NodeWork::make([](const char* s) { std::puts(s); }, "hi");
//   w();   // prints "hi"
//
// The stored state is shared between copies of a graph (graphs are built
// once and run many times; a copy embedded as a subgraph runs the same
// callables).
#pragma once

#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

namespace weft {

class NodeWork {
 public:
  NodeWork() = default;

  template <class F, class... Args>
  static NodeWork make(F&& f, Args&&... args) {
    using State = std::tuple<std::decay_t<F>, std::decay_t<Args>...>;
    static_assert(std::is_invocable_v<std::decay_t<F>&, std::decay_t<Args>&...>,
                  "a graph node's callable must be invocable with the arguments given to it");
    NodeWork w;
    w.state_ = std::make_shared<State>(std::forward<F>(f), std::forward<Args>(args)...);
    w.call_ = [](void* state) {
      std::apply([](auto& fn, auto&... a) { fn(a...); }, *static_cast<State*>(state));
    };
    return w;
  }

  explicit operator bool() const noexcept { return call_ != nullptr; }
  void operator()() const { call_(state_.get()); }

  // The two halves of a call, for lowering into a flat array (the state
  // stays owned by this NodeWork and its copies).
  using RawCall = void (*)(void*);
  RawCall raw_call() const noexcept { return call_; }
  void* raw_state() const noexcept { return state_.get(); }

 private:
  void (*call_)(void*) = nullptr;
  std::shared_ptr<void> state_;
};

}  // namespace weft

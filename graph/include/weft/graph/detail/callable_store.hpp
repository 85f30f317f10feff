// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Where a Graph keeps its nodes' callables: constructed side by side in
// 64 KiB chunks, so that adding a node costs a bump of a pointer (no
// allocation per node) and a run walks states that sit together. Internal
// to the graph layer.
//
// Copies of a graph share the chunks (the states are shared between copies,
// as graphs are built once and run many times), and each copy stores new
// callables in chunks of its own: no two graphs ever write to one chunk.
// A chunk destroys the states it holds (those that need it) when the last
// graph or lowered program holding it goes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <weft/graph/node_work.hpp>
#include <weft/runtime/work_graph_policy.hpp>

namespace weft::detail {

class CallableChunk {
 public:
  explicit CallableChunk(std::size_t bytes) : bytes_(new std::byte[bytes]), size_(bytes) {}
  CallableChunk(const CallableChunk&) = delete;
  CallableChunk& operator=(const CallableChunk&) = delete;
  ~CallableChunk() {
    for (auto it = destructors_.rbegin(); it != destructors_.rend(); ++it) it->first(it->second);
  }
  std::byte* begin() noexcept { return bytes_.get(); }
  std::byte* end() noexcept { return bytes_.get() + size_; }
  void destroy_later(void (*destroy)(void*) noexcept, void* state) {
    destructors_.emplace_back(destroy, state);
  }

 private:
  std::unique_ptr<std::byte[]> bytes_;
  std::size_t size_;
  std::vector<std::pair<void (*)(void*) noexcept, void*>> destructors_;
};

class CallableStore {
 public:
  CallableStore() = default;
  // A copy shares what is stored and stores new callables elsewhere.
  CallableStore(const CallableStore& other) : chunks_(other.chunks_) {}
  CallableStore& operator=(const CallableStore& other) {
    if (this != &other) {
      chunks_ = other.chunks_;
      forget_free_space();
    }
    return *this;
  }
  CallableStore(CallableStore&& other) noexcept
      : chunks_(std::move(other.chunks_)),
        last_(other.last_),
        current_(other.current_),
        next_(other.next_),
        end_(other.end_) {
    other.forget_free_space();
  }
  CallableStore& operator=(CallableStore&& other) noexcept {
    if (this != &other) {
      chunks_ = std::move(other.chunks_);
      last_ = other.last_;
      current_ = other.current_;
      next_ = other.next_;
      end_ = other.end_;
      other.forget_free_space();
    }
    return *this;
  }
  ~CallableStore() = default;

  // Stores f and its arguments; the call runs f(args...). A small callable
  // that a call cannot change (trivially copyable, const-callable, at most
  // 16 bytes: a lambda capturing a reference and an index, say) is kept in
  // the call itself rather than here.
  template <class F, class... Args>
  WorkGraphNodeCall store(F&& f, Args&&... args) {
    using State = state_t<F, Args...>;
    static_assert(std::is_invocable_v<std::decay_t<F>&, std::decay_t<Args>&...>,
                  "a graph node's callable must be invocable with the arguments given to it");
    if constexpr (fits_in_call<State>) {
      return WorkGraphNodeCall::direct([](const void* p) { (*std::launder(static_cast<const State*>(p)))(); },
                                       State(std::forward<F>(f), std::forward<Args>(args)...));
    } else {
      State* state = construct<State>(std::forward<F>(f), std::forward<Args>(args)...);
      return WorkGraphNodeCall::direct([](const void* p) { (**static_cast<State* const*>(p))(); }, state);
    }
  }
  // The same for a condition node: the call returns the successor to run.
  template <class F, class... Args>
  WorkGraphNodeCall store_condition(F&& f, Args&&... args) {
    using State = state_t<F, Args...>;
    using Result = std::invoke_result_t<std::decay_t<F>&, std::decay_t<Args>&...>;
    static_assert(std::is_integral_v<Result> && !std::is_same_v<Result, bool>,
                  "Graph::branch: the callable returns the index (an int) of the successor to run");
    if constexpr (fits_in_call<State>) {
      return WorkGraphNodeCall::direct_condition(
          [](const void* p) { return to_choice((*std::launder(static_cast<const State*>(p)))()); },
          State(std::forward<F>(f), std::forward<Args>(args)...));
    } else {
      State* state = construct<State>(std::forward<F>(f), std::forward<Args>(args)...);
      return WorkGraphNodeCall::direct_condition(
          [](const void* p) { return to_choice((**static_cast<State* const*>(p))()); }, state);
    }
  }
  // Moves a NodeWork's state (make_node) in here; an empty one gives an empty call.
  WorkGraphNodeCall adopt(NodeWork work);
  // Keeps another graph's callables alive as long as this store (an inlined subgraph's).
  void share(const CallableStore& other);

  // What keeps the stored callables alive; a lowered program holds a copy.
  const std::vector<std::shared_ptr<CallableChunk>>& chunks() const noexcept { return chunks_; }

 private:
  static constexpr std::size_t kChunk = 64 * 1024;

  // A callable with its arguments bound, called with none.
  template <class F, class... Args>
  struct Bound {
    template <class G, class... A>
    explicit Bound(G&& g, A&&... a) : fn(std::forward<G>(g)), args(std::forward<A>(a)...) {}
    decltype(auto) operator()() {
      return std::apply([this](auto&... a) -> decltype(auto) { return fn(a...); }, args);
    }
    F fn;
    std::tuple<Args...> args;
  };
  template <class F, class... Args>
  using state_t = std::conditional_t<sizeof...(Args) == 0, std::decay_t<F>,
                                     Bound<std::decay_t<F>, std::decay_t<Args>...>>;
  // Copies of a small state in calls behave like the one shared state:
  // nothing a call does can change them.
  template <class State>
  static constexpr bool fits_in_call = std::is_trivially_copyable_v<State> &&
                                       sizeof(State) <= WorkGraphNodeCall::kPayload &&
                                       alignof(State) <= 8 && std::is_invocable_v<const State&>;

  template <class State, class... Args>
  State* construct(Args&&... args) {
    void* slot = allocate(sizeof(State), alignof(State));
    State* state = ::new (slot) State(std::forward<Args>(args)...);
    if constexpr (!std::is_trivially_destructible_v<State>) {
      try {
        last_->destroy_later([](void* s) noexcept { static_cast<State*>(s)->~State(); }, state);
      } catch (...) {
        state->~State();
        throw;
      }
    }
    return state;
  }
  void* allocate(std::size_t size, std::size_t align) {
    if (next_ != nullptr) {
      const std::size_t pad = (align - reinterpret_cast<std::uintptr_t>(next_) % align) % align;
      if (size + pad <= static_cast<std::size_t>(end_ - next_)) {
        std::byte* slot = next_ + pad;
        next_ = slot + size;
        last_ = current_;
        return slot;
      }
    }
    return allocate_in_new_chunk(size, align);
  }
  void* allocate_in_new_chunk(std::size_t size, std::size_t align);
  void forget_free_space() noexcept {
    last_ = current_ = nullptr;
    next_ = end_ = nullptr;
  }

  std::vector<std::shared_ptr<CallableChunk>> chunks_;
  CallableChunk* last_ = nullptr;  // the chunk of the last allocation
  // Free space of this store's own chunk (never one shared with a copy).
  CallableChunk* current_ = nullptr;
  std::byte* next_ = nullptr;
  std::byte* end_ = nullptr;
};

}  // namespace weft::detail

// A node's work: any callable with the arguments to call it with, stored by
// type erasure (a table of function pointers and the bytes of a tuple; no
// std::function), so nodes of any signature share one type.
//
//   weft::NodeWork w = weft::NodeWork::make([](const char* s) { std::puts(s); }, "hi");
//   w();   // prints "hi"
//
// The stored state is shared between copies of a graph (graphs are built
// once and run many times; a copy embedded as a subgraph runs the same
// callables). A Graph moves the states of its nodes next to each other
// (NodeArena) so that a run walks them in order instead of chasing one heap
// allocation per node.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace weft {

class NodeArena;

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

  explicit operator bool() const noexcept { return ops_ != nullptr; }
  void operator()() const { ops_->call(state_.get()); }

  // The two halves of a call, for lowering into a flat array (the state
  // stays owned by this NodeWork and its copies).
  RawCall raw_call() const noexcept { return ops_ != nullptr ? ops_->call : nullptr; }
  void* raw_state() const noexcept { return state_.get(); }

 private:
  friend class NodeArena;
  struct Ops {
    RawCall call;
    void (*move_to)(void* from, void* to);  // move-constructs the state at `to`
    void (*destroy)(void* state) noexcept;
    std::size_t size, align;
  };
  template <class State>
  static constexpr Ops ops_for{
      [](void* s) { std::apply([](auto& fn, auto&... a) { fn(a...); }, *static_cast<State*>(s)); },
      [](void* from, void* to) { ::new (to) State(std::move(*static_cast<State*>(from))); },
      [](void* s) noexcept { static_cast<State*>(s)->~State(); }, sizeof(State), alignof(State)};

  const Ops* ops_ = nullptr;
  std::shared_ptr<void> state_;
};

// Keeps node states contiguous: adopt() moves a NodeWork's state into the
// arena's current chunk. States live until the arena and every NodeWork
// pointing into it are gone (NodeWorks hold the arena alive).
class NodeArena : public std::enable_shared_from_this<NodeArena> {
 public:
  NodeArena() = default;
  NodeArena(const NodeArena&) = delete;
  NodeArena& operator=(const NodeArena&) = delete;
  ~NodeArena() {
    for (auto it = adopted_.rbegin(); it != adopted_.rend(); ++it) it->first->destroy(it->second);
  }

  NodeWork adopt(NodeWork work) {
    if (!work) return work;
    const NodeWork::Ops* ops = work.ops_;
    void* slot = allocate(ops->size, ops->align);
    ops->move_to(work.state_.get(), slot);
    adopted_.emplace_back(ops, slot);
    NodeWork moved;
    moved.ops_ = ops;
    moved.state_ = std::shared_ptr<void>(shared_from_this(), slot);  // shares the arena's lifetime
    return moved;
  }

 private:
  static constexpr std::size_t kChunk = 64 * 1024;
  void* allocate(std::size_t size, std::size_t align) {
    std::size_t offset = (used_ + align - 1) / align * align;
    if (chunks_.empty() || offset + size > chunk_size_) {
      chunk_size_ = std::max(kChunk, size + align);
      chunks_.push_back(std::make_unique<std::byte[]>(chunk_size_));
      offset = 0;
      // operator new[] aligns to at least max_align_t; larger alignments shift.
      const auto base = reinterpret_cast<std::uintptr_t>(chunks_.back().get());
      offset = (align - base % align) % align;
    }
    used_ = offset + size;
    return chunks_.back().get() + offset;
  }

  std::vector<std::unique_ptr<std::byte[]>> chunks_;
  std::size_t chunk_size_ = 0;
  std::size_t used_ = 0;
  std::vector<std::pair<const NodeWork::Ops*, void*>> adopted_;
};

}  // namespace weft

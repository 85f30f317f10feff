// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a work-DAG node runs when each node has a callable of its own (the
// graph layer's nodes): WorkGraphPolicy::run and start take one per node.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace weft {

// One call per node, for callers that hold a different callable per node
// (graphs): node i runs calls[i].run(), one indirect call. A small callable
// sits in the call itself (its payload), so that a run reads one array
// instead of chasing a pointer per node; a larger one is pointed to. A
// condition node's call returns the index of the successor to run.
//
//   auto call = weft::WorkGraphNodeCall::of([](void* s) { ... }, state);
struct WorkGraphNodeCall {
  using Invoke = void (*)(const void* payload);
  using Choose = int (*)(const void* payload);
  static constexpr std::size_t kPayload = 16;

  Invoke fn = nullptr;  // a Choose for a condition node, stored as an Invoke
  alignas(8) unsigned char payload[kPayload] = {};

  // Calls function(state).
  static WorkGraphNodeCall of(void (*function)(void*), void* state) noexcept {
    return direct(&call_indirect, Indirect{reinterpret_cast<void (*)()>(function), state});
  }
  // A condition node's: choose(state) returns the successor to run.
  static WorkGraphNodeCall condition(int (*choose)(void*), void* state) noexcept {
    return direct_condition(&choose_indirect, Indirect{reinterpret_cast<void (*)()>(choose), state});
  }
  // Calls fn(p) with a copy of `payload` (trivially copyable, at most
  // kPayload bytes, aligned to at most 8) kept in the call.
  template <class Payload>
  static WorkGraphNodeCall direct(Invoke fn, const Payload& payload) noexcept {
    WorkGraphNodeCall call;
    call.fn = fn;
    call.put(payload);
    return call;
  }
  template <class Payload>
  static WorkGraphNodeCall direct_condition(Choose choose, const Payload& payload) noexcept {
    // Stored as the other pointer type and converted back before the call,
    // which C++ allows (through void (*)(), which GCC accepts as generic).
    return direct(reinterpret_cast<Invoke>(reinterpret_cast<void (*)()>(choose)), payload);
  }

  explicit operator bool() const noexcept { return fn != nullptr; }
  void run() const { fn(payload); }
  int choose() const { return reinterpret_cast<Choose>(reinterpret_cast<void (*)()>(fn))(payload); }

 private:
  struct Indirect {
    void (*function)();  // the caller's function, as a generic pointer
    void* state;
  };
  template <class Payload>
  void put(const Payload& value) noexcept {
    static_assert(
        std::is_trivially_copyable_v<Payload> && sizeof(Payload) <= kPayload && alignof(Payload) <= 8,
        "a payload is trivially copyable, at most 16 bytes, aligned to at most 8");
    std::memcpy(payload, &value, sizeof(Payload));
  }
  static void call_indirect(const void* payload) {
    Indirect target;
    std::memcpy(&target, payload, sizeof(target));
    reinterpret_cast<void (*)(void*)>(target.function)(target.state);
  }
  static int choose_indirect(const void* payload) {
    Indirect target;
    std::memcpy(&target, payload, sizeof(target));
    return reinterpret_cast<int (*)(void*)>(target.function)(target.state);
  }
};

}  // namespace weft

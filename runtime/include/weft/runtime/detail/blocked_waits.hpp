// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The wait-for graph among threads: a wait for a promise whose work belongs
// to a WaitScope, made from a thread inside other scopes (a node of graph
// A waiting for a run of graph B), is registered while it blocks. A wait
// that would close a cycle through other threads' registered waits (B's
// node, on another thread, waits for a run of A) throws std::logic_error
// instead of blocking for ever; the other waits then see its error.
// WaitScope finds the cycles within one thread's stack. Internal to the
// runtime (future.cpp); docs/waiting.md, "Wait cycles".
#pragma once

#include <vector>

namespace weft {
class WaitScope;
}

namespace weft::detail {

struct TaskHeader;

class BlockedWait {
 public:
  // Registers the calling thread's wait for `task`, whose work is in
  // `awaited`, if the thread is inside any scope; throws std::logic_error
  // (registering nothing) when the wait would close a cycle.
  BlockedWait(const WaitScope& awaited, const TaskHeader& task);
  ~BlockedWait();
  BlockedWait(const BlockedWait&) = delete;
  BlockedWait& operator=(const BlockedWait&) = delete;

 private:
  const WaitScope* awaited_;
  const TaskHeader* task_;
  std::vector<const WaitScope*> inside_;  // the scopes the waiting thread is in
  bool registered_ = false;
};

}  // namespace weft::detail

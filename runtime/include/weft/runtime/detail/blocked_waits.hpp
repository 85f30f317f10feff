// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The wait-for graph among threads: a wait for work that belongs to a
// WaitScope (a run of graph B, a TaskGroup), made from a thread inside
// other scopes (a node of graph A), is registered while it blocks. A wait
// that would close a cycle through other threads' registered waits (B's
// node, on another thread, waits for a run of A) throws std::logic_error
// instead of blocking for ever; the other waits then see its error.
// WaitScope finds the cycles within one thread's stack. Internal to the
// runtime (future.cpp, task_group.hpp); docs/waiting.md, "Wait cycles".
#pragma once

#include <vector>

namespace weft {
class WaitScope;
}

namespace weft::detail {

struct TaskHeader;

class BlockedWait {
 public:
  // Whether the awaited work is complete: a wait that sees it is about to
  // return, and closes no cycle.
  struct Done {
    bool (*check)(const void* subject) noexcept;
    const void* subject;
  };
  // Registers the calling thread's wait for `task`, whose work is in
  // `awaited`, if the thread is inside any scope; throws std::logic_error
  // (registering nothing) when the wait would close a cycle.
  BlockedWait(const WaitScope& awaited, const TaskHeader& task);
  // The same for a TaskGroup's wait: `done` says when the group is idle.
  BlockedWait(const WaitScope& awaited, Done done);
  ~BlockedWait();
  BlockedWait(const BlockedWait&) = delete;
  BlockedWait& operator=(const BlockedWait&) = delete;

 private:
  void register_or_throw(bool for_group);

  const WaitScope* awaited_;
  Done done_;
  std::vector<const WaitScope*> inside_;  // the scopes the waiting thread is in
  bool registered_ = false;
};

}  // namespace weft::detail

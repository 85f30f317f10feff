// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which Executor runs an execution policy that names none.
//
//   weft::parallel_for(n, f);                     // on weft::current_executor()
//
//   weft::ExecutorScope scope(executor);          // on a thread of your own:
//   weft::parallel_for(n, f);                     // policies now run on `executor`
//
// The answer, in order: the executor of the innermost ExecutorScope on the
// calling thread; the executor whose worker runs the calling thread (inside
// a graph node, a task, a TaskGroup job or a parallel_for body, so nested
// calls stay on the same workers and help them instead of blocking);
// otherwise the process-wide weft::default_executor() (runtime layer:
// default configuration, made on first use).
#pragma once

#include <utility>

#include <weft/runtime/executor.hpp>
#include <weft/runtime/work_graph_policy.hpp>  // declares default_executor()

namespace weft {

namespace detail {
inline thread_local Executor* tls_scoped_executor = nullptr;
}  // namespace detail

inline Executor& current_executor() {
  if (Executor* scoped = detail::tls_scoped_executor) return *scoped;
  if (WorkerContext* worker = Executor::current_worker()) return worker->executor();
  return default_executor();
}

// Makes `executor` this thread's current executor until the scope ends.
// Scopes nest; each restores the one it replaced.
class ExecutorScope {
 public:
  explicit ExecutorScope(Executor& executor) noexcept
      : previous_(std::exchange(detail::tls_scoped_executor, &executor)) {}
  ~ExecutorScope() { detail::tls_scoped_executor = previous_; }
  ExecutorScope(const ExecutorScope&) = delete;
  ExecutorScope& operator=(const ExecutorScope&) = delete;

 private:
  Executor* previous_;
};

}  // namespace weft

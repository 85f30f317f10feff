// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a task sees while it runs (TaskMember), and what get() throws for a
// cancelled task or graph run (Cancelled). The in-memory form of tasks is
// internal: detail/task_header.hpp.
#pragma once

#include <stdexcept>

#include <weft/runtime/detail/task_header.hpp>

namespace weft {

class WorkerContext;

// What a task's operator() receives: where it runs. On CPU workers a team is
// one thread (Kokkos' choice for "heavy" cores), so TaskTeam and TaskSingle
// tasks see team_size() == 1 and team_barrier() returns at once.
class TaskMember {
 public:
  explicit TaskMember(WorkerContext& worker) noexcept : worker_(&worker) {}
  int team_rank() const noexcept { return 0; }
  int team_size() const noexcept { return 1; }
  void team_barrier() const noexcept {}
  WorkerContext& worker() const noexcept { return *worker_; }

 private:
  WorkerContext* worker_;
};

// What get() throws for a task, promise or graph run that was cancelled.
class Cancelled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A job is the unit the Executor runs: one graph node, one dynamic task, or
// one work-DAG index. It is a plain function pointer at the head of an object
// the job's owner allocated (the DyND kernel-prefix idea): the Executor never
// allocates or type-erases anything itself.
//
//   struct PrintJob : weft::Job {
//     PrintJob() : Job(&PrintJob::run) {}
//     static void run(weft::Job& self, weft::WorkerContext&) { std::puts("hi"); }
//   };
//
// A job must be ready when it is submitted: the Executor runs it as soon as a
// worker takes it and never pushes it back.
#pragma once

#include <cstdint>

namespace weft {

class WorkerContext;

// Which kind of worker may run a job (Ripple section 6): CPU jobs run on any
// worker; GPU jobs run only on GPU-priority workers, which prefer them.
enum class Domain : std::uint8_t { Cpu = 0, Gpu = 1 };

inline const char* to_string(Domain d) noexcept { return d == Domain::Cpu ? "cpu" : "gpu"; }

// How urgently a ready job should run (Kokkos' task priorities). Every worker
// keeps one deque per priority and always takes its own High jobs before its
// Regular ones and those before its Low ones; a thief likewise takes the
// most urgent job of the victim it tries. There is no global order: a Low
// job on one worker may run while another worker holds a High one.
enum class TaskPriority : std::uint8_t { High = 0, Regular = 1, Low = 2 };
inline constexpr int kTaskPriorities = 3;

inline const char* to_string(TaskPriority p) noexcept {
  return p == TaskPriority::High ? "high" : p == TaskPriority::Regular ? "regular" : "low";
}

struct Job {
  using Invoke = void (*)(Job& self, WorkerContext& worker);
  explicit Job(Invoke fn) noexcept : invoke(fn) {}
  Invoke invoke;
};

}  // namespace weft

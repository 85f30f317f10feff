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

struct Job {
  using Invoke = void (*)(Job& self, WorkerContext& worker);
  explicit Job(Invoke fn) noexcept : invoke(fn) {}
  Invoke invoke;
};

}  // namespace weft

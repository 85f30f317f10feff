// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// parallel_for: call a functor once for every index of a policy, on the
// workers of an Executor and the calling thread.
//
//   weft::parallel_for(n, [&](std::int64_t i) { y(i) += a * x(i); });
//   weft::parallel_for(weft::RangePolicy(executor, 0, n), saxpy);
//   weft::parallel_for(weft::MDRangePolicy<2>({0, 0}, {nx, ny}),
//                      [&](std::int64_t i, std::int64_t j) { u(i, j) = 0.0; });
//
// f is called as a const functor, f(i) for a RangePolicy and f(i0, i1, ...)
// for an MDRangePolicy (order: range_policy.hpp), exactly once per index,
// concurrently from several threads; calls within one chunk happen in order
// on one thread, in a plain counted loop the compiler can vectorise.
//
// Where it runs: on the policy's executor, else weft::current_executor()
// (current_executor.hpp). A policy that fits in one chunk runs inline on the
// caller without touching any executor; otherwise the range is cut into
// chunks (chunked_run.hpp: at least 2048 indices each, about 8 per CPU
// worker) that the caller and helper jobs on the other CPU workers claim one
// by one. The call returns when every chunk has run. Called from inside a
// job (a parallel_for body, a TaskGroup job, a graph node), the waiting
// worker keeps running other jobs, so nesting does not deadlock.
//
// Exceptions: if f throws, chunks not yet started are skipped (best effort:
// chunks already running finish) and parallel_for rethrows the first
// exception once no chunk is running. The executor stays usable.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>

#include <weft/runtime/executor.hpp>
#include <weft/views/chunked_run.hpp>
#include <weft/views/current_executor.hpp>
#include <weft/views/range_policy.hpp>

namespace weft {

namespace detail {

template <class Policy, class F>
struct ForChunks {
  const Policy* policy;
  const F* f;
  ChunkPlan plan;

  static void run_chunk(const void* self, std::uint64_t chunk) {
    const auto& body = *static_cast<const ForChunks*>(self);
    body.policy->for_each_index(body.plan.first_item(chunk), body.plan.last_item(chunk), *body.f);
  }
};

template <class Policy, class F>
void run_parallel_for(const Policy& policy, const F& f) {
  const std::uint64_t items = policy.work_items();
  if (items == 0) return;
  if (fits_one_chunk(policy)) {
    std::optional<ExecutorScope> scope;
    if (policy.executor() != nullptr) scope.emplace(*policy.executor());
    policy.for_each_index(0, items, f);
    return;
  }
  Executor& executor = executor_for(policy);
  const ChunkPlan plan = plan_chunks(policy, executor);
  const int helpers = helper_count(executor, plan.chunks);
  if (helpers == 0) {  // nobody to share with: one loop, no chunk bookkeeping
    ExecutorScope scope(executor);
    policy.for_each_index(0, items, f);
    return;
  }
  const ForChunks<Policy, F> body{&policy, &f, plan};
  ChunkedRun::run(executor, plan.chunks, helpers, "parallel_for", &ForChunks<Policy, F>::run_chunk, &body);
}

}  // namespace detail

template <ExecutionPolicy Policy, class F>
void parallel_for(const Policy& policy, const F& f) {
  static_assert(detail::invocable_per_index<Policy, const F&>::value,
                "parallel_for: f must be callable on a const f as f(i) for a RangePolicy, "
                "f(i0, i1, ...) for an MDRangePolicy");
  detail::run_parallel_for(policy, f);
}

// parallel_for(n, f) is parallel_for(RangePolicy(0, n), f).
template <PolicyIndex N, class F>
void parallel_for(N n, const F& f) {
  parallel_for(RangePolicy<N>(N{0}, n), f);
}

}  // namespace weft

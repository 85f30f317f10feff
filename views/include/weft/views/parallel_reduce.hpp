// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// parallel_reduce: fold a functor's contributions over every index of a
// policy into one value, on the workers of an Executor and the caller.
//
//   double sum;
//   weft::parallel_reduce(n, [&](std::int64_t i, double& partial) { partial += x(i) * y(i); }, sum);
//
//   double largest;
//   weft::parallel_reduce(weft::MDRangePolicy<2>({0, 0}, {nx, ny}),
//                         [&](std::int64_t i, std::int64_t j, double& m) { m = std::max(m, u(i, j)); },
//                         weft::MaxReducer(), largest);
//
// f is called as a const functor, f(i, partial) for a RangePolicy and
// f(i0, i1, ..., partial) for an MDRangePolicy, once per index. Each chunk
// (parallel_for.hpp and chunked_run.hpp say how a policy is cut) accumulates
// into its own partial, set first by reducer.init; the partials are then
// joined in chunk order into a value that started as reducer.init. So the
// result depends only on the chunking, which depends only on the policy and
// the executor's worker count: two calls on one executor give bit-identical
// floating-point sums. Fix chunk_size() to make it independent of the
// executor too.
//
// The result is overwritten, not joined with its old value; it is written
// only when the reduction succeeded. Without a reducer the reduction is a
// sum (SumReducer). Given a ReductionResult instead of a T&, the total is
// joined with the result's initial value and the result marked complete
// (reduction_result.hpp).
//
// T must be default-constructible and movable. Exceptions and nesting
// behave as for parallel_for.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include <weft/runtime/executor.hpp>
#include <weft/views/chunked_run.hpp>
#include <weft/views/current_executor.hpp>
#include <weft/views/range_policy.hpp>
#include <weft/views/reducers.hpp>
#include <weft/views/reduction_result.hpp>

namespace weft {

namespace detail {

// A result that is a value, not a ReductionResult (which has its own overloads).
template <class T>
concept PlainResult = !is_reduction_result_v<T>;

template <class Policy, class F, class R, class T>
struct ReduceChunks {
  const Policy* policy;
  const F* f;
  const R* reducer;
  ChunkPlan plan;
  CacheAligned<T>* partials;  // one per chunk; unused when the caller runs all chunks itself

  T reduce(std::uint64_t chunk) const {
    T partial{};
    reducer->init(partial);
    const F& fn = *f;
    policy->for_each_index(plan.first_item(chunk), plan.last_item(chunk),
                           [&fn, &partial](auto... index) { fn(index..., partial); });
    return partial;
  }

  static void run_chunk(const void* self, std::uint64_t chunk) {
    const auto& body = *static_cast<const ReduceChunks*>(self);
    body.partials[chunk].value = body.reduce(chunk);
  }
};

template <class Policy, class F, class R, class T>
void run_parallel_reduce(const Policy& policy, const F& f, const R& reducer, T& result) {
  T total{};
  reducer.init(total);
  const std::uint64_t items = policy.work_items();
  if (items == 0) {
    result = std::move(total);
    return;
  }
  const bool inline_run = fits_one_chunk(policy);
  Executor* executor = inline_run ? policy.executor() : &executor_for(policy);
  const ChunkPlan plan = inline_run ? ChunkPlan{items, items, 1} : plan_chunks(policy, *executor);
  ReduceChunks<Policy, F, R, T> body{&policy, &f, &reducer, plan, nullptr};
  const int helpers = inline_run ? 0 : helper_count(*executor, plan.chunks);
  if (helpers == 0) {
    // The same chunks joined in the same order as below: the result does not
    // depend on how many threads took part.
    std::optional<ExecutorScope> scope;
    if (executor != nullptr) scope.emplace(*executor);
    for (std::uint64_t chunk = 0; chunk < plan.chunks; ++chunk) reducer.join(total, body.reduce(chunk));
  } else {
    const auto partials = std::make_unique<CacheAligned<T>[]>(plan.chunks);
    body.partials = partials.get();
    ChunkedRun::run(*executor, plan.chunks, helpers, "parallel_reduce", &decltype(body)::run_chunk, &body);
    for (std::uint64_t chunk = 0; chunk < plan.chunks; ++chunk) reducer.join(total, partials[chunk].value);
  }
  result = std::move(total);
}

template <class Policy, class F, class R, class T>
constexpr void check_reduction() {
  static_assert(Reducer<R, T>,
                "parallel_reduce: the reducer needs init(T&) and join(T&, const T&) const members");
  static_assert(invocable_per_index<Policy, const F&, T&>::value,
                "parallel_reduce: f must be callable on a const f as f(i, T& partial) for a RangePolicy, "
                "f(i0, i1, ..., T& partial) for an MDRangePolicy");
  static_assert(std::is_default_constructible_v<T>,
                "parallel_reduce: the value type must be default-constructible");
}

}  // namespace detail

template <ExecutionPolicy Policy, class F, class R, detail::PlainResult T>
void parallel_reduce(const Policy& policy, const F& f, const R& reducer, T& result) {
  detail::check_reduction<Policy, F, R, T>();
  detail::run_parallel_reduce(policy, f, reducer, result);
}

template <ExecutionPolicy Policy, class F, detail::PlainResult T>
void parallel_reduce(const Policy& policy, const F& f, T& result) {
  parallel_reduce(policy, f, SumReducer<>{}, result);
}

template <ExecutionPolicy Policy, class F, class R, class T>
void parallel_reduce(const Policy& policy, const F& f, const R& reducer, ReductionResult<T>& result) {
  T total{};
  parallel_reduce(policy, f, reducer, total);
  result.prepare(1, reducer);
  result.partial(0) = std::move(total);
  result.finish(reducer);
}

template <ExecutionPolicy Policy, class F, class T>
void parallel_reduce(const Policy& policy, const F& f, ReductionResult<T>& result) {
  parallel_reduce(policy, f, SumReducer<>{}, result);
}

// parallel_reduce(n, ...) is parallel_reduce(RangePolicy(0, n), ...).
template <PolicyIndex N, class F, class Result>
void parallel_reduce(N n, const F& f, Result& result) {
  parallel_reduce(RangePolicy<N>(N{0}, n), f, result);
}

template <PolicyIndex N, class F, class R, class Result>
void parallel_reduce(N n, const F& f, const R& reducer, Result& result) {
  parallel_reduce(RangePolicy<N>(N{0}, n), f, reducer, result);
}

}  // namespace weft

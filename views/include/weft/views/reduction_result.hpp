// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ReductionResult<T>: where a reduction that may finish asynchronously, one
// partition at a time, leaves its value (Ripple's ReductionResult).
//
//   auto result = weft::make_reduction_result<double>(0.0);
//   weft::parallel_reduce(n, [&](std::int64_t i, double& sum) { sum += x(i); },
//                         weft::SumReducer(), result);
//   double total = result.value();              // 0.0 + the sum
//   double again = result.value_and_reset();    // same, and back to 0.0
//
// Copies share one state, so a graph node can hold a copy and the user reads
// the original. The initial value takes part in the reduction: finishing
// joins the initial value with the partials, so make_reduction_result(10.0)
// and a sum give 10 + the sum, and value_and_reset() lets a loop start each
// pass afresh.
//
// How a partitioned reduction (a graph's reduce node) fills it:
//
//   result.prepare(partitions, reducer);        // slots set to the identity
//   // partition p, on any thread, each its own slot:
//   weft::parallel_reduce(range_of(p), f, reducer, result.partial(p));
//   result.finish(reducer);                     // after every partition
//
// finish() joins the initial value and the partials in partition order
// (deterministic) and marks the result complete with a release store;
// is_complete() and value() load it with acquire, so a thread that sees the
// result complete sees its value. Until it is complete value() returns the
// initial value, never a half-written one. Calls that change the result
// (prepare, finish, reset, value_and_reset) must not overlap each other, nor
// a value() that read the previous completion; the graph orders them.
//
// T must be default-constructible and copyable. Partial slots sit on
// separate cache lines, so partitions finishing at once do not contend.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <weft/views/reducers.hpp>

namespace weft {

namespace detail {

// One value per cache line (64 bytes on the CPUs weft targets).
template <class T>
struct alignas(64) CacheAligned {
  T value{};
};

}  // namespace detail

template <class T>
class ReductionResult {
 public:
  using value_type = T;

  explicit ReductionResult(T initial = T{}) : state_(std::make_shared<State>(std::move(initial))) {}

  // The value of the last finished reduction, or the initial value while
  // none finished since the last reset.
  T value() const {
    // acquire: pairs with the release store in finish().
    return state_->complete.load(std::memory_order_acquire) ? state_->value : state_->initial;
  }

  T value_and_reset() {
    T current = value();
    reset();
    return current;
  }

  bool is_complete() const noexcept { return state_->complete.load(std::memory_order_acquire); }

  // Back to the initial value, not complete. (Only the flag changes: value()
  // returns the initial value while the result is not complete.)
  void reset() noexcept { state_->complete.store(false, std::memory_order_relaxed); }

  const T& initial_value() const noexcept { return state_->initial; }

  // Marks the result not complete and gives it one partial slot per
  // partition, each set to the reducer's identity. Keeps the slots of the
  // previous reduction when the count is the same, so repeated runs do not
  // allocate.
  template <class R>
  void prepare(std::size_t partitions, const R& reducer) {
    static_assert(Reducer<R, T>,
                  "ReductionResult::prepare needs a reducer with init(T&) and join(T&, const T&)");
    state_->complete.store(false, std::memory_order_relaxed);
    if (state_->partials.size() != partitions)
      state_->partials = std::vector<detail::CacheAligned<T>>(partitions);
    for (auto& slot : state_->partials) reducer.init(slot.value);
  }

  std::size_t partitions() const noexcept { return state_->partials.size(); }

  // Partition p's slot; threads may fill different slots at once.
  T& partial(std::size_t p) const {
    if (p >= state_->partials.size()) {
      throw std::out_of_range("ReductionResult: partial " + std::to_string(p) + " out of range (" +
                              std::to_string(state_->partials.size()) + " partitions prepared)");
    }
    return state_->partials[p].value;
  }

  // Joins the initial value and every partial, in partition order, into the
  // value and marks the result complete.
  template <class R>
  void finish(const R& reducer) {
    static_assert(Reducer<R, T>,
                  "ReductionResult::finish needs a reducer with init(T&) and join(T&, const T&)");
    T total = state_->initial;
    for (const auto& slot : state_->partials) reducer.join(total, slot.value);
    publish(std::move(total));
  }

  // Sets the value of a reduction whose partials were joined elsewhere (a
  // graph's reduce operation keeps its own partials, so one result can serve
  // several operations and graphs) and marks the result complete.
  void publish(T total) {
    state_->value = std::move(total);
    // release: the value written above is visible to whoever acquires complete.
    state_->complete.store(true, std::memory_order_release);
  }

  // How many ReductionResults share this state.
  long use_count() const noexcept { return state_.use_count(); }

 private:
  struct State {
    explicit State(T initial_value) : initial(initial_value), value(std::move(initial_value)) {}
    const T initial;
    T value;
    std::atomic<bool> complete{false};
    std::vector<detail::CacheAligned<T>> partials;
  };

  std::shared_ptr<State> state_;
};

template <class T>
ReductionResult<T> make_reduction_result(T initial = T{}) {
  return ReductionResult<T>(std::move(initial));
}

template <class T>
inline constexpr bool is_reduction_result_v = false;
template <class T>
inline constexpr bool is_reduction_result_v<ReductionResult<T>> = true;

}  // namespace weft

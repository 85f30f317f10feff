// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How parallel_for and parallel_reduce cut a policy into chunks and run the
// chunks on an Executor (internal to the views layer).
//
// Chunk sizes. A chunk is a run of consecutive work items (indices of a
// RangePolicy, tiles of an MDRangePolicy). Unless the policy sets
// chunk_size(), a chunk holds at least kMinIndicesPerChunk indices, so small
// ranges are one chunk that the caller runs inline, and otherwise the range
// is cut into about kChunksPerWorker chunks per CPU worker, enough for load
// balance without paying much per chunk. The plan depends only on the policy
// and the executor's worker count, never on timing: reductions that join
// per-chunk partials in chunk order are deterministic.
//
// Running. The caller and up to one helper job per other worker claim chunk
// numbers from one atomic counter and run them until none are left: self-
// scheduling, so a slow chunk delays only its thread and nobody waits for a
// stolen job to start. The caller then waits, through Executor::wait_until
// (which keeps a worker running other jobs, so nested calls cannot starve),
// for the chunks others claimed. The run's state lives on the heap and is
// reference counted: a helper job that starts late finds no chunk, touches
// only that state and frees it if it is the last user, so the caller returns
// as soon as the chunks are done.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include <weft/runtime/executor.hpp>
#include <weft/runtime/job.hpp>
#include <weft/views/current_executor.hpp>

namespace weft::detail {

inline constexpr std::uint64_t kMinIndicesPerChunk = 2048;
inline constexpr std::uint64_t kChunksPerWorker = 8;

// Rounds up without overflowing for any numerator.
constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) noexcept { return a / b + (a % b != 0); }

// The workers chunks are spread over: the CPU-priority ones (GPU-priority
// workers keep themselves free for GPU work), or all when there are none.
inline int parallel_width(const Executor& executor) noexcept {
  return executor.cpu_worker_count() > 0 ? executor.cpu_worker_count() : executor.worker_count();
}

// Items per chunk before the executor is known: the policy's chunk size, or
// the automatic minimum.
template <class Policy>
std::uint64_t min_items_per_chunk(const Policy& policy) noexcept {
  if (policy.chunk_size() != 0) return policy.chunk_size();
  const std::uint64_t indices = std::max<std::uint64_t>(policy.indices_per_work_item(), 1);
  return ceil_div(kMinIndicesPerChunk, indices);
}

// True when the policy is a single chunk on any executor: run it inline.
template <class Policy>
bool fits_one_chunk(const Policy& policy) noexcept {
  return policy.work_items() <= min_items_per_chunk(policy);
}

struct ChunkPlan {
  std::uint64_t items;      // work items in the policy
  std::uint64_t per_chunk;  // work items per chunk; the last chunk may hold fewer
  std::uint64_t chunks;

  std::uint64_t first_item(std::uint64_t chunk) const noexcept { return chunk * per_chunk; }
  std::uint64_t last_item(std::uint64_t chunk) const noexcept {
    return first_item(chunk) + std::min(per_chunk, items - first_item(chunk));
  }
};

template <class Policy>
ChunkPlan plan_chunks(const Policy& policy, const Executor& executor) noexcept {
  const std::uint64_t items = policy.work_items();
  std::uint64_t per_chunk = min_items_per_chunk(policy);
  if (policy.chunk_size() == 0) {
    const std::uint64_t target_chunks =
        kChunksPerWorker * static_cast<std::uint64_t>(parallel_width(executor));
    per_chunk = std::max(per_chunk, ceil_div(items, target_chunks));
  }
  return {items, per_chunk, ceil_div(items, per_chunk)};
}

// Helper jobs worth starting for `chunks` chunks: one per worker other than
// the caller (a guest is not one of them), and no more than the chunks the
// caller leaves to others.
inline int helper_count(const Executor& executor, std::uint64_t chunks) noexcept {
  if (chunks <= 1) return 0;
  const WorkerContext* caller = executor.this_worker();
  const bool caller_is_counted = caller != nullptr && !caller->guest() &&
                                 (executor.cpu_worker_count() == 0 || caller->domain() == Domain::Cpu);
  const int others = parallel_width(executor) - (caller_is_counted ? 1 : 0);
  return static_cast<int>(
      std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max(others, 0)), chunks - 1));
}

template <class Policy>
Executor& executor_for(const Policy& policy) {
  return policy.executor() != nullptr ? *policy.executor() : current_executor();
}

class ChunkedRun {
 public:
  using RunChunk = void (*)(const void* body, std::uint64_t chunk);

  // Calls run_chunk(body, c) once for every c in [0, chunks), on the calling
  // thread and `helpers` helper jobs of `executor`, and returns when all
  // returned. If one throws, chunks not yet started are skipped and the
  // first exception is rethrown here. `trace_name` labels the helpers'
  // spans in execution traces.
  static void run(Executor& executor, std::uint64_t chunks, int helpers, const char* trace_name,
                  RunChunk run_chunk, const void* body) {
    // Observed: helpers inside a graph node are named after it (trace.hpp).
    if (executor.observers() != nullptr) trace_name = loop_trace_name(trace_name);
    auto* state = new ChunkedRun(executor, chunks, helpers, trace_name, run_chunk, body);
    state->epoch_ = executor.begin_run();  // ended by the last release(), so ~Executor waits for late helpers
    int submitted = 0;
    try {
      for (HelperJob& job : state->helpers_) {
        executor.submit(&job);
        ++submitted;
      }
    } catch (...) {
      // Fewer helpers only means the caller runs more chunks itself.
      state->references_.fetch_sub(helpers - submitted, std::memory_order_relaxed);
    }
    state->run_chunks();
    executor.wait_until([state] { return state->all_chunks_finished(); });
    // No chunk writes error_ any more: all finished, and the acquire in
    // all_chunks_finished() made the writes visible.
    std::exception_ptr error = std::move(state->error_);
    state->release();
    if (error) std::rethrow_exception(error);
  }

 private:
  struct HelperJob : Job {
    explicit HelperJob(ChunkedRun& owner) noexcept : Job(&HelperJob::invoke), run(&owner) {}
    static void invoke(Job& self, WorkerContext& worker) {
      ChunkedRun& run = *static_cast<HelperJob&>(self).run;
      const WorkerContext* traced = worker.tracing() ? &worker : nullptr;
      run.run_chunks(traced, traced != nullptr ? worker.trace_clock() : 0);
      run.release();  // may free `self`
    }
    ChunkedRun* run;
  };

  ChunkedRun(Executor& executor, std::uint64_t chunks, int helpers, const char* trace_name,
             RunChunk run_chunk, const void* body)
      : executor_(executor),
        run_chunk_(run_chunk),
        body_(body),
        chunk_count_(chunks),
        trace_name_(trace_name),
        references_(1 + helpers) {
    helpers_.reserve(static_cast<std::size_t>(helpers));
    for (int h = 0; h < helpers; ++h) helpers_.emplace_back(*this);
  }

  // Claims and runs chunks until none are left; returns how many it ran.
  // A traced helper (`traced` set) records its span, begun at `start`,
  // after its last chunk ran and before that chunk counts as finished: so
  // it is in before the caller can return, and with it the node and run
  // around the loop end.
  std::uint64_t run_chunks(const WorkerContext* traced = nullptr, std::int64_t start = 0) noexcept {
    ExecutorScope scope(executor_);  // nested calls in the chunks stay on this executor
    std::uint64_t ran = 0;
    // relaxed: a claim only has to be unique. What a chunk reads was
    // published by the submission that started this helper (or is the
    // caller's own).
    std::uint64_t chunk = next_chunk_.fetch_add(1, std::memory_order_relaxed);
    while (chunk < chunk_count_) {
      // relaxed: skipping after a failure is best effort; the error itself
      // travels through finished_chunks_.
      if (!failed_.load(std::memory_order_relaxed)) {
        try {
          run_chunk_(body_, chunk);
          ++ran;
        } catch (...) {
          if (!failed_.exchange(true, std::memory_order_relaxed)) error_ = std::current_exception();
        }
      }
      const std::uint64_t next = next_chunk_.fetch_add(1, std::memory_order_relaxed);
      if (next >= chunk_count_ && traced != nullptr && ran > 0)
        traced->trace(trace_name_.c_str(), Domain::Cpu, start);
      // release: this chunk's writes (results, partials, error_, the span)
      // happen before the caller's acquire load that sees the count
      // complete; each RMW continues the release sequence, so earlier
      // chunks' writes do too.
      if (finished_chunks_.fetch_add(1, std::memory_order_release) + 1 == chunk_count_) {
        executor_.notify_completion();  // wakes a caller sleeping outside the pool
      }
      chunk = next;
    }
    return ran;
  }

  bool all_chunks_finished() const noexcept {
    // acquire: pairs with the release increments in run_chunks().
    return finished_chunks_.load(std::memory_order_acquire) == chunk_count_;
  }

  void release() noexcept {
    // acq_rel: the last user's acquire orders every other user's accesses
    // before the delete; each user's release publishes its own.
    if (references_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      Executor& executor = executor_;
      const RunEpoch epoch = epoch_;
      delete this;
      executor.end_run(epoch);
    }
  }

  Executor& executor_;
  RunEpoch epoch_ = RunEpoch::even;  // the executor run's generation, for its end_run()
  const RunChunk run_chunk_;
  const void* const body_;
  const std::uint64_t chunk_count_;
  // A copy: a helper reports its span after its chunks, when the node
  // whose name it is may have ended.
  const std::string trace_name_;
  std::vector<HelperJob> helpers_;
  std::exception_ptr error_;  // set once, by the chunk whose exchange of failed_ won
  std::atomic<bool> failed_{false};
  std::atomic<int> references_;  // the caller and each submitted helper
  // Claimed and finished counts change once per chunk, from every thread:
  // keep them off the lines the constant fields above are read from.
  alignas(64) std::atomic<std::uint64_t> next_chunk_{0};
  alignas(64) std::atomic<std::uint64_t> finished_chunks_{0};
};

}  // namespace weft::detail

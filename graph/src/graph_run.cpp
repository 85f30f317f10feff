// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Running graphs. Each run is one object with its count or predicate and
// the Promise behind its future; the runs of one graph wait in the graph's
// queue, and each starts when the one before it has ended (Taskflow's
// semantics). A run's passes are started on the engine and report their end
// through a callback, so nothing ever blocks a worker; the callback starts
// the next pass, or ends the run and starts the next queued one.
#include <weft/graph/graph.hpp>

#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include <weft/runtime/promise.hpp>
#include <weft/runtime/wait_scope.hpp>

#include "node_label.hpp"
#include "program.hpp"

namespace weft::detail {

struct GraphRun;

struct RunQueue : RunQueueHeader {
  std::mutex mutex;
  std::shared_ptr<GraphRun> current;              // the run in flight (null: none)
  std::deque<std::shared_ptr<GraphRun>> waiting;  // the runs after it, in submission order
  // The graph's nodes run inside it: a node waiting for a run of its own
  // graph (which cannot end before the node does) throws instead of hanging.
  WaitScope scope{
      "Future::wait: a node waits for a run of its own graph, which cannot start or end before that node "
      "returns (it would wait forever); make the work a subgraph, or wait for it outside the graph",
      "Future::wait: a wait cycle between graphs: a node of the awaited graph runs further down this "
      "thread's stack (it waited for another graph's run, and this node ran meanwhile), so the awaited "
      "run cannot end before this wait returns (it would wait forever); break the cycle (graph A's node "
      "waits for graph B, whose node waits for A), or wait for the runs outside the graphs"};
};

struct GraphRun {
  GraphRun(std::shared_ptr<RunQueue> q, std::shared_ptr<Program> p, Executor& e, long passes,
           std::function<bool()> stop)
      : queue(std::move(q)),
        program(std::move(p)),
        executor(&e),
        promise(e, &queue->scope),
        passes_left(passes),
        until(std::move(stop)) {}

  std::shared_ptr<RunQueue> queue;
  std::shared_ptr<Program> program;
  Executor* executor;
  RunEpoch epoch = RunEpoch::even;  // of the executor run it is, from submission on
  Promise<> promise;
  long passes_left;             // run, run_n
  std::function<bool()> until;  // run_until: stop once it says so (asked before each pass)
  // Distributed graphs: where each pass stands (the ranks compare it), and
  // the step chosen at a pass's end, taken once the ranks agree.
  std::uint64_t number = 0;  // among the program's runs, from 1
  std::uint64_t passes_started = 0;
  bool another = false;
};

namespace {

// What a run does next, decided after its start or after one of its passes.
struct Step {
  bool pass = false;
  std::exception_ptr error;  // when it ends: its error (null: success)
};

Step next_step(GraphRun& run, std::exception_ptr error, bool after_pass) {
  if (error) return {false, std::move(error)};
  // A graph without a root (an empty one, say) runs nothing in any pass:
  // its run ends at once, whatever its count or predicates, which would
  // otherwise be asked again and again on this thread, each pass ending
  // as it starts.
  if (run.program->policy->num_roots() == 0) return {false, nullptr};
  if (run.promise.cancel_requested()) {
    return {false, std::make_exception_ptr(Cancelled("the graph run was cancelled"))};
  }
  try {
    if (after_pass) {
      // Ripple's conditional(): the graph again while its predicate holds,
      // as part of the same run.
      if (run.program->predicate && run.program->predicate()) return {true, nullptr};
      if (!run.until) --run.passes_left;
    }
    const bool done = run.until ? run.until() : run.passes_left <= 0;
    return {!done, nullptr};
  } catch (...) {
    return {false, std::current_exception()};
  }
}

void advance(GraphRun* run, Step step) noexcept;

void pass_agreed(void* context, std::exception_ptr error) {
  auto* run = static_cast<GraphRun*>(context);
  advance(run, error ? Step{false, std::move(error)} : Step{run->another, nullptr});
}

// A distributed graph's pass ends once it has ended on every rank, with
// the first failure of any (RankChannel::end_pass). Each rank chooses its
// next step first, so that the ranks compare their choices: one whose count
// or predicate stops the run where another's goes on would leave the other
// waiting for its messages.
void pass_ended(void* context, std::exception_ptr error) {
  auto* run = static_cast<GraphRun*>(context);
  Step step = next_step(*run, std::move(error), true);
  if (RankChannel* channel = run->program->ranks.channel()) {
    run->another = step.pass;
    channel->end_pass(std::move(step.error), step.pass, &pass_agreed, run);
    return;
  }
  advance(run, std::move(step));
}

// Starts a pass of `run`; false when there is nothing to start (no node
// without a predecessor), which counts as a pass that ended at once.
bool start_pass(GraphRun& run, std::exception_ptr& error) {
  Program& program = *run.program;
  if (program.policy->num_roots() == 0) return false;
  program.executor = run.executor;
  program.cancel = run.promise.cancellation_flag();
  RankChannel* channel = program.ranks.channel();
  if (channel != nullptr) channel->begin_pass(program.cancel, {run.number, ++run.passes_started});
  try {
    program.policy->start(*run.executor, program.calls.data(), program.cancel, &pass_ended, &run,
                          &run.queue->scope);
    return true;
  } catch (...) {
    error = std::current_exception();
    if (channel == nullptr) return false;
    // The other ranks still end this pass with us.
    channel->end_pass(std::move(error), false, &pass_agreed, &run);
    error = nullptr;
    return true;
  }
}

// Ends `run` with `error` (null: success) and returns the queued run to
// start next, if any. The run's future completes after the next run became
// current (so the graph stays busy for it) and before the next run starts.
GraphRun* finish(GraphRun& run, std::exception_ptr error) {
  Executor& executor = *run.executor;
  const std::shared_ptr<RunQueue> queue = run.queue;
  std::shared_ptr<GraphRun> self;
  GraphRun* next = nullptr;
  {
    std::lock_guard<std::mutex> lock(queue->mutex);
    self = std::move(queue->current);
    if (!queue->waiting.empty()) {
      queue->current = std::move(queue->waiting.front());
      queue->waiting.pop_front();
      next = queue->current.get();
    }
  }
  // GPU work queued before a failure may still run: the caller may free its
  // memory once the error reaches it.
  if (error) self->program->synchronize_gpu();
  const RunEpoch epoch = run.epoch;
  {
    Promise<> promise = std::move(self->promise);
    self.reset();  // the run (and with it its program, if the graph is gone)
    // release: a caller that sees the future complete may change the graph.
    queue->in_flight.fetch_sub(1, std::memory_order_release);
    if (error) {
      promise.set_exception(std::move(error));
    } else {
      promise.set_value();
    }
  }
  executor.end_run(epoch);  // last: wait_for_all() and ~Executor may return now
  return next;
}

// Takes `step` for `run`, and the steps after it until a pass is in
// flight or no run is left.
void advance(GraphRun* run, Step step) noexcept {
  // A loop, not recursion: runs that end at once (an empty graph, a
  // predicate already true) may follow each other in the queue.
  while (run != nullptr) {
    if (step.pass) {
      std::exception_ptr error;
      if (start_pass(*run, error)) return;  // its end calls pass_ended
      // Nothing to run (or it failed to start): that pass is over.
      step = next_step(*run, std::move(error), true);
      continue;
    }
    run = finish(*run, std::move(step.error));
    if (run != nullptr) step = next_step(*run, nullptr, false);
  }
}

void start_run(GraphRun* run) noexcept { advance(run, next_step(*run, nullptr, false)); }

// What a run's cancel hook holds: its queue, and the run without keeping it
// alive, so that a run's program (and with it, once the graph is gone, the
// node callables) goes before its future completes, not after the waiter
// woke.
struct CancelTarget {
  std::shared_ptr<RunQueue> queue;
  std::weak_ptr<GraphRun> run;
};

// Future::cancel() on a run: a queued run leaves the queue at once and
// completes cancelled; the run in flight sees the flag (no node starts any
// more, and the run ends after its pass).
void cancel_queued(void* context) noexcept {
  const auto& target = *static_cast<const CancelTarget*>(context);
  RunQueue& queue = *target.queue;
  std::shared_ptr<GraphRun> removed;
  {
    std::shared_ptr<GraphRun> run = target.run.lock();
    if (run == nullptr) return;  // it has ended
    std::lock_guard<std::mutex> lock(queue.mutex);
    for (auto it = queue.waiting.begin(); it != queue.waiting.end(); ++it) {
      if (*it == run) {
        removed = std::move(*it);
        queue.waiting.erase(it);
        break;
      }
    }
  }
  if (removed == nullptr) return;
  Executor& executor = *removed->executor;
  queue.in_flight.fetch_sub(1, std::memory_order_release);
  try {
    removed->promise.set_cancelled("the graph run was cancelled before it started");
  } catch (...) {
    // Only an allocation failure: the promise still completes (broken).
  }
  const RunEpoch epoch = removed->epoch;
  removed.reset();
  executor.end_run(epoch);
}

}  // namespace

std::shared_ptr<RunQueueHeader> RunState::make_queue() { return std::make_shared<RunQueue>(); }

}  // namespace weft::detail

namespace weft {

std::shared_ptr<detail::Program> Graph::lowered() {
  std::shared_ptr<detail::Program>& program = runs_.program();
  if (!program) program = std::make_shared<detail::Program>(*this);
  return program;
}

Future<> Graph::run_on(Executor& executor, long count, std::function<bool()> until) {
  if (count < 0 && !until) throw std::invalid_argument("Executor::run_until: the predicate is empty");
  auto queue = std::static_pointer_cast<detail::RunQueue>(runs_.queue());
  std::shared_ptr<detail::Program> program;
  {
    // Lowering and binding GPU streams happen once, here: never while running.
    std::lock_guard<std::mutex> lock(queue->mutex);
    program = lowered();  // throws on a cycle, naming it
    if (!program->not_runnable.empty()) throw std::logic_error("Graph: cannot run: " + program->not_runnable);
    if (program->has_gpu_kind && executor.gpu_worker_count() == 0) {
      // The graph is named by its first GPU-kind node, looked for in subgraphs too.
      const auto first_gpu_kind = [](const Graph& graph, const auto& self) -> std::string {
        for (std::size_t i = 0; i < graph.nodes_.size(); ++i) {
          const detail::NodeRecord& node = graph.nodes_[i];
          const std::string label = detail::node_label(graph, static_cast<NodeId>(i));
          if (node.execution == ExecutionKind::Gpu) return label;
          if (node.kind == NodeKind::Subgraph && node.aux >= 0) {
            std::string inner = self(*graph.subgraphs_[static_cast<std::size_t>(node.aux)], self);
            if (!inner.empty()) return inner + " in subgraph node " + label;
          }
        }
        return {};
      };
      throw std::logic_error("Executor::run: GPU-kind node " + first_gpu_kind(*this, first_gpu_kind) +
                             " (the graph's first) needs GPU-priority workers, and this executor " +
                             executor.no_gpu_workers_reason() + ", or make the nodes ExecutionKind::Cpu");
    }
    program->bind_gpu();
    // Named once, for wait cycles found across threads (docs/waiting.md).
    if (!queue->scope.described() && !nodes_.empty()) {
      queue->scope.describe_as("the graph whose first node is " + detail::node_label(*this, 0) + " (" +
                               std::to_string(nodes_.size()) + (nodes_.size() == 1 ? " node)" : " nodes)"));
    }
  }
  if (!until && count == 0) {  // nothing to run: complete at once, queue or not
    {
      // Still a run of the graph: ranks whose counts differ see it in the numbers.
      std::lock_guard<std::mutex> lock(queue->mutex);
      ++program->runs_submitted;
    }
    Promise<> none(executor);
    none.set_value();
    return none.get_future();
  }
  auto run = std::make_shared<detail::GraphRun>(queue, std::move(program), executor, count, std::move(until));
  run->promise.on_cancel(&detail::cancel_queued,
                         std::make_shared<detail::CancelTarget>(detail::CancelTarget{queue, run}));
  Future<> future = run->promise.get_future();
  run->epoch = executor.begin_run();  // from here nothing throws
  queue->in_flight.fetch_add(1, std::memory_order_relaxed);
  bool start = false;
  {
    std::lock_guard<std::mutex> lock(queue->mutex);
    run->number = ++run->program->runs_submitted;  // in queue order, which is run order
    if (queue->current == nullptr) {
      queue->current = run;
      start = true;
    } else {
      queue->waiting.push_back(run);
    }
  }
  if (start) detail::start_run(run.get());
  return future;
}

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A Graph's runs: the queue its runs wait in (runs of one graph execute one
// after another, in submission order) and its lowered form, made on the
// first run and kept until the graph changes. Internal; the queue and the
// lowering live in graph/src.
#pragma once

#include <atomic>
#include <memory>
#include <stdexcept>

namespace weft::detail {

struct Program;

// The part of a graph's run queue the builder needs to see.
struct RunQueueHeader {
  // Runs submitted and not finished: while there are any, the graph refuses
  // changes (they would change what the queued runs execute).
  std::atomic<long> in_flight{0};
};

class RunState {
 public:
  RunState() : queue_(make_queue()) {}
  // A copy is another graph: runs of its own, lowered again when it first runs.
  RunState(const RunState&) : queue_(make_queue()) {}
  RunState& operator=(const RunState& other) {
    if (this != &other) {
      refuse_changes_while_running("be assigned to");
      program_.reset();
    }
    return *this;
  }
  RunState(RunState&&) noexcept = default;
  RunState& operator=(RunState&& other) {
    if (this != &other) {
      refuse_changes_while_running("be assigned to");
      queue_ = std::move(other.queue_);
      program_ = std::move(other.program_);
    }
    return *this;
  }
  ~RunState() = default;

  // Runs in flight (submitted, queued or running, not finished).
  bool busy() const noexcept {
    return queue_ != nullptr && queue_->in_flight.load(std::memory_order_acquire) != 0;
  }
  // Throws std::logic_error unless the graph may change now ("cannot <what>").
  void refuse_changes_while_running(const char* what) const {
    if (busy()) {
      throw std::logic_error(std::string("Graph: cannot ") + what +
                             " while runs of it are in flight; wait for their futures first");
    }
  }
  // The graph changed: the next run lowers it again.
  void changed() noexcept { program_.reset(); }

  std::shared_ptr<RunQueueHeader>& queue() {
    if (queue_ == nullptr) queue_ = make_queue();  // a moved-from graph, used again
    return queue_;
  }
  std::shared_ptr<Program>& program() noexcept { return program_; }

 private:
  static std::shared_ptr<RunQueueHeader> make_queue();  // graph_run.cpp

  std::shared_ptr<RunQueueHeader> queue_;
  std::shared_ptr<Program> program_;
};

}  // namespace weft::detail

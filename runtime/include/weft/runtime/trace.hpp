// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Execution traces: per worker, each graph node, task or task-group job it
// ran, with its name, domain, start and end; written as Chrome trace-event
// JSON that Perfetto (ui.perfetto.dev) and chrome://tracing open.
//
//   executor.start_trace();
//   executor.run(graph).wait().get();
//   executor.write_trace("run.json");    // stops tracing; see below
//
// Or set WEFT_TRACE=path.json in the environment: every Executor then traces
// from its construction and writes the file when destroyed (a second
// executor in the same process writes path.json.1, and so on).
//
// The tracer is an Observer (observer.hpp): start_trace() attaches it and
// stop_trace() detaches it, so an executor that does not trace pays what
// one without observers pays. When on, a worker appends to its own buffer
// (no locks, no sharing).
//
// Write (or stop) a trace only when no run is in flight: a run's events are
// all recorded before its completion is signalled, so after waiting for the
// runs you traced, every event is in.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <weft/runtime/job.hpp>
#include <weft/runtime/observer.hpp>

namespace weft {

// A name that lives as long as the process (events keep the pointer).
const char* intern_trace_name(std::string_view name);

struct TraceEvent {
  const char* name;
  std::int64_t start_ns;  // since the trace started
  std::int64_t end_ns;
  Domain domain;
};

// Records a span per node between on_node_begin and on_node_end, on the
// buffer of the worker that ran it; events of workers beyond `workers` are
// dropped. Attach it to one executor at a time.
class Tracer : public Observer {
 public:
  explicit Tracer(int workers);

  bool active() const noexcept { return active_.load(std::memory_order_relaxed); }
  void start();
  void stop() noexcept { active_.store(false, std::memory_order_relaxed); }

  std::int64_t now_ns() const noexcept { return observer_clock() - origin_ns_; }
  // Worker `worker` only (each worker owns its buffer).
  void record(int worker, const char* name, Domain domain, std::int64_t start_ns) {
    buffers_[static_cast<std::size_t>(worker)].events.push_back({name, start_ns, now_ns(), domain});
  }

  void on_node_begin(const NodeEvent& e) noexcept override;
  void on_node_end(const NodeEvent& e) noexcept override;

  // Every event so far, by worker (call when no run is in flight).
  std::vector<std::vector<TraceEvent>> events() const;
  // Writes Chrome trace-event JSON; throws std::runtime_error if the file cannot be written.
  void write_chrome_json(const std::string& path, const std::vector<Domain>& worker_domains) const;

 private:
  struct alignas(64) Buffer {
    std::vector<TraceEvent> events;
    std::vector<std::int64_t> open;  // begin times of the nodes running, innermost last
  };
  std::atomic<bool> active_{false};
  std::int64_t origin_ns_;  // observer_clock() at start()
  std::unique_ptr<Buffer[]> buffers_;
  int workers_;
};

}  // namespace weft

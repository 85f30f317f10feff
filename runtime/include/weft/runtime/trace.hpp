// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Execution traces: per worker, each graph node, task or task-group job it
// ran, with its name, domain, start and end (and for graph nodes its id,
// level, partition, device and run); each run of a graph; and the graph's
// edges between the nodes of a run, as flow arrows. Written as Chrome
// trace-event JSON that Perfetto (ui.perfetto.dev) and chrome://tracing
// open, and `weft trace summary` reads (docs/traces.md).
//
//   executor.start_trace();
//   executor.run(graph).wait().get();
//   executor.write_trace("run.json");    // stops tracing; see below
//
// Or set WEFT_TRACE=path.json in the environment: every Executor then traces
// from its construction and writes the file when destroyed (a second
// executor in the same process writes path.1.json, and so on).
//
// The tracer is an Observer (observer.hpp): start_trace() attaches it and
// stop_trace() detaches it, so an executor that does not trace pays what
// one without observers pays. When on, a worker appends to its own buffer
// (no locks, no sharing); the begin and end of a run take a lock.
//
// Write (or stop) a trace only when no run is in flight: a run's events are
// all recorded before its completion is signalled, so after waiting for the
// runs you traced, every event is in.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <weft/runtime/detail/name_arena.hpp>
#include <weft/runtime/job.hpp>
#include <weft/runtime/observer.hpp>

namespace weft {

namespace detail {
class TraceFile;  // writes a Tracer's file (trace.cpp)
}  // namespace detail

// The name the helper jobs of a parallel loop started on this thread take:
// the graph node this worker runs while observed (WorkerContext::node_name),
// else `loop` ("parallel_for").
const char* loop_trace_name(const char* loop) noexcept;

// Where executor number n (from 0) of a process writes WEFT_TRACE=path:
// path itself, then the number before the extension ("t.json", "t.1.json").
std::string numbered_trace_path(const std::string& path, int n);

struct TraceEvent {
  const char* name;       // the tracer's copy: valid until it restarts or is destroyed
  std::int64_t start_ns;  // since the trace started
  std::int64_t end_ns;
  Domain domain;
  // Graph nodes: as NodeEvent (-1 when it has none, and for other jobs).
  std::int32_t level = -1;
  std::int32_t partition = -1;
  std::int32_t device = -1;
  std::uint32_t successor_count = 0;  // its successors in the graph ...
  std::int64_t node = -1;
  std::int64_t run = -1;
  const void* graph = nullptr;
  std::size_t successors = 0;  // ... from here in its worker's successor buffer
};

// One run (a pass) of a graph, between on_run_begin and on_run_end.
struct TraceRun {
  const void* graph;
  std::int64_t run;
  std::int64_t nodes;
  std::int64_t start_ns;  // since the trace started
  std::int64_t end_ns;
};

// The GPU work of one GPU graph node (on_device_span), on its device's
// stream: tracks "GPU <device> stream <s>" in the file, s = 0 the compute
// stream, s = k + 1 copy stream k.
struct TraceDeviceSpan {
  const char* name;       // as TraceEvent's
  std::int64_t start_ns;  // since the trace started
  std::int64_t end_ns;
  std::int32_t device;
  std::int32_t stream;  // as DeviceSpanEvent: -1 compute, k copy stream k
  std::int64_t node;
  std::int64_t run;
  const void* graph;
};

// Records a span per node between on_node_begin and on_node_end, on the
// buffer of the worker that ran it (events of workers beyond `workers` are
// dropped), with the successors of graph nodes, and a span per run. The
// file gets the edges of a run between the nodes it recorded. Attach it to
// one executor at a time.
class Tracer : public Observer {
 public:
  explicit Tracer(int workers);

  bool active() const noexcept { return active_.load(std::memory_order_relaxed); }
  void start();
  void stop() noexcept { active_.store(false, std::memory_order_relaxed); }

  std::int64_t now_ns() const noexcept { return observer_clock() - origin_ns_; }
  // Worker `worker` only (each worker owns its buffer).
  void record(int worker, const char* name, Domain domain, std::int64_t start_ns) {
    Buffer& buffer = buffers_[static_cast<std::size_t>(worker)];
    buffer.events.push_back({buffer.names.keep(name), start_ns, now_ns(), domain});
  }

  void on_run_begin(const RunEvent& e) noexcept override;
  void on_run_end(const RunEvent& e) noexcept override;
  void on_node_begin(const NodeEvent& e) noexcept override;
  void on_node_end(const NodeEvent& e) noexcept override;
  void on_device_span(const DeviceSpanEvent& e) noexcept override;

  // Every event so far, by worker, and every run that ended (call these
  // when no run is in flight).
  std::vector<std::vector<TraceEvent>> events() const;
  std::vector<TraceRun> runs() const;
  std::vector<TraceDeviceSpan> device_spans() const;
  // Writes Chrome trace-event JSON; throws std::runtime_error if the file cannot be written.
  void write_chrome_json(const std::string& path, const std::vector<Domain>& worker_domains) const;

 private:
  friend class detail::TraceFile;
  struct alignas(64) Buffer {
    std::vector<TraceEvent> events;
    std::vector<std::int64_t> open;        // begin times of the nodes running, innermost last
    std::vector<std::int64_t> successors;  // the graph nodes' successors, each event's in a row
    detail::NameArena names;               // the events' names: a graph's go with it, these stay
  };
  std::atomic<bool> active_{false};
  mutable std::mutex runs_mutex_;    // guards the runs (they begin and end on any thread)
  std::vector<TraceRun> runs_;       // ended
  std::vector<TraceRun> open_runs_;  // begun, not ended
  mutable std::mutex device_mutex_;  // device spans come from a thread of their own
  std::vector<TraceDeviceSpan> device_spans_;
  detail::NameArena device_names_;  // their names (guarded by device_mutex_)
  std::int64_t origin_ns_;          // observer_clock() at start()
  std::unique_ptr<Buffer[]> buffers_;
  int workers_;
};

}  // namespace weft

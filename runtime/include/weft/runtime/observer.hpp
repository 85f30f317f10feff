// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Observers: callbacks through which a tool sees an Executor's work as it
// runs (Taskflow's ObserverInterface, Kokkos Tools): node (job) entry and
// exit, run begin and end, allocations from memory pools, and the GPU work
// of GPU graph nodes as it ran on the device (on_device_span).
//
//   struct NodeCounter : weft::Observer {
//     std::atomic<int> nodes{0};
//     void on_node_end(const weft::NodeEvent&) noexcept override { nodes.fetch_add(1); }
//   };
//   auto counter = std::make_shared<NodeCounter>();
//   executor.attach(counter);              // any time, from any thread
//   executor.run(graph).wait().get();
//   executor.detach(counter);
//
// Callbacks run on the thread where the event happens (node events on the
// worker running the node, several workers at once), so they must be
// thread-safe; they must not throw (they are noexcept) and should be short.
// Each observer sees a node's begin before its end, on the same worker, and
// never one without the other. What attach and detach promise while runs
// are in flight, and what an unobserved executor pays, is in
// docs/observers.md.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <weft/runtime/job.hpp>

namespace weft {

// Observer time: steady_clock nanoseconds since its epoch, so events of
// different executors compare.
inline std::int64_t observer_clock() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A graph node's successors: the indices narrow[k] (32-bit graphs) or
// wide[k] (64-bit ones) for k in [0, count); they live as long as its graph's
// work-DAG, so copy what you keep.
struct SuccessorRow {
  const std::int32_t* narrow = nullptr;
  const std::int64_t* wide = nullptr;
  std::int64_t count = 0;
};

// One node of a work-DAG (a graph node), one dynamic task, one task-group
// job, or one helper job of a parallel loop, entered or left.
struct NodeEvent {
  std::int64_t time_ns = 0;  // observer_clock() when it began, or ended
  // The index of the worker running it. worker_count() or more is a thread
  // outside the pool running a task group's job as a guest (task_group.hpp);
  // guests run nothing while observers are attached, so only a job begun
  // as they were attached reports one (a Tracer drops it).
  int worker = -1;
  Domain domain = Domain::Cpu;
  std::int64_t node = -1;     // its index in its graph; -1 for jobs that are not graph nodes
  const char* name = "node";  // never null; valid until this node's on_node_end returns (copy what you keep)
  const void* graph = nullptr;  // which graph (for identity only; see docs/observers.md), or null
  std::int32_t partition = -1;  // the tensor partition it works on, or -1
  std::int32_t device = -1;     // the device that partition lives on, or -1
  std::int64_t run = -1;        // which run of its graph, counted from 0; -1 outside graphs
  std::int32_t level = -1;      // its depth in its graph's levels (Graph::levels), or -1
  SuccessorRow successors;      // graph nodes: the nodes after it in its graph (edges out of it)
};

// One run (one pass over every node) of a work-DAG or graph.
struct RunEvent {
  std::int64_t time_ns = 0;
  const void* graph = nullptr;  // as NodeEvent::graph
  std::int64_t run = -1;        // as NodeEvent::run
  std::int64_t nodes = 0;       // how many nodes the graph has
};

// The GPU work one GPU graph node queued (its kernels and copies), as it ran
// on its stream: timed with CUDA events recorded before and after it, turned
// into observer_clock() time (within a few microseconds; docs/cuda.md).
// Sent once that work is done, from a thread that is not a worker, before
// the node counts as complete, so before its run ends. Only for graph
// nodes, and only while the executor has observers: its GPU nodes then
// record the events.
struct DeviceSpanEvent {
  std::int64_t begin_ns = 0;    // observer_clock() when the stream began the node's work
  std::int64_t end_ns = 0;      // ... and when it had finished it (>= begin_ns)
  std::int32_t device = -1;     // the logical device (cuda_devices.hpp)
  std::int32_t stream = -1;     // on it: -1 the compute stream, k >= 0 copy stream k
  std::int64_t node = -1;       // as NodeEvent
  const char* name = "node";    // never null; valid during the call (copy what you keep)
  const void* graph = nullptr;  // as NodeEvent
  std::int64_t run = -1;        // as NodeEvent when known; -1 for now (docs/observers.md)
};

// A block handed out or taken back by a MemoryPool (memory_pool.hpp).
struct AllocationEvent {
  std::int64_t time_ns = 0;
  int worker = -1;                // the worker that called the pool
  const void* pool = nullptr;     // which MemoryPool
  const char* space = "";         // its memory space: "HostSpace", ...
  const void* pointer = nullptr;  // the block; null when the allocation failed
  std::size_t size = 0;           // the size asked for
};

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_run_begin(const RunEvent&) noexcept {}
  virtual void on_run_end(const RunEvent&) noexcept {}
  virtual void on_node_begin(const NodeEvent&) noexcept {}
  virtual void on_node_end(const NodeEvent&) noexcept {}
  virtual void on_allocate(const AllocationEvent&) noexcept {}
  virtual void on_deallocate(const AllocationEvent&) noexcept {}
  virtual void on_device_span(const DeviceSpanEvent&) noexcept {}
};

// What the layer that built a work-DAG knows of one node, for its events
// (WorkGraphPolicy::set_node_labels).
struct NodeLabel {
  const char* name = nullptr;  // its name, kept alive by that layer as long as the labels; null: unnamed
  const char* kind = "node";   // a string literal; an unnamed node's events say "<kind> <index>"
  std::int32_t partition = -1;
  std::int32_t device = -1;
  std::int32_t level = -1;  // its depth in the graph's levels, or -1
};

// The observers attached to an executor at one moment, as
// WorkerContext::observers() hands them to the layers that report events of
// their own (GPU nodes' device spans). Never changed once published: attach
// and detach publish a new list (see Executor::attach).
class ObserverList {
 public:
  explicit ObserverList(std::vector<std::shared_ptr<Observer>> observers)
      : observers_(std::move(observers)) {}

  const std::vector<std::shared_ptr<Observer>>& observers() const noexcept { return observers_; }
  void run_begin(const RunEvent& e) const noexcept {
    for (const auto& o : observers_) o->on_run_begin(e);
  }
  void run_end(const RunEvent& e) const noexcept {
    for (const auto& o : observers_) o->on_run_end(e);
  }
  void node_begin(const NodeEvent& e) const noexcept {
    for (const auto& o : observers_) o->on_node_begin(e);
  }
  void node_end(const NodeEvent& e) const noexcept {
    for (const auto& o : observers_) o->on_node_end(e);
  }
  void allocate(const AllocationEvent& e) const noexcept {
    for (const auto& o : observers_) o->on_allocate(e);
  }
  void deallocate(const AllocationEvent& e) const noexcept {
    for (const auto& o : observers_) o->on_deallocate(e);
  }
  void device_span(const DeviceSpanEvent& e) const noexcept {
    for (const auto& o : observers_) o->on_device_span(e);
  }

 private:
  std::vector<std::shared_ptr<Observer>> observers_;
};

}  // namespace weft

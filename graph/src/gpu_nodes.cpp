// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GPU nodes in a lowered graph: deferred work-DAG nodes whose calls queue
// work on a CUDA stream, ordered by the stream, events between streams, and
// host callbacks towards host nodes and the end of the pass (gpu_node.hpp).
#include "node_label.hpp"
#include "program.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

#include <weft/runtime/executor.hpp>

namespace weft::detail {

namespace {

// CUDA calls it once the work a GPU node queued is done, or has failed
// (stream_ops::call_when_done). No CUDA call here: the code goes in the message.
void gpu_node_done(void* state, int status) {
  const auto* g = static_cast<const GpuNode*>(state);
  if (status == 0) {
    g->policy->complete_deferred(g->node);
    return;
  }
  g->policy->complete_deferred(
      g->node, std::make_exception_ptr(std::runtime_error(
                   "Graph: the GPU work of node " + g->label + " failed on device " +
                   std::to_string(g->device) + " with CUDA error " + std::to_string(status) +
                   " (cudaGetErrorName says which); the device is unusable until the process restarts")));
}

// The first observed run of a GPU node makes what its device spans need.
DeviceSpan& span_of(GpuNode& g) {
  if (g.span) return *g.span;
  auto span = std::make_unique<DeviceSpan>();
  CudaEventPool& pool = shared_device_streams(g.device).timing_events();
  span->began = pool.acquire();
  try {
    span->ended = pool.acquire();
  } catch (...) {
    pool.release(span->began);
    throw;
  }
  span->event.device = g.device;
  span->event.stream = g.copy_stream;
  span->event.node = g.node;
  span->event.graph = g.graph;
  span->completes = g.callback;
  span->complete = &gpu_node_done;
  span->node = &g;
  span->callback = {&post_device_span, span.get()};
  start_device_timeline();
  g.span = std::move(span);
  return *g.span;
}

// A GPU node's call in an observed run (device_timeline.hpp): the work
// between two timing events, then the callback that delivers its span, and
// only then the event later GPU nodes on other streams wait on, so that
// their spans, and the completions that may end the run, come after this
// one. The span completes the node, or the call does if it came first.
void run_observed(GpuNode& g, std::shared_ptr<const ObserverList> observers) {
  DeviceSpan& span = span_of(g);
  span.observers = std::move(observers);
  span.event.name = g.trace_name.c_str();  // the span arrives after the call: not the worker's copy
  span.call.store(DeviceSpan::kCalling, std::memory_order_relaxed);  // the last span was delivered
  stream_ops::record(span.began, g.stream, g.device);
  g.work(GpuStream{g.device, g.stream});
  stream_ops::record(span.ended, g.stream, g.device);
  stream_ops::call_when_done(g.stream, &span.callback, g.device);
  try {
    if (g.record) stream_ops::record(g.done, g.stream, g.device);
  } catch (...) {
    call_returned(span, true);
    throw;
  }
  call_returned(span, false);
}

// A GPU node's call: order the stream after GPU predecessors on other
// devices, queue the work, record the event later GPU nodes wait on, and ask
// for the callback that completes the node. Queuing the callback comes last:
// if anything before it throws, the node completes at once with the error.
void run_node(void* state) {
  auto* g = static_cast<GpuNode*>(state);
  stream_ops::use_device(g->device);
  for (CudaEvent e : g->waits) stream_ops::wait(g->stream, e, g->device);
  // The list attached now (a GPU node runs on a worker of its run's executor).
  const WorkerContext* worker = Executor::current_worker();
  if (std::shared_ptr<const ObserverList> observers =
          worker != nullptr ? worker->share_observers() : nullptr) {
    run_observed(*g, std::move(observers));
    return;
  }
  g->work(GpuStream{g->device, g->stream});
  if (g->record) stream_ops::record(g->done, g->stream, g->device);
  if (g->callback) stream_ops::call_when_done(g->stream, &g->done_callback, g->device);
}

bool is_gpu_node(const NodeRecord& node) { return node.aux >= 0 && node.kind != NodeKind::Subgraph; }

}  // namespace

GpuNodes::~GpuNodes() {
  for (GpuNode& g : nodes_) {
    // The pools outlive every program (shared_device_streams is never destroyed).
    if (g.done != nullptr) shared_device_streams(g.device).events().release(g.done);
    if (g.span) {
      CudaEventPool& timing = shared_device_streams(g.device).timing_events();
      timing.release(g.span->began);
      timing.release(g.span->ended);
    }
  }
}

std::vector<int> GpuNodes::prepare(const Graph& graph, const std::vector<StreamWork>& works,
                                   const std::vector<NodeRecord>& nodes,
                                   const std::vector<Graph::Edge>& edges, Crs<int>& successors,
                                   std::vector<WorkGraphNodeCall>& calls) {
  const std::size_t n = nodes.size();
  if (std::none_of(nodes.begin(), nodes.end(), is_gpu_node)) return {};
  std::vector<int> index(n, -1);  // into nodes_
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (is_gpu_node(nodes[i])) index[i] = static_cast<int>(count++);
  // A GPU node after one on the same stream is ordered by the stream, one
  // on another stream or device by an event, so both may be queued as soon
  // as its call returned: they go first in the row, and the engine releases
  // them early.
  std::vector<int> early(n, -1);
  nodes_.resize(count);
  for (std::size_t i = 0; i < n; ++i) {
    if (index[i] < 0) continue;
    const auto first = successors.entries.begin() + successors.row_map[i];
    const auto last = successors.entries.begin() + successors.row_map[i + 1];
    const auto middle =
        std::stable_partition(first, last, [&](int s) { return index[static_cast<std::size_t>(s)] >= 0; });
    early[i] = static_cast<int>(middle - first);
    GpuNode& g = nodes_[static_cast<std::size_t>(index[i])];
    const NodeRecord& node = nodes[i];
    g.node = static_cast<int>(i);
    g.label = node_label(graph, static_cast<Graph::NodeId>(i));
    // Its own name, else its kind and id, as the work-DAG names it.
    g.trace_name = graph.node(static_cast<Graph::NodeId>(i)).name;
    if (g.trace_name.empty()) {
      const bool block_kernel = node.kind == NodeKind::Compute && node.split >= 0;
      g.trace_name = std::string(block_kernel ? "split" : to_string(node.kind)) + " " + std::to_string(i);
    }
    g.graph = &graph;
    g.done_callback = {&gpu_node_done, &g};
    g.device = node.device;
    g.copy_stream = node.copy_stream;
    g.work = works[static_cast<std::size_t>(node.aux)];
    g.callback = middle != last || first == last;  // host successors, or a sink
    for (auto it = first; it != middle; ++it) {
      const NodeRecord& next = nodes[static_cast<std::size_t>(*it)];
      g.record = g.record || next.device != node.device || next.copy_stream != node.copy_stream;
    }
    calls[i] = WorkGraphNodeCall::of(&run_node, &g);
  }
  for (const Graph::Edge& e : edges) {
    const int from = index[static_cast<std::size_t>(e.first)], to = index[static_cast<std::size_t>(e.second)];
    if (from < 0 || to < 0) continue;
    const GpuNode& a = nodes_[static_cast<std::size_t>(from)];
    const GpuNode& b = nodes_[static_cast<std::size_t>(to)];
    if (a.device != b.device || a.copy_stream != b.copy_stream)
      nodes_[static_cast<std::size_t>(to)].wait_for.push_back(from);
  }
  return early;
}

void GpuNodes::attach(const WorkGraphPolicy<int>& policy) noexcept {
  for (GpuNode& g : nodes_) g.policy = &policy;
}

void GpuNodes::bind() {
  if (bound_) return;
  for (GpuNode& g : nodes_) {
    try {
      DeviceStreams& streams = shared_device_streams(g.device);
      g.stream = g.copy_stream < 0 ? streams.compute_stream() : streams.copy_stream(g.copy_stream);
      if (g.record && g.done == nullptr) g.done = streams.events().acquire();
    } catch (const std::exception& error) {
      throw std::runtime_error("Graph: GPU node " + std::to_string(g.node) + " cannot run on device " +
                               std::to_string(g.device) + ": " + error.what());
    }
  }
  for (GpuNode& g : nodes_) {
    g.waits.clear();
    for (int from : g.wait_for) g.waits.push_back(nodes_[static_cast<std::size_t>(from)].done);
  }
  bound_ = true;
}

void GpuNodes::synchronize() noexcept {
  bool observed = false;
  for (const GpuNode& g : nodes_) {
    observed = observed || g.span != nullptr;
    try {
      if (g.stream != nullptr) stream_ops::synchronize(g.stream, g.device);
    } catch (const std::exception&) {
      // A faulted device reports its error here again; the pass's own error
      // is the one the run's future carries.
    }
  }
  // The spans of work whose successors the failure skipped: delivered
  // before the run ends, as in a pass that went well.
  if (observed) drain_device_timeline();
}

}  // namespace weft::detail

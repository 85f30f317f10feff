// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Device spans of GPU nodes (observer.hpp's on_device_span): a GPU node of
// an observed run records a timing event before and after its stream work
// and queues a CUDA callback after them. CUDA callbacks may not call CUDA,
// and turning events into host time does, so the callback hands the span to
// one timeline thread, which converts it, tells the observers, and then
// completes the node (when the node completes through a callback at all).
// The thread takes spans in the order the callbacks posted them, so a span
// is delivered before the completion of any node ordered after it on the
// GPU, and so before its run ends. Internal to graph/.
#pragma once

#include <atomic>
#include <memory>

#include <weft/backends/cuda_streams.hpp>
#include <weft/runtime/observer.hpp>

namespace weft::detail {

struct DeviceSpan {
  CudaEvent began = nullptr;  // timing events, for the node's lifetime
  CudaEvent ended = nullptr;
  std::shared_ptr<const ObserverList> observers;  // the list its call read, until delivered
  DeviceSpanEvent event;                          // all but the times, set once
  bool completes = false;                         // the node completes once its span is delivered
  void (*complete)(void* node, int status) = nullptr;
  void* node = nullptr;
  stream_ops::HostCallback callback{};  // -> post_device_span(this, status)
  // Between the call that queued the span and the thread that delivers it
  // (see call_returned): kCalling, then kReturned or kThrew from the call,
  // or kArrived from the thread when the span came first.
  static constexpr int kCalling = 0, kReturned = 1, kThrew = 2, kArrived = 3;
  std::atomic<int> call{kCalling};
  int status = 0;              // the stream's status (0: the work went well)
  DeviceSpan* next = nullptr;  // in the thread's queue
};

// Starts the timeline thread (once per process; it is never stopped).
void start_device_timeline();
// The CUDA callback of a DeviceSpan: queues it for the thread. No CUDA call.
void post_device_span(void* span, int status);
// The node's call returned (threw: the call failed after it queued the
// span): completes the node itself if its span was delivered meanwhile.
void call_returned(DeviceSpan& span, bool threw) noexcept;
// Waits until every span posted so far was delivered (not on the timeline
// thread itself, where it returns at once).
void drain_device_timeline() noexcept;

}  // namespace weft::detail

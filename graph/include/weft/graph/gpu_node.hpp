// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GPU nodes: graph nodes that queue work on a CUDA device's stream (Ripple's
// GPU execution kind, with the CUDA backend).
//
//   __global__ void scale(float* x, int n, float a);   // in a .cu file
//   weft::Graph g;
//   g.emplace(weft::on_gpu(0, [](weft::GpuStream s, float* x, int n) {
//              scale<<<(n + 255) / 256, 256, 0, s.stream>>>(x, n, 2.0f);
//            }, d_x, n)).named("scale");
//   g.then([&] { /* host code: sees what the kernel wrote */ });
//
// The callable runs on a GPU-priority worker with its device current, queues
// its work on s.stream (kernels, weft::cuda::parallel_for, cudaMemcpyAsync)
// and returns without waiting for it. The node is complete when that work is
// done, and the graph keeps the order of the edges without blocking a worker:
//   - a GPU node after it on the same stream is queued at once: stream
//     order does the rest;
//   - a GPU node after it on another stream (on_gpu_copy's copy streams, or
//     another device) is queued at once too, behind a cudaStreamWaitEvent
//     on an event this node records;
//   - a host node after it, sync(), and the end of the run wait until the
//     work is done: a CUDA host callback releases them.
// GPU nodes use the streams of shared_device_streams(device): on_gpu the
// compute stream, on_gpu_copy(device, k, ...) copy stream k. Work queued
// there outside the graph is ordered with them too. The streams and events are made when the graph is
// first run, never while it runs.
#pragma once

#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include <weft/backends/cuda_streams.hpp>

namespace weft {

// A callable with its arguments that is called with a GpuStream first
// (where it queues its work; cuda_streams.hpp) (the
// GPU counterpart of NodeWork).
class StreamWork {
 public:
  StreamWork() = default;

  template <class F, class... Args>
  static StreamWork make(F&& f, Args&&... args) {
    using State = std::tuple<std::decay_t<F>, std::decay_t<Args>...>;
    static_assert(std::is_invocable_v<std::decay_t<F>&, GpuStream, std::decay_t<Args>&...>,
                  "a GPU node's callable takes a weft::GpuStream, then the arguments given to on_gpu");
    StreamWork w;
    w.state_ = std::make_shared<State>(std::forward<F>(f), std::forward<Args>(args)...);
    w.call_ = [](void* s, GpuStream stream) {
      std::apply([stream](auto& fn, auto&... a) { fn(stream, a...); }, *static_cast<State*>(s));
    };
    return w;
  }

  explicit operator bool() const noexcept { return call_ != nullptr; }
  void operator()(GpuStream stream) const { call_(state_.get(), stream); }

 private:
  void (*call_)(void*, GpuStream) = nullptr;
  std::shared_ptr<void> state_;
};

}  // namespace weft

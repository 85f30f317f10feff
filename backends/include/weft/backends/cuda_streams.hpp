// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA queues of one device: a compute stream, copy streams, and a pool
// of reusable events, all created once and destroyed with the DeviceStreams.
//
//   weft::DeviceStreams gpu(0);                      // device 0: 1 compute + 2 copy streams
//   cudaMemcpyAsync(halo_dst, halo_src, bytes, cudaMemcpyDeviceToDevice, gpu.copy_stream(0));
//   weft::CudaEvent copied = gpu.events().acquire();
//   cudaEventRecord(copied, gpu.copy_stream(0));
//   cudaStreamWaitEvent(gpu.compute_stream(), copied);   // the kernel waits for the copy
//   stencil<<<grid, block, 0, gpu.compute_stream()>>>(...);
//   ...
//   gpu.events().release(copied);                    // once nothing records or waits on it
//
// Streams are non-blocking (they do not synchronise with the legacy default
// stream), so copies on the copy streams overlap kernels on the compute stream
// (Ripple section 6.2). Events are created with timing disabled, the cheapest
// kind for ordering work; timing_events() hands out events that can be
// timed, which stream_ops::event_time_ns turns into host time.
//
// This header needs no CUDA header: CudaStream and CudaEvent are the very
// types cudaStream_t and cudaEvent_t, so host-only code can hold them and .cu
// code passes them to the CUDA runtime unchanged. In a build without the CUDA
// backend, or on a machine without a GPU, creating a DeviceStreams (or an
// event) throws std::runtime_error saying why.
//
// A DeviceStreams is neither copyable nor movable (its event pool owns a
// mutex); keep one per device in a std::deque (emplace_back) or behind a
// std::unique_ptr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <weft/backends/event_pool.hpp>

// Declared as the CUDA runtime declares them (driver_types.h), so the
// aliases below are cudaStream_t and cudaEvent_t exactly.
struct CUstream_st;
struct CUevent_st;

namespace weft {

using CudaStream = CUstream_st*;
using CudaEvent = CUevent_st*;

// A stream with the device it belongs to: where a GPU graph node queues its
// work, and what asynchronous copies take. `stream` is a cudaStream_t.
struct GpuStream {
  int device;
  CudaStream stream;
};

// The EventPool backend for one CUDA device.
class CudaEventBackend {
 public:
  using Event = CudaEvent;

  // timing: events that record a timestamp (for stream_ops::event_time_ns),
  // a little dearer to record than the default, which only orders work.
  explicit CudaEventBackend(int device = 0, bool timing = false) noexcept
      : device_(device), timing_(timing) {}

  // cudaEventCreateWithFlags(cudaEventDisableTiming, or cudaEventDefault
  // when timing) with `device` current (the caller's current device is
  // restored). Throws std::runtime_error.
  CudaEvent create_event();
  // Failures are ignored: they only happen while the process tears CUDA down.
  void destroy_event(CudaEvent event) noexcept;

  int device() const noexcept { return device_; }
  bool timing() const noexcept { return timing_; }

 private:
  int device_;
  bool timing_;
};

using CudaEventPool = EventPool<CudaEventBackend>;

class DeviceStreams {
 public:
  static constexpr int kDefaultCopyStreams = 2;

  // Creates the streams on `device` (made current for the creation, then the
  // caller's device is restored). Throws std::invalid_argument for a negative
  // device or copy stream count, std::runtime_error when the device cannot be
  // used (the message names the CUDA call, the device and the CUDA error).
  explicit DeviceStreams(int device, int copy_streams = kDefaultCopyStreams,
                         std::size_t events_per_chunk = CudaEventPool::kDefaultEventsPerChunk);
  // Does not wait: CUDA frees a stream once the work queued on it is done.
  ~DeviceStreams();

  DeviceStreams(const DeviceStreams&) = delete;
  DeviceStreams& operator=(const DeviceStreams&) = delete;

  int device() const noexcept { return device_; }
  CudaStream compute_stream() const noexcept { return streams_.front(); }
  int copy_stream_count() const noexcept { return static_cast<int>(streams_.size()) - 1; }

  CudaStream copy_stream(int index) const {
    if (index < 0 || index >= copy_stream_count()) {
      throw std::out_of_range("DeviceStreams: copy stream " + std::to_string(index) +
                              " out of range (device " + std::to_string(device_) + " has " +
                              std::to_string(copy_stream_count()) + " copy streams)");
    }
    return streams_[static_cast<std::size_t>(index) + 1];
  }

  // Events for this device; thread-safe.
  CudaEventPool& events() noexcept { return events_; }
  const CudaEventPool& events() const noexcept { return events_; }
  // Events that record when the stream reached them (stream_ops::event_time_ns).
  CudaEventPool& timing_events() noexcept { return timing_events_; }

 private:
  static int checked_device(int device, int copy_streams) {
    if (device < 0) {
      throw std::invalid_argument("DeviceStreams: device " + std::to_string(device) +
                                  " (expected a CUDA device ordinal >= 0)");
    }
    if (copy_streams < 0) {
      throw std::invalid_argument("DeviceStreams: " + std::to_string(copy_streams) +
                                  " copy streams for device " + std::to_string(device) + " (expected >= 0)");
    }
    return device;
  }

  void destroy_streams() noexcept;

  int device_;
  std::vector<CudaStream> streams_;  // [0] compute, then the copy streams
  CudaEventPool events_;
  CudaEventPool timing_events_;
};

// The process's one DeviceStreams for `device`, made on first use and kept
// until the process ends: GPU graph nodes queue on its compute stream, and
// code outside a graph may too. Thread-safe; throws as the constructor does.
DeviceStreams& shared_device_streams(int device);

// The few stream operations a GPU graph node needs, for code that holds
// CudaStream and CudaEvent without CUDA's headers (graph/). Each throws
// std::runtime_error naming the call, the device and CUDA's error; without
// the CUDA backend each throws saying so.
namespace stream_ops {

// Makes `device` the calling thread's current device (kernels launch there).
void use_device(int device);
// Records `event` on `stream` (both of `device`).
void record(CudaEvent event, CudaStream stream, int device);
// Makes later work on `stream` (of `device`) wait for the last record of
// `event`, which may belong to another device.
void wait(CudaStream stream, CudaEvent event, int device);
// Queues a copy of `bytes` bytes on `stream` (of `device`); either side may
// be host memory (pinned for the copy to stay asynchronous) or memory of any
// device (unified addressing finds out which).
void copy(void* dst, const void* src, std::size_t bytes, CudaStream stream, int device);
// Queues one copy of `rows` rows of `width` bytes each: row r starts at
// dst + r * dst_pitch and src + r * src_pitch (pitches >= width, in bytes).
// One cudaMemcpy2DAsync instead of `rows` copies: a tensor's padding along
// any axis but the innermost is many short rows.
void copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
             std::size_t rows, CudaStream stream, int device);
// Queues zeroing `bytes` bytes of device memory on `stream`.
void fill_zero(void* dst, std::size_t bytes, CudaStream stream, int device);
// Lets `device` read and write `peer`'s memory directly, if the hardware
// can (cudaDeviceCanAccessPeer); once per pair in the process. Returns
// whether direct access is on. Copies between the two work either way:
// without it the driver stages them through host memory.
bool enable_peer_access(int device, int peer);
// Waits until the work queued on `stream` is done.
void synchronize(CudaStream stream, int device);
// What call_when_done calls: fn(data, status), status 0 when the work went
// well, else the CUDA error code (cudaError_t) of a fault on the stream.
struct HostCallback {
  void (*fn)(void* data, int status);
  void* data;
};
// Queues `callback` on `stream`: called on a CUDA thread once the work queued
// before it is done, or has failed. It must not call CUDA, and must stay
// alive until it has been called.
void call_when_done(CudaStream stream, const HostCallback* callback, int device);
// When `event` (from DeviceStreams::timing_events() of `device`, recorded,
// and complete) happened, in host time: steady_clock nanoseconds since its
// epoch (observer_clock()). The device's clock is tied to the host's by a
// reference event recorded on a stream of its own and waited for (again
// each second, against drift); see docs/cuda.md for the precision. Not from
// a CUDA callback (it calls CUDA); thread-safe.
std::int64_t event_time_ns(CudaEvent event, int device);

}  // namespace stream_ops

}  // namespace weft

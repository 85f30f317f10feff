// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DeviceStreams and CUDA events with the CUDA backend compiled in.
#include <weft/backends/cuda_streams.hpp>

#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuda_device_map.hpp"

namespace weft {
namespace {

[[noreturn]] void fail(const char* who, const char* call, int device, cudaError_t status) {
  (void)cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  throw std::runtime_error(std::string(who) + ": " + call + " failed for " + detail::device_words(device) +
                           ": " + cudaGetErrorString(status) + " (" + cudaGetErrorName(status) + ")");
}

// Says plainly when there is no usable GPU or no such device, rather than
// letting a later call fail with a less telling error.
void require_device(const char* who, int device) {
  const detail::CudaDeviceCount count = detail::cuda_device_count();
  if (count.status != cudaSuccess) {
    throw std::runtime_error(std::string(who) + ": cannot use CUDA device " + std::to_string(device) +
                             ": cudaGetDeviceCount failed: " + cudaGetErrorString(count.status) + " (" +
                             cudaGetErrorName(count.status) + ")");
  }
  if (device >= count.visible) {
    throw std::runtime_error(std::string(who) + ": CUDA device " + std::to_string(device) +
                             " does not exist (" + detail::describe(count) + ")");
  }
}

// Makes `device` current while alive and gives the thread its previous
// device back: streams and events belong to the device current when they
// are made, and the caller's choice of device must survive. `previous_` is
// CUDA's own ordinal (from cudaGetDevice), so it goes back unmapped.
class DeviceSwitch {
 public:
  DeviceSwitch(const char* who, int device) {
    cudaError_t status = cudaGetDevice(&previous_);
    if (status != cudaSuccess) fail(who, "cudaGetDevice", device, status);
    if (previous_ != detail::cuda_ordinal(device)) {
      status = detail::set_cuda_device(device);
      if (status != cudaSuccess) fail(who, "cudaSetDevice", device, status);
      switched_ = true;
    }
  }
  ~DeviceSwitch() {
    // Setting back a device that was current a moment ago cannot fail short
    // of CUDA shutting down, and a destructor cannot report it anyway.
    if (switched_) (void)cudaSetDevice(previous_);
  }
  DeviceSwitch(const DeviceSwitch&) = delete;
  DeviceSwitch& operator=(const DeviceSwitch&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

// The same for destructors: best effort, never throws. Destruction happens
// with the owning device current, as creation did, in case the thread has
// moved on to another device since.
class QuietDeviceSwitch {
 public:
  explicit QuietDeviceSwitch(int device) noexcept {
    switched_ = cudaGetDevice(&previous_) == cudaSuccess && previous_ != detail::cuda_ordinal(device) &&
                detail::set_cuda_device(device) == cudaSuccess;
  }
  ~QuietDeviceSwitch() {
    if (switched_) (void)cudaSetDevice(previous_);
  }
  QuietDeviceSwitch(const QuietDeviceSwitch&) = delete;
  QuietDeviceSwitch& operator=(const QuietDeviceSwitch&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

}  // namespace

CudaEvent CudaEventBackend::create_event() {
  constexpr const char* who = "CudaEventBackend";
  require_device(who, device_);
  DeviceSwitch on_device(who, device_);
  cudaEvent_t event = nullptr;
  const cudaError_t status =
      cudaEventCreateWithFlags(&event, timing_ ? cudaEventDefault : cudaEventDisableTiming);
  if (status != cudaSuccess) {
    fail(who,
         timing_ ? "cudaEventCreateWithFlags(cudaEventDefault)"
                 : "cudaEventCreateWithFlags(cudaEventDisableTiming)",
         device_, status);
  }
  return event;
}

void CudaEventBackend::destroy_event(CudaEvent event) noexcept {
  if (event == nullptr) return;
  QuietDeviceSwitch on_device(device_);
  // Fails only for an invalid handle or during CUDA's own teardown; the
  // event is gone either way and there is nobody to tell.
  (void)cudaEventDestroy(event);
}

DeviceStreams::DeviceStreams(int device, int copy_streams, std::size_t events_per_chunk)
    : device_(checked_device(device, copy_streams)),
      events_(CudaEventBackend(device), events_per_chunk),
      timing_events_(CudaEventBackend(device, true), events_per_chunk) {
  constexpr const char* who = "DeviceStreams";
  require_device(who, device_);
  DeviceSwitch on_device(who, device_);
  streams_.reserve(static_cast<std::size_t>(copy_streams) + 1);
  try {
    for (int i = 0; i <= copy_streams; ++i) {
      cudaStream_t stream = nullptr;
      const cudaError_t status = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
      if (status != cudaSuccess)
        fail(who, "cudaStreamCreateWithFlags(cudaStreamNonBlocking)", device_, status);
      streams_.push_back(stream);  // cannot throw: reserved above
    }
  } catch (...) {
    destroy_streams();  // the destructor does not run for a half-built object
    throw;
  }
}

DeviceStreams::~DeviceStreams() { destroy_streams(); }

namespace stream_ops {

void use_device(int device) {
  // cudaSetDevice to the current device costs a thread-local check, so a
  // GPU worker simply sets it before each node.
  const cudaError_t status = detail::set_cuda_device(device);
  if (status != cudaSuccess) fail("stream_ops::use_device", "cudaSetDevice", device, status);
}

void record(CudaEvent event, CudaStream stream, int device) {
  const cudaError_t status = cudaEventRecord(event, stream);
  if (status != cudaSuccess) fail("stream_ops::record", "cudaEventRecord", device, status);
}

void wait(CudaStream stream, CudaEvent event, int device) {
  const cudaError_t status = cudaStreamWaitEvent(stream, event, 0);
  if (status != cudaSuccess) fail("stream_ops::wait", "cudaStreamWaitEvent", device, status);
}

void copy(void* dst, const void* src, std::size_t bytes, CudaStream stream, int device) {
  const cudaError_t status = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream);
  if (status != cudaSuccess) fail("stream_ops::copy", "cudaMemcpyAsync", device, status);
}

void copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
             std::size_t rows, CudaStream stream, int device) {
  const cudaError_t status =
      cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows, cudaMemcpyDefault, stream);
  if (status != cudaSuccess) fail("stream_ops::copy_2d", "cudaMemcpy2DAsync", device, status);
}

void fill_zero(void* dst, std::size_t bytes, CudaStream stream, int device) {
  const cudaError_t status = cudaMemsetAsync(dst, 0, bytes, stream);
  if (status != cudaSuccess) fail("stream_ops::fill_zero", "cudaMemsetAsync", device, status);
}

bool enable_peer_access(int device, int peer) {
  // Two logical devices on one GPU share its memory: nothing to enable.
  const int gpu = detail::cuda_ordinal(device), peer_gpu = detail::cuda_ordinal(peer);
  if (gpu == peer_gpu) return true;
  int can = 0;
  cudaError_t status = cudaDeviceCanAccessPeer(&can, gpu, peer_gpu);
  if (status != cudaSuccess)
    fail("stream_ops::enable_peer_access", "cudaDeviceCanAccessPeer", device, status);
  if (can == 0) return false;
  DeviceSwitch on_device("stream_ops::enable_peer_access", device);
  status = cudaDeviceEnablePeerAccess(peer_gpu, 0);
  if (status == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();  // not an error here: someone enabled it before
    return true;
  }
  if (status != cudaSuccess)
    fail("stream_ops::enable_peer_access", "cudaDeviceEnablePeerAccess", device, status);
  return true;
}

void synchronize(CudaStream stream, int device) {
  const cudaError_t status = cudaStreamSynchronize(stream);
  if (status != cudaSuccess) fail("stream_ops::synchronize", "cudaStreamSynchronize", device, status);
}

void call_when_done(CudaStream stream, const HostCallback* callback, int device) {
  // cudaStreamAddCallback rather than cudaLaunchHostFunc: it is called with
  // the stream's error after a device fault, so a failed kernel fails the
  // node instead of leaving it waiting for ever.
  const auto trampoline = [](cudaStream_t, cudaError_t status, void* data) {
    const auto* c = static_cast<const HostCallback*>(data);
    c->fn(c->data, static_cast<int>(status));
  };
  const cudaError_t status =
      cudaStreamAddCallback(stream, trampoline, const_cast<HostCallback*>(callback), 0);
  if (status != cudaSuccess) fail("stream_ops::call_when_done", "cudaStreamAddCallback", device, status);
}

namespace {

std::int64_t host_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// What ties one device's event clock to the host's: a timing event recorded
// on an idle stream of its own, and the host time it happened at.
struct DeviceClock {
  cudaStream_t stream = nullptr;
  cudaEvent_t reference = nullptr;
  cudaEvent_t scratch = nullptr;  // the try under way
  std::int64_t reference_ns = 0;  // host time of `reference`
  std::int64_t made_ns = 0;       // host time of the calibration (0: never)
};

// Records an event a few times and keeps the try whose host window (before
// the record to after its wait) was narrowest, placing the event in its
// middle: the error is at most half that window (a few microseconds).
void calibrate(DeviceClock& clock, int device) {
  constexpr const char* who = "stream_ops::event_time_ns";
  require_device(who, device);
  DeviceSwitch on_device(who, device);
  cudaError_t status = cudaSuccess;
  if (clock.stream == nullptr) {
    status = cudaStreamCreateWithFlags(&clock.stream, cudaStreamNonBlocking);
    if (status != cudaSuccess) fail(who, "cudaStreamCreateWithFlags", device, status);
  }
  for (cudaEvent_t* event : {&clock.reference, &clock.scratch}) {
    if (*event != nullptr) continue;
    status = cudaEventCreateWithFlags(event, cudaEventDefault);
    if (status != cudaSuccess) fail(who, "cudaEventCreateWithFlags(cudaEventDefault)", device, status);
  }
  std::int64_t best_window = -1;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const std::int64_t before = host_now_ns();
    status = cudaEventRecord(clock.scratch, clock.stream);
    if (status != cudaSuccess) fail(who, "cudaEventRecord", device, status);
    status = cudaEventSynchronize(clock.scratch);
    if (status != cudaSuccess) fail(who, "cudaEventSynchronize", device, status);
    const std::int64_t after = host_now_ns();
    if (best_window < 0 || after - before < best_window) {
      best_window = after - before;
      clock.reference_ns = before + (after - before) / 2;
      std::swap(clock.reference, clock.scratch);  // kept: never recorded again
    }
  }
  clock.made_ns = host_now_ns();
}

}  // namespace

std::int64_t event_time_ns(CudaEvent event, int device) {
  constexpr const char* who = "stream_ops::event_time_ns";
  constexpr std::int64_t kRecalibrateNs = 1'000'000'000;  // against drift between the clocks
  // Never destroyed (as shared_device_streams): the GPU timeline thread may
  // still convert while the process exits.
  static auto* const mutex = new std::mutex;
  static auto* const clocks = new std::map<int, DeviceClock>;
  std::lock_guard<std::mutex> lock(*mutex);
  DeviceClock& clock = (*clocks)[device];
  if (clock.made_ns == 0 || host_now_ns() - clock.made_ns > kRecalibrateNs) calibrate(clock, device);
  float ms = 0.0F;
  const cudaError_t status = cudaEventElapsedTime(&ms, clock.reference, event);
  if (status != cudaSuccess) fail(who, "cudaEventElapsedTime", device, status);
  return clock.reference_ns + std::llround(static_cast<double>(ms) * 1e6);
}

}  // namespace stream_ops

void DeviceStreams::destroy_streams() noexcept {
  // cudaStreamDestroy returns at once and frees the stream when its queued
  // work is done; it fails only for an invalid handle or during CUDA's own
  // teardown, and there is nobody to tell from here.
  if (streams_.empty()) return;
  QuietDeviceSwitch on_device(device_);
  for (cudaStream_t stream : streams_) (void)cudaStreamDestroy(stream);
  streams_.clear();
}

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DeviceStreams and CUDA events in a build without the CUDA backend: creating
// either throws, so nothing is ever there to destroy.
#include <weft/backends/cuda_streams.hpp>

#include <stdexcept>
#include <string>

namespace weft {
namespace {

[[noreturn]] void no_cuda(const char* who, int device) {
  throw std::runtime_error(
      std::string(who) + ": cannot use CUDA device " + std::to_string(device) +
      ": weft was built without the CUDA backend (WEFT_ENABLE_CUDA=OFF or no nvcc found)");
}

}  // namespace

CudaEvent CudaEventBackend::create_event() { no_cuda("CudaEventBackend", device_); }

void CudaEventBackend::destroy_event(CudaEvent /*event*/) noexcept {}

DeviceStreams::DeviceStreams(int device, int copy_streams, std::size_t events_per_chunk)
    : device_(checked_device(device, copy_streams)),
      events_(CudaEventBackend(device), events_per_chunk),
      timing_events_(CudaEventBackend(device, true), events_per_chunk) {
  no_cuda("DeviceStreams", device_);
}

DeviceStreams::~DeviceStreams() { destroy_streams(); }

void DeviceStreams::destroy_streams() noexcept { streams_.clear(); }

namespace stream_ops {
void use_device(int device) { no_cuda("stream_ops::use_device", device); }
void record(CudaEvent, CudaStream, int device) { no_cuda("stream_ops::record", device); }
void wait(CudaStream, CudaEvent, int device) { no_cuda("stream_ops::wait", device); }
void copy(void*, const void*, std::size_t, CudaStream, int device) { no_cuda("stream_ops::copy", device); }
void copy_2d(void*, std::size_t, const void*, std::size_t, std::size_t, std::size_t, CudaStream, int device) {
  no_cuda("stream_ops::copy_2d", device);
}
void fill_zero(void*, std::size_t, CudaStream, int device) { no_cuda("stream_ops::fill_zero", device); }
bool enable_peer_access(int device, int /*peer*/) { no_cuda("stream_ops::enable_peer_access", device); }
void synchronize(CudaStream, int device) { no_cuda("stream_ops::synchronize", device); }
void call_when_done(CudaStream, const HostCallback*, int device) {
  no_cuda("stream_ops::call_when_done", device);
}
std::int64_t event_time_ns(CudaEvent, int device) { no_cuda("stream_ops::event_time_ns", device); }
}  // namespace stream_ops

}  // namespace weft

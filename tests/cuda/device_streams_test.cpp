// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DeviceStreams and CUDA events where no GPU can be used: a build without the
// CUDA backend, or a machine without a GPU or driver, gets an error that says
// which and names the device, never a crash. On a machine with a GPU the
// same cases check that a device that does not exist is refused.
#include <weft/backends/cuda_devices.hpp>
#include <weft/backends/cuda_streams.hpp>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "../test_support.hpp"

namespace {

// The message of the std::runtime_error that `f` throws ("" if none).
template <class F>
std::string runtime_error_message(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("DeviceStreams.says_why_there_are_no_streams_without_a_gpu") {
  const weft::CudaDiscovery found = weft::discover_cuda_devices();
  if (!found.devices.empty()) {
    MESSAGE("a GPU is present: the device suite (test_cuda_device) checks DeviceStreams on it");
    const weft::DeviceStreams streams(0);
    CHECK(streams.copy_stream_count() == weft::DeviceStreams::kDefaultCopyStreams);
    return;
  }
  const std::string message = runtime_error_message([] { weft::DeviceStreams streams(0); });
  MESSAGE("DeviceStreams(0) without a GPU: " << message);
  CHECK(contains(message, "DeviceStreams: "));
  CHECK(contains(message, "device 0"));
  if (weft::cuda_backend_compiled()) {
    CHECK(contains(message, "cudaGetDeviceCount"));  // the call that found no usable device
  } else {
    CHECK(contains(message, "weft was built without the CUDA backend"));
  }
}

TEST_CASE("DeviceStreams.refuses_a_device_that_does_not_exist") {
  const int present = static_cast<int>(weft::discover_cuda_devices().devices.size());
  const std::string message = runtime_error_message([present] { weft::DeviceStreams streams(present); });
  CHECK(contains(message, "DeviceStreams: "));
  CHECK(contains(message, "device " + std::to_string(present)));
  if (present > 0) {
    CHECK(message == "DeviceStreams: CUDA device " + std::to_string(present) + " does not exist (" +
                         std::to_string(present) + " CUDA devices present)");
  }
}

TEST_CASE("DeviceStreams.rejects_negative_arguments_before_touching_cuda") {
  CHECK(weft::test::invalid_argument_message([] { weft::DeviceStreams streams(-1); }) ==
        "DeviceStreams: device -1 (expected a CUDA device ordinal >= 0)");
  CHECK(weft::test::invalid_argument_message([] { weft::DeviceStreams streams(0, -3); }) ==
        "DeviceStreams: -3 copy streams for device 0 (expected >= 0)");
}

TEST_CASE("CudaEventPool.says_why_it_cannot_create_events_without_a_gpu") {
  if (!weft::discover_cuda_devices().devices.empty()) {
    MESSAGE("a GPU is present: the device suite (test_cuda_device) checks the event pool on it");
    return;
  }
  weft::CudaEventPool pool(weft::CudaEventBackend(0));
  const std::string message = runtime_error_message([&pool] { (void)pool.acquire(); });
  MESSAGE("CudaEventPool::acquire() without a GPU: " << message);
  CHECK(contains(message, "CudaEventBackend: "));
  CHECK(contains(message, "device 0"));
  const weft::EventPoolStatistics stats = pool.statistics();
  CHECK(stats.created == 0);
  CHECK(stats.in_use == 0);
}

TEST_CASE("CudaEventPool.timing_events_say_why_they_cannot_be_made_or_read_without_a_gpu") {
  CHECK(weft::CudaEventBackend(0, true).timing());
  CHECK_FALSE(weft::CudaEventBackend(0).timing());
  if (!weft::discover_cuda_devices().devices.empty()) {
    MESSAGE("a GPU is present: the device suite (test_cuda_device) times events on it");
    return;
  }
  weft::CudaEventPool pool(weft::CudaEventBackend(0, true));
  const std::string made = runtime_error_message([&pool] { (void)pool.acquire(); });
  CHECK(contains(made, "CudaEventBackend: "));
  const std::string read = runtime_error_message([] { (void)weft::stream_ops::event_time_ns(nullptr, 0); });
  MESSAGE("stream_ops::event_time_ns without a GPU: " << read);
  CHECK(contains(read, "stream_ops::event_time_ns"));
  CHECK(contains(read, "device 0"));
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DeviceStreams and the CUDA event pool on a GPU: streams are non-blocking and
// live on their device (whichever device the caller had current), events
// have timing disabled, order a copy before a kernel across streams, and are
// reused without creating more in a steady loop. Logical devices get streams,
// events and memory of their own on the GPU present. Skips, saying so, on a
// machine without a GPU.
#include <weft/backends/cuda_streams.hpp>

#include <weft/views/cuda/parallel_for_cuda.cuh>
#include <weft/views/range_policy.hpp>

#include <doctest/doctest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_test_support.cuh"

namespace {

struct Double {
  int* data;
  WEFT_HOST_DEVICE void operator()(std::int64_t i) const { data[i] *= 2; }
};

}  // namespace

TEST_CASE("cuda.DeviceStreams.streams_live_on_their_device") {
  if (!weft::test::gpu_present()) return;
  int devices = 0;
  REQUIRE(cudaGetDeviceCount(&devices) == cudaSuccess);
  for (int device = 0; device < devices; ++device) {
    REQUIRE(cudaSetDevice(devices - 1 - device) ==
            cudaSuccess);  // another device current, where there is one
    const weft::DeviceStreams streams(device, /*copy_streams=*/3);
    int current = -1;
    REQUIRE(cudaGetDevice(&current) == cudaSuccess);
    CHECK(current == devices - 1 - device);  // the caller's device is given back

    REQUIRE(streams.copy_stream_count() == 3);
    std::vector<cudaStream_t> all{streams.compute_stream()};
    for (int c = 0; c < 3; ++c) all.push_back(streams.copy_stream(c));
    for (cudaStream_t stream : all) {
      int owner = -1;
      REQUIRE(cudaStreamGetDevice(stream, &owner) == cudaSuccess);
      CHECK(owner == device);
      unsigned flags = 0;
      REQUIRE(cudaStreamGetFlags(stream, &flags) == cudaSuccess);
      CHECK(flags == cudaStreamNonBlocking);
    }
    CHECK_THROWS_AS((void)streams.copy_stream(3), std::out_of_range);
  }
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
}

TEST_CASE("cuda.CudaEventPool.events_are_made_on_their_device_without_timing") {
  if (!weft::test::gpu_present()) return;
  int devices = 0;
  REQUIRE(cudaGetDeviceCount(&devices) == cudaSuccess);
  const int device = devices - 1;
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  weft::DeviceStreams streams(device);
  const weft::CudaEvent first = streams.events().acquire();
  const weft::CudaEvent second = streams.events().acquire();
  int current = -1;
  REQUIRE(cudaGetDevice(&current) == cudaSuccess);
  CHECK(current == 0);
  // Recording needs the event and the stream on one device.
  REQUIRE(cudaEventRecord(first, streams.compute_stream()) == cudaSuccess);
  REQUIRE(cudaEventRecord(second, streams.compute_stream()) == cudaSuccess);
  REQUIRE(cudaEventSynchronize(second) == cudaSuccess);
  float milliseconds = 0;
  CHECK(cudaEventElapsedTime(&milliseconds, first, second) ==
        cudaErrorInvalidResourceHandle);  // timing disabled
  (void)cudaGetLastError();
  streams.events().release(first);
  streams.events().release(second);
}

TEST_CASE("cuda.CudaEventPool.an_event_orders_a_copy_before_a_kernel") {
  if (!weft::test::gpu_present()) return;
  constexpr int n = 1 << 20;
  std::vector<int> values(n);
  for (int i = 0; i < n; ++i) values[i] = i % 1000;
  const weft::test::DeviceArray<int> source(values);
  weft::test::DeviceArray<int> target(n);
  weft::DeviceStreams gpu(0);

  REQUIRE(cudaMemcpyAsync(target.data(), source.data(), n * sizeof(int), cudaMemcpyDeviceToDevice,
                          gpu.copy_stream(0)) == cudaSuccess);
  const weft::CudaEvent copied = gpu.events().acquire();
  REQUIRE(cudaEventRecord(copied, gpu.copy_stream(0)) == cudaSuccess);
  REQUIRE(cudaStreamWaitEvent(gpu.compute_stream(), copied, 0) == cudaSuccess);
  gpu.events().release(copied);  // the wait is queued: the event may be recorded again
  weft::cuda::parallel_for(gpu.compute_stream(), weft::RangePolicy(0, n), Double{target.data()});
  REQUIRE(cudaStreamSynchronize(gpu.compute_stream()) == cudaSuccess);

  const std::vector<int> got = target.download();
  for (int i = 0; i < n; ++i) REQUIRE(got[i] == 2 * (i % 1000));
}

TEST_CASE("cuda.CudaEventPool.steady_loop_creates_no_events") {
  if (!weft::test::gpu_present()) return;
  weft::DeviceStreams gpu(0);
  auto step = [&gpu] {
    const weft::CudaEvent event = gpu.events().acquire();
    REQUIRE(cudaEventRecord(event, gpu.copy_stream(1)) == cudaSuccess);
    REQUIRE(cudaStreamWaitEvent(gpu.compute_stream(), event, 0) == cudaSuccess);
    gpu.events().release(event);
  };
  step();
  const weft::EventPoolStatistics warm = gpu.events().statistics();
  for (int i = 0; i < 1000; ++i) step();
  REQUIRE(cudaStreamSynchronize(gpu.compute_stream()) == cudaSuccess);
  const weft::EventPoolStatistics after = gpu.events().statistics();
  CHECK(after.created == warm.created);
  CHECK(after.growths == 1);
  CHECK(after.in_use == 0);
}

TEST_CASE("cuda.logical_devices.discovery_streams_and_memory_of_their_own_on_the_gpus_present") {
  if (!weft::test::gpu_present()) return;
  const weft::test::LogicalDevices four(4);
  const weft::CudaDiscovery found = weft::discover_cuda_devices();
  const int gpus = found.physical_devices;
  REQUIRE(gpus > 0);
  REQUIRE(found.devices.size() == 4);
  for (int k = 0; k < 4; ++k) {
    const weft::DeviceInfo& d = found.devices[static_cast<std::size_t>(k)];
    CHECK(d.id == k);
    CHECK(d.physical_id == k % gpus);
    CHECK(d.kind == weft::DeviceKind::Cuda);
    CHECK(d.total_memory > 0);
    CHECK(d.name.find("logical device " + std::to_string(k)) != std::string::npos);
    REQUIRE(d.peer_access.size() == 4);
    for (int j = 0; j < 4; ++j)
      if (j % gpus == k % gpus) CHECK(d.peer_access[static_cast<std::size_t>(j)]);  // one GPU: peers
    // A plain device-to-device copy between devices on one GPU: always on.
    if (k % gpus == 0) CHECK(weft::stream_ops::enable_peer_access(k, 0));
  }

  // Each logical device has its own streams and events, made on its GPU,
  // and the caller's device is given back.
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  std::vector<cudaStream_t> computes;
  for (int k = 0; k < 4; ++k) {
    weft::DeviceStreams& streams = weft::shared_device_streams(k);
    CHECK(streams.device() == k);
    int owner = -1;
    REQUIRE(cudaStreamGetDevice(streams.compute_stream(), &owner) == cudaSuccess);
    CHECK(owner == k % gpus);
    computes.push_back(streams.compute_stream());
    weft::CudaEventPool::Lease event = streams.events().lease();
    REQUIRE(cudaEventRecord(event.get(), streams.compute_stream()) == cudaSuccess);
    REQUIRE(cudaEventSynchronize(event.get()) == cudaSuccess);
    weft::stream_ops::use_device(k);
    int current = -1;
    REQUIRE(cudaGetDevice(&current) == cudaSuccess);
    CHECK(current == k % gpus);
  }
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) CHECK(computes[a] != computes[b]);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);

  // Memory on logical device 3 lives on its GPU.
  const weft::SpaceBuffer<weft::CudaSpace> buffer(weft::CudaSpace(3), 4096);
  cudaPointerAttributes attributes{};
  REQUIRE(cudaPointerGetAttributes(&attributes, buffer.data()) == cudaSuccess);
  CHECK(attributes.device == 3 % gpus);

  // Device 4 does not exist, and the message says why there are 4.
  CHECK_THROWS_WITH_AS(
      weft::DeviceStreams(4),
      doctest::Contains("DeviceStreams: CUDA device 4 does not exist (4 CUDA devices present "
                        "(WEFT_CUDA_LOGICAL_DEVICES=4, on"),
      std::runtime_error);
}

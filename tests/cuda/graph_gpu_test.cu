// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GPU nodes in a graph, on a GPU: kernels and copies queued on streams by
// GPU-priority workers, ordered by stream order, events and host callbacks,
// with host nodes seeing the results and running while the GPU computes;
// GPU nodes on different logical devices of one GPU, ordered by events.
#include <weft/graph/graph.hpp>
#include <weft/views/cuda/parallel_for_cuda.cuh>
#include <weft/views/cuda/parallel_reduce_cuda.cuh>
#include <weft/views/deep_copy.hpp>
#include <weft/views/range_policy.hpp>
#include <weft/views/view.hpp>

#include <doctest/doctest.h>

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gpu_test_support.cuh"

namespace {

// Page-locked host memory: what cudaMemcpyAsync needs to stay asynchronous,
// and what a kernel can write directly (unified addressing).
template <class T>
class PinnedArray {
 public:
  explicit PinnedArray(std::size_t n) : size_(n) {
    weft::cuda::check(cudaHostAlloc(reinterpret_cast<void**>(&data_), n * sizeof(T), cudaHostAllocMapped),
                      "cudaHostAlloc", 0);
  }
  ~PinnedArray() { (void)cudaFreeHost(data_); }
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;
  T* data() const noexcept { return data_; }
  T& operator[](std::size_t i) const noexcept { return data_[i]; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  std::size_t size_;
};

struct Axpy {
  float a;
  const float* x;
  float* y;
  WEFT_HOST_DEVICE void operator()(std::int64_t i) const { y[i] = a * x[i] + y[i]; }
};

struct Scale {
  float factor;
  float* y;
  WEFT_HOST_DEVICE void operator()(std::int64_t i) const { y[i] *= factor; }
};

void check_launch(weft::GpuStream s, const char* what) {
  weft::cuda::check(cudaGetLastError(), what, s.device);
}

__device__ std::uint64_t global_nanoseconds() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Keeps the GPU busy for `nanoseconds`, then raises the flag.
__global__ void spin_then_raise(std::uint64_t nanoseconds, volatile int* flag) {
  const std::uint64_t start = global_nanoseconds();
  while (global_nanoseconds() - start < nanoseconds) {
  }
  *flag = 1;
}

// Keeps the GPU busy for `nanoseconds`, then sets *to = *from * times + add
// (one thread). A kernel that did not wait for the one writing *from would
// read a stale value.
__global__ void spin_then_step(std::uint64_t nanoseconds, volatile int* to, const volatile int* from,
                               int times, int add) {
  const std::uint64_t start = global_nanoseconds();
  while (global_nanoseconds() - start < nanoseconds) {
  }
  *to = *from * times + add;
}

}  // namespace

TEST_CASE("cuda.graph.copies_and_kernels_on_streams_then_a_host_node_sees_the_results") {
  if (!weft::test::gpu_present()) return;
  constexpr std::int64_t n = 1 << 20;
  constexpr float a = 0.5f;
  PinnedArray<float> host_x(n), host_y(n);
  std::vector<float> expected_y(n);
  std::vector<float> x_values(n);
  for (std::int64_t i = 0; i < n; ++i) {
    host_x[i] = x_values[i] = static_cast<float>(i % 1000) * 0.25f;
    expected_y[i] = static_cast<float>(i % 7);
  }
  weft::test::DeviceArray<float> x(n), y(expected_y);
  int mismatches = 0;
  int runs = 0;

  weft::Graph g;
  // Upload on copy stream 0, two kernels on the compute stream (the first
  // waits for the upload's event), download on copy stream 1 (waits for the
  // kernels' event), then the host reads the pinned result.
  g.emplace(weft::on_gpu_copy(0, 0, [&](weft::GpuStream s) {
     weft::cuda::check(
         cudaMemcpyAsync(x.data(), host_x.data(), host_x.bytes(), cudaMemcpyHostToDevice, s.stream),
         "cudaMemcpyAsync", s.device);
   })).named("upload");
  g.then(weft::on_gpu(0, [&](weft::GpuStream s) {
     weft::cuda::parallel_for(s.stream, weft::RangePolicy<std::int64_t>(0, n), Axpy{a, x.data(), y.data()});
   })).named("axpy");
  g.then(weft::on_gpu(0, [&](weft::GpuStream s) {
     weft::cuda::parallel_for(s.stream, weft::RangePolicy<std::int64_t>(0, n), Scale{2.0f, y.data()});
   })).named("scale");
  g.then(weft::on_gpu_copy(0, 1, [&](weft::GpuStream s) {
     weft::cuda::check(
         cudaMemcpyAsync(host_y.data(), y.data(), host_y.bytes(), cudaMemcpyDeviceToHost, s.stream),
         "cudaMemcpyAsync", s.device);
   })).named("download");
  g.then([&] {
     // The same arithmetic on the host, in the same float operations.
     for (std::int64_t i = 0; i < n; ++i) {
       expected_y[i] = (a * x_values[i] + expected_y[i]) * 2.0f;
       mismatches += host_y[i] != expected_y[i];
     }
     // The next run's upload must see this change.
     for (std::int64_t i = 0; i < n; ++i) host_x[i] = x_values[i] = x_values[i] + 1.0f;
     ++runs;
   }).named("check");

  weft::Executor executor;
  executor.run_n(g, 6).wait().get();
  CHECK(runs == 6);
  CHECK(mismatches == 0);
}

TEST_CASE("cuda.graph.a_host_node_runs_while_a_gpu_node_computes") {
  if (!weft::test::gpu_present()) return;
  PinnedArray<int> flag(1);
  flag[0] = 0;
  int seen_beside = -1, seen_after = -1;
  weft::Graph g;
  g.emplace(weft::on_gpu(0, [&](weft::GpuStream s) {
    spin_then_raise<<<1, 1, 0, s.stream>>>(300'000'000ull, flag.data());  // 0.3 s
    check_launch(s, "spin_then_raise");
  }));
  g.emplace([&] { seen_beside = static_cast<volatile int*>(flag.data())[0]; });  // beside it: a root too
  g.then([&] { seen_after = static_cast<volatile int*>(flag.data())[0]; });      // after both
  weft::Executor executor;
  executor.run(g).wait().get();
  CHECK(seen_beside == 0);  // the host node ran while the kernel was still spinning
  CHECK(seen_after == 1);   // the node after it waited for the kernel, not for its launch
}

TEST_CASE("cuda.graph.a_reduction_finishes_into_pinned_memory_for_the_next_host_node") {
  if (!weft::test::gpu_present()) return;
  constexpr std::int64_t n = 3'000'000;
  std::vector<std::int64_t> values(n);
  std::int64_t expected = 0;
  for (std::int64_t i = 0; i < n; ++i) expected += values[i] = (i * 7919) % 1001 - 500;
  weft::test::DeviceArray<std::int64_t> data(values);
  PinnedArray<std::int64_t> sum(1);
  std::vector<std::int64_t> seen;
  weft::Graph g;
  g.emplace(weft::on_gpu(0, [&](weft::GpuStream s) {
    const std::int64_t* d = data.data();
    weft::cuda::parallel_reduce(
        s.stream, weft::RangePolicy<std::int64_t>(0, n),
        [=] WEFT_HOST_DEVICE(std::int64_t i, std::int64_t & partial) { partial += d[i]; }, weft::SumReducer(),
        weft::cuda::PinnedHostSlot<std::int64_t>{sum.data()});
  }));
  g.then([&] { seen.push_back(sum[0]); });
  weft::Executor executor;
  executor.run_n(g, 3).wait().get();
  CHECK(seen == std::vector<std::int64_t>{expected, expected, expected});
}

TEST_CASE("cuda.graph.an_error_while_queuing_reaches_the_future_and_the_graph_runs_again") {
  if (!weft::test::gpu_present()) return;
  bool fail = true;
  int after = 0;
  weft::Graph g;
  g.emplace(weft::on_gpu(0, [&](weft::GpuStream) {
    if (fail) throw std::runtime_error("no room for the kernel's buffers");
  }));
  g.then([&] { ++after; });
  weft::Executor executor;
  CHECK_THROWS_WITH_AS(executor.run(g).wait().get(), "no room for the kernel's buffers", std::runtime_error);
  CHECK(after == 0);
  fail = false;
  executor.run(g).wait().get();
  CHECK(after == 1);
}

TEST_CASE("cuda.graph.a_gpu_node_on_a_missing_device_is_refused_by_name") {
  if (!weft::test::gpu_present()) return;
  weft::Graph g;
  g.emplace(weft::on_gpu(64, [](weft::GpuStream) {}));
  weft::Executor executor;
  CHECK_THROWS_WITH_AS(executor.run(g), doctest::Contains("Graph: GPU node 0 cannot run on device 64: "),
                       std::runtime_error);
}

TEST_CASE("cuda.graph.a_long_chain_of_gpu_nodes_and_host_nodes_keeps_its_order") {
  if (!weft::test::gpu_present()) return;
  // Alternating runs of GPU nodes (some on a copy stream) and host nodes:
  // each GPU node adds its index to a counter on the device, each host node
  // checks the pinned copy of it.
  constexpr int kSegments = 20, kGpuPerSegment = 5;
  weft::test::DeviceArray<long long> counter(std::vector<long long>{0});
  PinnedArray<long long> seen(1);
  long long expected = 0;
  int wrong = 0;
  weft::Graph g;
  for (int segment = 0; segment < kSegments; ++segment) {
    for (int k = 0; k < kGpuPerSegment; ++k) {
      const long long add = segment * kGpuPerSegment + k + 1;
      long long* c = counter.data();
      auto body = [=](weft::GpuStream s) {
        weft::cuda::parallel_for(s.stream, weft::RangePolicy<std::int64_t>(0, 1),
                                 [=] WEFT_HOST_DEVICE(std::int64_t) { *c += add; });
      };
      g.then(k % 2 == 0 ? weft::on_gpu(0, body) : weft::on_gpu_copy(0, k % 2, body));
    }
    g.then(weft::on_gpu_copy(0, 0, [&](weft::GpuStream s) {
      weft::cuda::check(
          cudaMemcpyAsync(seen.data(), counter.data(), sizeof(long long), cudaMemcpyDeviceToHost, s.stream),
          "cudaMemcpyAsync", s.device);
    }));
    g.then([&, segment] {
      for (int k = 0; k < kGpuPerSegment; ++k) expected += segment * kGpuPerSegment + k + 1;
      wrong += seen[0] != expected;
    });
  }
  weft::Executor executor;
  executor.run_n(g, 4).wait().get();
  CHECK(wrong == 0);
  CHECK(expected == 4LL * (kSegments * kGpuPerSegment) * (kSegments * kGpuPerSegment + 1) / 2);
}

TEST_CASE("cuda.graph.views_copied_on_streams_by_gpu_nodes") {
  if (!weft::test::gpu_present()) return;
  constexpr std::int64_t n = 100'000;
  weft::View<float*, weft::LayoutLeft, weft::HostPinnedSpace> host("host", n);
  weft::View<float*, weft::LayoutLeft, weft::CudaSpace> device("device", n);
  for (std::int64_t i = 0; i < n; ++i) host(i) = static_cast<float>(i % 97);
  weft::Graph g;
  g.emplace(weft::on_gpu_copy(0, 0, [=](weft::GpuStream s) { weft::deep_copy(s, device, host); }));
  g.then(weft::on_gpu(0, [=](weft::GpuStream s) {
    weft::cuda::parallel_for(s.stream, weft::RangePolicy<std::int64_t>(0, n), Scale{3.0f, device.data()});
  }));
  g.then(weft::on_gpu_copy(0, 1, [=](weft::GpuStream s) { weft::deep_copy(s, host, device); }));
  weft::Executor executor;
  executor.run_n(g, 2).wait().get();  // two rounds: times 9
  int wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) wrong += host(i) != static_cast<float>(i % 97) * 9.0f;
  CHECK(wrong == 0);
}

TEST_CASE("cuda.logical_devices.gpu_nodes_on_different_devices_keep_their_order") {
  if (!weft::test::gpu_present()) return;
  const weft::test::LogicalDevices four(4);
  const int gpus = weft::discover_cuda_devices().physical_devices;
  REQUIRE(gpus > 0);
  // A chain of 8 kernels over logical devices 0 1 2 3 0 1 2 3, on compute
  // and copy streams in turn (each step waits for an event of another
  // device), then two kernels beside each other on devices 1 and 2 reading
  // the chain's result, then a host node. The values live in mapped pinned
  // memory, which a kernel on any GPU can reach.
  constexpr int kChain = 8, kRuns = 5;
  constexpr std::uint64_t kSpin = 200'000;  // 0.2 ms per kernel
  PinnedArray<int> values(3);
  values[0] = 0;
  int expected = 0;
  for (int i = 0; i < kChain; ++i) expected = expected * 3 + i;
  std::atomic<int> wrong_device{0};
  int wrong = 0, runs = 0;
  const auto step = [&](int device, int to, int from, int times, int add) {
    return [&, device, to, from, times, add](weft::GpuStream s) {
      int current = -1;
      weft::cuda::check(cudaGetDevice(&current), "cudaGetDevice", s.device);
      if (s.device != device || current != device % gpus)
        wrong_device.fetch_add(1, std::memory_order_relaxed);
      spin_then_step<<<1, 1, 0, s.stream>>>(kSpin, values.data() + to, values.data() + from, times, add);
      check_launch(s, "spin_then_step");
    };
  };
  weft::Graph g;
  for (int i = 0; i < kChain; ++i) {
    const int device = i % 4;
    g.then(i % 2 == 0 ? weft::on_gpu(device, step(device, 0, 0, 3, i))
                      : weft::on_gpu_copy(device, 0, step(device, 0, 0, 3, i)));
  }
  g.then(weft::on_gpu(1, step(1, 1, 0, 1, 100)));
  g.emplace(weft::on_gpu_copy(2, 1, step(2, 2, 0, 2, 0)));
  g.then([&] {
    wrong += values[0] != expected || values[1] != expected + 100 || values[2] != 2 * expected;
    values[0] = 0;  // the next run starts again
    ++runs;
  });
  weft::Executor executor;
  executor.run_n(g, kRuns).wait().get();
  CHECK(runs == kRuns);
  CHECK(wrong == 0);
  CHECK(wrong_device.load() == 0);
}

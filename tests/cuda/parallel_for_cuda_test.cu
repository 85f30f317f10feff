// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// weft::cuda::parallel_for: saxpy with the very functor the host backend
// runs, equal to the host's result; offset and negative ranges; a
// WEFT_HOST_DEVICE lambda; MDRange ranks 2 and 3 visiting every index once
// with dimension 0 along threadIdx.x; ranges larger than one grid; empty
// ranges. Each case skips, saying so, on a machine without a GPU.
#include <weft/views/cuda/parallel_for_cuda.cuh>

#include <weft/backends/cuda_streams.hpp>
#include <weft/views/element_array.hpp>
#include <weft/views/element_storage.hpp>
#include <weft/views/parallel_for.hpp>
#include <weft/views/polymorphic_layout.hpp>
#include <weft/views/range_policy.hpp>
#include <weft/views/read_only.hpp>
#include <weft/views/storage_descriptor.hpp>
#include <weft/views/vector.hpp>

#include <doctest/doctest.h>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu_test_support.cuh"

namespace {

using weft::test::DeviceArray;

// One kernel source for both backends.
struct Saxpy {
  float a;
  const float* x;
  float* y;
  WEFT_HOST_DEVICE void operator()(std::int64_t i) const { y[i] = a * x[i] + y[i]; }
};

struct WriteIndex {
  int* out;
  int offset;  // out[i + offset] = i
  WEFT_HOST_DEVICE void operator()(int i) const { out[i + offset] = i; }
};

// For every index of a rank-2 box: how often it was visited, which index the
// call received, and which threadIdx.x made the call.
struct RecordVisit2 {
  std::int64_t begin0, begin1, extent0;
  int* visits;
  std::int64_t* seen;
  unsigned* thread_x;
  __device__ void operator()(std::int64_t i, std::int64_t j) const {
    const std::int64_t k = (i - begin0) + extent0 * (j - begin1);
    atomicAdd(&visits[k], 1);
    seen[k] = i * 100000 + j;
    thread_x[k] = threadIdx.x;
  }
};

struct RecordVisit3 {
  std::int64_t begin[3];
  std::int64_t extent[3];
  int* visits;
  std::int64_t* seen;
  __device__ void operator()(std::int64_t i, std::int64_t j, std::int64_t k) const {
    const std::int64_t at = (i - begin[0]) + extent[0] * ((j - begin[1]) + extent[1] * (k - begin[2]));
    atomicAdd(&visits[at], 1);
    seen[at] = (i * 1000 + j) * 1000 + k;
  }
};

struct CountVisits2 {
  std::int64_t extent0;
  int* visits;
  __device__ void operator()(std::int64_t i, std::int64_t j) const { atomicAdd(&visits[i + extent0 * j], 1); }
};

// A polymorphic-layout element: two floats and an int.
template <class Layout>
struct Sample : weft::PolymorphicLayout<Sample<Layout>> {
  using Storage = typename weft::StorageDescriptor<Layout, weft::Vector<float, 2>, int>::Storage;
  Storage storage;
};

// out[i] = the sum of element i's and element i + 1's values, every element
// read through weft::read_only (the input is not written by the kernel).
template <class Layout>
struct SumNeighbours {
  const void* in;
  std::size_t count;
  float* out;
  WEFT_HOST_DEVICE void operator()(std::int64_t i) const {
    using Owned = Sample<weft::ContiguousOwned>;
    using Storage = weft::element_storage<Sample<Layout>>;
    float sum = 0;
    for (std::int64_t k = i; k <= i + 1; ++k) {
      const Owned s = weft::read_only<Owned>(Storage::at(in, static_cast<std::size_t>(k), count));
      sum += s.storage.template get<0, 0>() + s.storage.template get<0, 1>() +
             static_cast<float>(s.storage.template get<1>());
    }
    out[i] = sum;
  }
};

}  // namespace

TEST_CASE("cuda.launch_shape.blocks_of_256_threads_follow_dimension_0") {
  // Host-side arithmetic: runs without a GPU.
  using weft::cuda::detail::index_box;
  using weft::cuda::detail::kUnlimitedBlocks;
  using weft::cuda::detail::launch_shape;
  const auto dims = [](const weft::cuda::detail::LaunchShape& s) {
    return std::vector<unsigned>{s.block.x, s.block.y, s.block.z, s.grid.x, s.grid.y, s.grid.z};
  };
  CHECK(dims(launch_shape(index_box(weft::RangePolicy(0, 1000)), kUnlimitedBlocks)) ==
        std::vector<unsigned>{256, 1, 1, 4, 1, 1});
  // A short dimension 0 hands its spare threads to dimension 1.
  CHECK(dims(launch_shape(index_box(weft::MDRangePolicy<2>({3, -2}, {40, 17})), kUnlimitedBlocks)) ==
        std::vector<unsigned>{64, 4, 1, 1, 5, 1});
  CHECK(dims(launch_shape(index_box(weft::MDRangePolicy<3>({0, 0, 0}, {5, 7, 300})), kUnlimitedBlocks)) ==
        std::vector<unsigned>{8, 8, 4, 1, 1, 75});
  // Grid limits: at most 65535 blocks in y; parallel_for launches again for
  // the rest (for_each_covered_box).
  CHECK(dims(launch_shape(index_box(weft::MDRangePolicy<2>({0, 0}, {1, 1 << 24})), kUnlimitedBlocks)) ==
        std::vector<unsigned>{1, 256, 1, 1, 65535, 1});
  // parallel_reduce caps the block count (one partial per block).
  CHECK(launch_shape(index_box(weft::RangePolicy<std::int64_t>(0, 100'000'000)), 1024).blocks() == 1024);
  CHECK(dims(launch_shape(index_box(weft::MDRangePolicy<2>({0, 0}, {4096, 4096})), 1024)) ==
        std::vector<unsigned>{256, 1, 1, 16, 64, 1});
}

TEST_CASE("cuda.launch_shape.boxes_beyond_the_grid_limits_split_into_covered_launches") {
  // Host-side arithmetic: runs without a GPU.
  using weft::cuda::detail::for_each_covered_box;
  using weft::cuda::detail::index_box;
  using Box2 = weft::cuda::detail::IndexBox<std::int64_t, 2>;
  const auto launches_for = [](const Box2& box) {
    std::vector<std::vector<std::int64_t>> launches;
    for_each_covered_box(box, [&](const Box2& part, const weft::cuda::detail::LaunchShape& shape) {
      CHECK(weft::cuda::detail::covers(shape, part));
      launches.push_back({part.begin[0], static_cast<std::int64_t>(part.extent[0]), part.begin[1],
                          static_cast<std::int64_t>(part.extent[1])});
    });
    return launches;
  };
  // Fits one grid: one launch over the whole box.
  CHECK(launches_for(index_box(weft::MDRangePolicy<2>({-3, 5}, {4093, 4101}))) ==
        std::vector<std::vector<std::int64_t>>{{-3, 4096, 5, 4096}});
  // 2^24 rows of one cell: blocks of 1 x 256 reach 65535 * 256 rows a launch,
  // so a second launch takes the 256 rows left.
  constexpr std::int64_t reach = 65535 * 256;
  CHECK(launches_for(index_box(weft::MDRangePolicy<2>({0, 10}, {1, 10 + (std::int64_t{1} << 24)}))) ==
        std::vector<std::vector<std::int64_t>>{{0, 1, 10, reach}, {0, 1, 10 + reach, 256}});
}

TEST_CASE("cuda.parallel_for.saxpy_equals_the_host_backend") {
  if (!weft::test::gpu_present()) return;
  constexpr std::int64_t n = (std::int64_t{1} << 20) + 3;  // not a multiple of the block size
  std::vector<float> x(n), y(n);
  for (std::int64_t i = 0; i < n; ++i) {
    x[i] = 0.5f * static_cast<float>(i % 97);
    y[i] = static_cast<float>(i % 13) - 6.0f;
  }
  // a * x[i] and a * x[i] + y[i] are exact in float, so the GPU's fused
  // multiply-add and the host's multiply-then-add give the same bits.
  const float a = 2.5f;
  std::vector<float> expected = y;
  weft::parallel_for(weft::RangePolicy<std::int64_t>(0, n), Saxpy{a, x.data(), expected.data()});

  DeviceArray<float> device_x(x), device_y(y);
  weft::DeviceStreams gpu(0);
  weft::cuda::parallel_for(gpu.compute_stream(), weft::RangePolicy<std::int64_t>(0, n),
                           Saxpy{a, device_x.data(), device_y.data()});
  REQUIRE(cudaStreamSynchronize(gpu.compute_stream()) == cudaSuccess);
  CHECK(device_y.download() == expected);
}

TEST_CASE("cuda.parallel_for.offset_and_negative_ranges") {
  if (!weft::test::gpu_present()) return;
  weft::DeviceStreams gpu(0);
  DeviceArray<int> out(std::vector<int>(1000, -7));
  weft::cuda::parallel_for(gpu.compute_stream(), weft::RangePolicy(100, 1000), WriteIndex{out.data(), 0});
  std::vector<int> got = out.download();
  for (int i = 0; i < 100; ++i) CHECK(got[i] == -7);  // outside the range: untouched
  for (int i = 100; i < 1000; ++i) REQUIRE(got[i] == i);

  DeviceArray<int> centred(std::vector<int>(100, -7));
  weft::cuda::parallel_for(gpu.compute_stream(), weft::RangePolicy(-50, 50), WriteIndex{centred.data(), 50});
  got = centred.download();
  for (int i = 0; i < 100; ++i) REQUIRE(got[i] == i - 50);
}

TEST_CASE("cuda.parallel_for.host_device_lambda") {
  if (!weft::test::gpu_present()) return;
  weft::DeviceStreams gpu(0);
  DeviceArray<int> squares(1000);
  int* out = squares.data();
  weft::cuda::parallel_for(gpu.compute_stream(), weft::RangePolicy(0, 1000),
                           [=] WEFT_HOST_DEVICE(int i) { out[i] = i * i % 1009; });
  const std::vector<int> got = squares.download();
  for (int i = 0; i < 1000; ++i) REQUIRE(got[i] == i * i % 1009);
}

TEST_CASE("cuda.parallel_for.mdrange2_visits_each_index_once_along_thread_x") {
  if (!weft::test::gpu_present()) return;
  constexpr std::int64_t b0 = 3, b1 = -2, e0 = 37, e1 = 19;
  constexpr std::size_t cells = e0 * e1;
  weft::DeviceStreams gpu(0);
  DeviceArray<int> visits(std::vector<int>(cells, 0));
  DeviceArray<std::int64_t> seen(cells);
  DeviceArray<unsigned> thread_x(cells);
  weft::cuda::parallel_for(gpu.compute_stream(), weft::MDRangePolicy<2>({b0, b1}, {b0 + e0, b1 + e1}),
                           RecordVisit2{b0, b1, e0, visits.data(), seen.data(), thread_x.data()});
  const std::vector<int> count = visits.download();
  const std::vector<std::int64_t> index = seen.download();
  const std::vector<unsigned> lane = thread_x.download();
  for (std::int64_t j = 0; j < e1; ++j) {
    CHECK(lane[e0 * j] == 0);  // each row starts on thread x 0
    for (std::int64_t i = 0; i < e0; ++i) {
      const std::size_t k = i + e0 * j;
      REQUIRE(count[k] == 1);
      REQUIRE(index[k] == (b0 + i) * 100000 + (b1 + j));
      // Dimension 0 runs along threadIdx.x: the next i is the next thread,
      // unless a new block (or grid-stride pass) starts there.
      if (i + 1 < e0 && lane[k + 1] != 0) REQUIRE(lane[k + 1] == lane[k] + 1);
    }
  }
}

TEST_CASE("cuda.parallel_for.mdrange3_visits_each_index_once") {
  if (!weft::test::gpu_present()) return;
  const std::int64_t begin[3] = {0, 10, -100};
  const std::int64_t extent[3] = {5, 7, 300};  // small extents first: threads move on to dimension 2
  const std::size_t cells = 5 * 7 * 300;
  weft::DeviceStreams gpu(0);
  DeviceArray<int> visits(std::vector<int>(cells, 0));
  DeviceArray<std::int64_t> seen(cells);
  weft::cuda::parallel_for(
      gpu.compute_stream(),
      weft::MDRangePolicy<3>({begin[0], begin[1], begin[2]},
                             {begin[0] + extent[0], begin[1] + extent[1], begin[2] + extent[2]}),
      RecordVisit3{
          {begin[0], begin[1], begin[2]}, {extent[0], extent[1], extent[2]}, visits.data(), seen.data()});
  const std::vector<int> count = visits.download();
  const std::vector<std::int64_t> index = seen.download();
  std::size_t at = 0;
  for (std::int64_t k = 0; k < extent[2]; ++k)
    for (std::int64_t j = 0; j < extent[1]; ++j)
      for (std::int64_t i = 0; i < extent[0]; ++i, ++at) {
        REQUIRE(count[at] == 1);
        REQUIRE(index[at] == ((begin[0] + i) * 1000 + begin[1] + j) * 1000 + begin[2] + k);
      }
}

TEST_CASE("cuda.parallel_for.range_larger_than_one_grid") {
  if (!weft::test::gpu_present()) return;
  // Extent 1 in dimension 0 puts 256 threads of a block on dimension 1,
  // whose grid stops at 65535 blocks: 65535 * 256 < 2^24, so a second
  // launch has to cover the last rows.
  constexpr std::int64_t rows = std::int64_t{1} << 24;
  weft::DeviceStreams gpu(0);
  DeviceArray<int> visits(std::vector<int>(rows, 0));
  weft::cuda::parallel_for(gpu.compute_stream(), weft::MDRangePolicy<2>({0, 0}, {1, rows}),
                           CountVisits2{1, visits.data()});
  const std::vector<int> count = visits.download();
  std::size_t wrong = 0;
  for (int c : count) wrong += c != 1;
  CHECK(wrong == 0);
}

TEST_CASE("cuda.parallel_for.empty_ranges_queue_nothing") {
  if (!weft::test::gpu_present()) return;
  weft::DeviceStreams gpu(0);
  DeviceArray<int> out(std::vector<int>(10, -7));
  weft::cuda::parallel_for(gpu.compute_stream(), weft::RangePolicy(4, 4), WriteIndex{out.data(), 0});
  weft::cuda::parallel_for(gpu.compute_stream(), weft::MDRangePolicy<2>({0, 0}, {10, 0}),
                           CountVisits2{10, out.data()});
  REQUIRE(cudaStreamSynchronize(gpu.compute_stream()) == cudaSuccess);
  CHECK(out.download() == std::vector<int>(10, -7));
}

TEST_CASE("cuda.parallel_for.runs_on_the_device_of_its_stream") {
  if (!weft::test::gpu_present()) return;
  int devices = 0;
  REQUIRE(cudaGetDeviceCount(&devices) == cudaSuccess);
  const int target = devices - 1;  // the last device; device 0 stays current
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  weft::DeviceStreams gpu(target);
  weft::SpaceBuffer<weft::CudaSpace> memory(weft::CudaSpace(target), 64 * sizeof(int));
  weft::cuda::parallel_for(gpu.compute_stream(), weft::RangePolicy(0, 64),
                           WriteIndex{static_cast<int*>(memory.data()), 0});
  int current = -1;
  REQUIRE(cudaGetDevice(&current) == cudaSuccess);
  CHECK(current == 0);  // the caller's device survives the launch
  REQUIRE(cudaStreamSynchronize(gpu.compute_stream()) == cudaSuccess);
  std::vector<int> got(64);
  memory.space().copy_to_host(got.data(), memory.data(), 64 * sizeof(int));
  for (int i = 0; i < 64; ++i) REQUIRE(got[i] == i);
  if (devices == 1) MESSAGE("one GPU: the launch and the caller were on the same device");
}

TEST_CASE_TEMPLATE("cuda.read_only_loads_equal_plain_loads", Layout, weft::StridedView,
                   weft::ContiguousView) {
  if (!weft::test::gpu_present()) return;
  constexpr std::size_t n = 1000;
  weft::ElementArray<Sample<Layout>> host(n);
  for (std::size_t k = 0; k < n; ++k) {
    host[k].storage.template get<0, 0>() = 0.5f * static_cast<float>(k);
    host[k].storage.template get<0, 1>() = -0.25f * static_cast<float>(k % 7);
    host[k].storage.template get<1>() = static_cast<int>(k % 3);
  }
  weft::test::DeviceArray<std::byte> in(host.bytes());
  in.upload(std::vector<std::byte>(static_cast<const std::byte*>(host.data()),
                                   static_cast<const std::byte*>(host.data()) + host.bytes()));
  DeviceArray<float> out(n - 1);
  weft::DeviceStreams gpu(0);
  weft::cuda::parallel_for(gpu.compute_stream(), weft::RangePolicy<std::int64_t>(0, n - 1),
                           SumNeighbours<Layout>{in.data(), n, out.data()});
  const std::vector<float> got = out.download();
  std::vector<float> expected(n - 1);
  const SumNeighbours<Layout> on_host{host.data(), n, expected.data()};
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(n - 1); ++i) on_host(i);
  CHECK(got == expected);
}

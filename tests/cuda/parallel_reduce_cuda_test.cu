// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// weft::cuda::parallel_reduce against the host backend's parallel_reduce with
// the same functors and reducers: integer sums, maxima and minima exactly;
// double sums within the error bound of floating-point summation (and
// bit-identical from run to run); MDRange ranks 2 and 3; a result in pinned
// host memory; empty, one-block and just-over-one-block ranges; a struct
// value. The GPU cases skip, saying so, on a machine without a GPU.
#include <weft/views/cuda/parallel_reduce_cuda.cuh>

#include <weft/backends/cuda_streams.hpp>
#include <weft/backends/memory_space.hpp>
#include <weft/views/parallel_reduce.hpp>
#include <weft/views/range_policy.hpp>
#include <weft/views/reducers.hpp>

#include <doctest/doctest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "../test_support.hpp"
#include "gpu_test_support.cuh"

namespace {

using weft::test::DeviceArray;

template <class T>
struct AddUp {
  const T* x;
  WEFT_HOST_DEVICE void operator()(std::int64_t i, T& sum) const { sum += x[i]; }
};

template <class T>
struct KeepLargest {
  const T* x;
  WEFT_HOST_DEVICE void operator()(std::int64_t i, T& largest) const {
    if (largest < x[i]) largest = x[i];
  }
};

template <class T>
struct KeepSmallest {
  const T* x;
  WEFT_HOST_DEVICE void operator()(std::int64_t i, T& smallest) const {
    if (x[i] < smallest) smallest = x[i];
  }
};

// The result of a reduction over [0, n) on the host backend and on the GPU,
// with functors made by make(data pointer).
template <class T, class Make, class R>
T host_reduce(const std::vector<T>& x, const Make& make, const R& reducer) {
  T result{};
  weft::parallel_reduce(weft::RangePolicy<std::int64_t>(0, static_cast<std::int64_t>(x.size())),
                        make(x.data()), reducer, result);
  return result;
}

template <class T, class Make, class R>
T gpu_reduce(const DeviceArray<T>& x, const Make& make, const R& reducer) {
  weft::DeviceStreams gpu(0);
  DeviceArray<T> result(1);
  weft::cuda::parallel_reduce(gpu.compute_stream(),
                              weft::RangePolicy<std::int64_t>(0, static_cast<std::int64_t>(x.size())),
                              make(static_cast<const T*>(x.data())), reducer, result.data());
  return result.download()[0];
}

template <class T>
AddUp<T> add_up(const T* x) {
  return {x};
}
template <class T>
KeepLargest<T> keep_largest(const T* x) {
  return {x};
}
template <class T>
KeepSmallest<T> keep_smallest(const T* x) {
  return {x};
}

struct CountIndices {
  WEFT_HOST_DEVICE void operator()(int, std::int64_t& count) const { count += 1; }
};

// Deterministic values in [1, 2).
std::vector<double> values_in_one_to_two(std::size_t n) {
  std::vector<double> x(n);
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  for (double& v : x) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = 1.0 + static_cast<double>(state >> 11) * 0x1.0p-53;
  }
  return x;
}

struct IndexWeight2 {
  WEFT_HOST_DEVICE void operator()(std::int64_t i, std::int64_t j, std::int64_t& sum) const {
    sum += i * 3 - j * j;
  }
};

struct IndexHash3 {
  WEFT_HOST_DEVICE void operator()(std::int64_t i, std::int64_t j, std::int64_t k,
                                   std::int64_t& largest) const {
    const std::int64_t h = ((i * 7919 + j) * 104729 + k * 31) % 1000003;
    if (largest < h) largest = h;
  }
};

// A struct value and a user reducer.
struct Bounds {
  double lo;
  double hi;
};

struct BoundsReducer {
  WEFT_HOST_DEVICE void init(Bounds& b) const {
    b.lo = 1e300;
    b.hi = -1e300;
  }
  WEFT_HOST_DEVICE void join(Bounds& into, const Bounds& from) const {
    if (from.lo < into.lo) into.lo = from.lo;
    if (into.hi < from.hi) into.hi = from.hi;
  }
};

struct TrackBounds {
  const double* x;
  WEFT_HOST_DEVICE void operator()(std::int64_t i, Bounds& b) const {
    if (x[i] < b.lo) b.lo = x[i];
    if (b.hi < x[i]) b.hi = x[i];
  }
};

}  // namespace

TEST_CASE("cuda.parallel_reduce.integer_sum_max_min_equal_the_host_backend") {
  if (!weft::test::gpu_present()) return;
  constexpr std::size_t n = 3'000'017;
  std::vector<std::int64_t> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<std::int64_t>(i * 7919 % 20011) - 10005;
  x[1234567] = 50000;   // a unique maximum far from the ends
  x[2999999] = -60000;  // and a unique minimum near the end
  const DeviceArray<std::int64_t> device_x(x);

  CHECK(gpu_reduce(device_x, add_up<std::int64_t>, weft::SumReducer()) ==
        host_reduce(x, add_up<std::int64_t>, weft::SumReducer()));
  CHECK(gpu_reduce(device_x, keep_largest<std::int64_t>, weft::MaxReducer()) == 50000);
  CHECK(host_reduce(x, keep_largest<std::int64_t>, weft::MaxReducer()) == 50000);
  CHECK(gpu_reduce(device_x, keep_smallest<std::int64_t>, weft::MinReducer()) == -60000);

  std::vector<int> small(n);
  for (std::size_t i = 0; i < n; ++i) small[i] = static_cast<int>(x[i] % 1000);
  const DeviceArray<int> device_small(small);
  CHECK(gpu_reduce(device_small, add_up<int>, weft::SumReducer<int>()) ==
        host_reduce(small, add_up<int>, weft::SumReducer<int>()));
  CHECK(gpu_reduce(device_small, keep_largest<int>, weft::MaxReducer<int>()) ==
        host_reduce(small, keep_largest<int>, weft::MaxReducer<int>()));
}

TEST_CASE("cuda.parallel_reduce.double_sum_within_the_summation_error_bound") {
  if (!weft::test::gpu_present()) return;
  constexpr std::size_t n = 2'000'003;
  const std::vector<double> x = values_in_one_to_two(n);
  const DeviceArray<double> device_x(x);
  const double host = host_reduce(x, add_up<double>, weft::SumReducer());
  const double gpu = gpu_reduce(device_x, add_up<double>, weft::SumReducer());

  // Any order of summing n terms is within gamma(n - 1) * sum|x_i| of the
  // exact sum (Higham, Accuracy and Stability of Numerical Algorithms, 4.2),
  // gamma(k) = k u / (1 - k u) with u = 2^-53; the host's chunked order and
  // the GPU's tree are both within it, so they differ by at most twice that.
  // Every x_i is at least 1 and the bound here is about 1e-3, so a skipped or
  // doubled index cannot hide in it.
  const double u = std::numeric_limits<double>::epsilon() / 2;
  const double gamma = (n - 1) * u / (1 - (n - 1) * u);
  double sum_of_magnitudes = 0;
  for (double v : x) sum_of_magnitudes += std::fabs(v);
  const double bound = 2 * gamma * sum_of_magnitudes;
  MESSAGE("host " << host << ", GPU " << gpu << ", difference " << std::fabs(gpu - host) << ", bound "
                  << bound);
  CHECK(std::fabs(gpu - host) <= bound);

  // Deterministic: the same call gives the same bits.
  const double again = gpu_reduce(device_x, add_up<double>, weft::SumReducer());
  CHECK(std::memcmp(&gpu, &again, sizeof gpu) == 0);

  // Maxima and minima do not depend on the order: exact.
  CHECK(gpu_reduce(device_x, keep_largest<double>, weft::MaxReducer()) ==
        host_reduce(x, keep_largest<double>, weft::MaxReducer()));
  CHECK(gpu_reduce(device_x, keep_smallest<double>, weft::MinReducer()) ==
        host_reduce(x, keep_smallest<double>, weft::MinReducer()));
}

TEST_CASE("cuda.parallel_reduce.integer_valued_doubles_sum_exactly") {
  if (!weft::test::gpu_present()) return;
  // Every partial sum is an integer far below 2^53, so any order is exact.
  constexpr std::size_t n = 1'000'001;
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>(static_cast<int>(i % 1000) - 400);
  const DeviceArray<double> device_x(x);
  CHECK(gpu_reduce(device_x, add_up<double>, weft::SumReducer()) ==
        host_reduce(x, add_up<double>, weft::SumReducer()));
}

TEST_CASE("cuda.parallel_reduce.mdrange") {
  if (!weft::test::gpu_present()) return;
  weft::DeviceStreams gpu(0);
  DeviceArray<std::int64_t> result(2);

  const weft::MDRangePolicy<2> plane({-3, 5}, {997, 605});
  weft::cuda::parallel_reduce(gpu.compute_stream(), plane, IndexWeight2{}, weft::SumReducer(), result.data());
  const weft::MDRangePolicy<3> box({0, 0, -20}, {3, 50, 480});
  weft::cuda::parallel_reduce(gpu.compute_stream(), box, IndexHash3{}, weft::MaxReducer(), result.data() + 1);
  const std::vector<std::int64_t> got = result.download();

  std::int64_t host_sum = 0;
  weft::parallel_reduce(plane, IndexWeight2{}, weft::SumReducer(), host_sum);
  std::int64_t host_max = 0;
  weft::parallel_reduce(box, IndexHash3{}, weft::MaxReducer(), host_max);
  CHECK(got[0] == host_sum);
  CHECK(got[1] == host_max);
}

TEST_CASE("cuda.parallel_reduce.into_pinned_host_memory") {
  if (!weft::test::gpu_present()) return;
  constexpr std::size_t n = 100'000;
  std::vector<std::int64_t> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<std::int64_t>(i % 321);
  const DeviceArray<std::int64_t> device_x(x);
  weft::SpaceBuffer<weft::HostPinnedSpace> slot(weft::HostPinnedSpace{}, sizeof(std::int64_t));
  REQUIRE(weft::HostPinnedSpace::pins_memory());
  auto* total = static_cast<std::int64_t*>(slot.data());
  *total = -1;

  weft::DeviceStreams gpu(0);
  weft::cuda::parallel_reduce(gpu.compute_stream(), weft::RangePolicy<std::int64_t>(0, n),
                              AddUp<std::int64_t>{device_x.data()},
                              weft::cuda::PinnedHostSlot<std::int64_t>{total});
  // Wait the way a graph would: an event recorded after the reduction.
  weft::CudaEventPool::Lease done = gpu.events().lease();
  REQUIRE(cudaEventRecord(done.get(), gpu.compute_stream()) == cudaSuccess);
  REQUIRE(cudaEventSynchronize(done.get()) == cudaSuccess);
  CHECK(*total == host_reduce(x, add_up<std::int64_t>, weft::SumReducer()));
}

TEST_CASE("cuda.parallel_reduce.empty_one_block_and_two_block_ranges") {
  if (!weft::test::gpu_present()) return;
  std::vector<double> x(300);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i) - 100.5;
  const DeviceArray<double> device_x(x);
  weft::DeviceStreams gpu(0);
  DeviceArray<double> result(std::vector<double>(4, 42.0));
  const double* data = device_x.data();
  weft::cuda::parallel_reduce(gpu.compute_stream(), weft::RangePolicy(0, 0), AddUp<double>{data},
                              weft::SumReducer(), result.data());
  weft::cuda::parallel_reduce(gpu.compute_stream(), weft::RangePolicy(0, 0), KeepLargest<double>{data},
                              weft::MaxReducer(), result.data() + 1);
  weft::cuda::parallel_reduce(gpu.compute_stream(), weft::RangePolicy(0, 200), AddUp<double>{data},
                              weft::SumReducer(), result.data() + 2);  // one block: one kernel
  weft::cuda::parallel_reduce(gpu.compute_stream(), weft::RangePolicy(0, 257), KeepSmallest<double>{data},
                              weft::MinReducer(), result.data() + 3);  // two blocks and the join kernel
  const std::vector<double> got = result.download();
  CHECK(got[0] == 0.0);  // the identity of the sum
  CHECK(got[1] == -std::numeric_limits<double>::infinity());
  double first_200 = 0;  // integers plus halves: exact in any order
  for (int i = 0; i < 200; ++i) first_200 += x[static_cast<std::size_t>(i)];
  CHECK(got[2] == first_200);
  CHECK(got[3] == -100.5);
}

TEST_CASE("cuda.parallel_reduce.struct_value_with_a_user_reducer") {
  if (!weft::test::gpu_present()) return;
  std::vector<double> x = values_in_one_to_two(500'000);
  x[77] = -3.25;
  x[400'000] = 9.5;
  const DeviceArray<double> device_x(x);
  weft::DeviceStreams gpu(0);
  DeviceArray<Bounds> result(1);
  weft::cuda::parallel_reduce(gpu.compute_stream(), weft::RangePolicy<std::int64_t>(0, 500'000),
                              TrackBounds{device_x.data()}, BoundsReducer{}, result.data());
  const Bounds got = result.download()[0];
  CHECK(got.lo == -3.25);
  CHECK(got.hi == 9.5);
}

TEST_CASE("cuda.parallel_reduce.without_a_reducer_sums") {
  if (!weft::test::gpu_present()) return;
  std::vector<int> ones(70'000, 1);
  const DeviceArray<int> device_ones(ones);
  weft::DeviceStreams gpu(0);
  DeviceArray<int> result(1);
  weft::cuda::parallel_reduce(gpu.compute_stream(), weft::RangePolicy(0, 70'000),
                              AddUp<int>{device_ones.data()}, result.data());
  CHECK(result.download()[0] == 70'000);
  DeviceArray<std::int64_t> count(1);
  weft::cuda::parallel_reduce(gpu.compute_stream(), weft::RangePolicy(-5, 69'995), CountIndices{},
                              count.data());
  CHECK(count.download()[0] == 70'000);
}

TEST_CASE("cuda.parallel_reduce.rejects_missing_results") {
  // Checked before any CUDA call: runs without a GPU too.
  const std::int64_t* none = nullptr;
  CHECK(weft::test::invalid_argument_message([&] {
          weft::cuda::parallel_reduce(nullptr, weft::RangePolicy(0, 10), AddUp<std::int64_t>{none},
                                      weft::SumReducer(), static_cast<std::int64_t*>(nullptr));
        }) == "weft::cuda::parallel_reduce: device_result is null (expected device memory for one T)");
  CHECK(
      weft::test::invalid_argument_message([&] {
        weft::cuda::parallel_reduce(nullptr, weft::RangePolicy(0, 10), AddUp<std::int64_t>{none},
                                    weft::cuda::PinnedHostSlot<std::int64_t>{});
      }) ==
      "weft::cuda::parallel_reduce: the PinnedHostSlot is null (expected page-locked host memory for one T)");
}

#ifndef NDEBUG
TEST_CASE("cuda.parallel_reduce.debug_builds_reject_pageable_host_results") {
  if (!weft::test::gpu_present()) return;
  weft::DeviceStreams gpu(0);
  std::int64_t on_the_stack = 0;
  CHECK(
      weft::test::invalid_argument_message([&] {
        weft::cuda::parallel_reduce(gpu.compute_stream(), weft::RangePolicy(0, 10), CountIndices{},
                                    weft::SumReducer(), &on_the_stack);
      }) ==
      "weft::cuda::parallel_reduce: device_result points to ordinary host memory (expected device memory, or "
      "a PinnedHostSlot for a result on the host)");
  CHECK(
      weft::test::invalid_argument_message([&] {
        weft::cuda::parallel_reduce(gpu.compute_stream(), weft::RangePolicy(0, 10), CountIndices{},
                                    weft::cuda::PinnedHostSlot<std::int64_t>{&on_the_stack});
      }) ==
      "weft::cuda::parallel_reduce: the PinnedHostSlot is not page-locked host memory (expected memory from "
      "HostPinnedSpace or cudaMallocHost)");
}
#endif

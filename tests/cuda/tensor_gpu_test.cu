// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tensors in GPU memory: blocks on the GPU, deep copies to and from the
// host, padding copies on streams, and split() graphs of weft::cuda::kernel
// nodes with padding-copy nodes on copy streams, equal to the host graph;
// the same over 2 and 4 logical devices on one GPU (cross-device copies).
#include <weft/graph/graph.hpp>
#include <weft/views/cuda/block_kernel_cuda.cuh>
#include <weft/views/tensor.hpp>
#include <weft/views/unrolled_for.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "../test_support.hpp"
#include "gpu_test_support.cuh"

namespace {

using Grid = weft::Tensor<float, 2>;

// Every element of every block, padding included, bit for bit.
bool same_blocks(const Grid& a, const Grid& b) {
  for (std::size_t k = 0; k < a.block_count(); ++k) {
    const auto& x = a.block_space(k);
    const auto& y = b.block_space(k);
    if (x.count != y.count || std::memcmp(x.data, y.data, x.count * sizeof(float)) != 0) return false;
  }
  return true;
}

void fill(const Grid& g) {
  for (std::size_t i = 0; i < g.size(0); ++i)
    for (std::size_t j = 0; j < g.size(1); ++j) g(i, j) = static_cast<float>((i * 37 + j * 11) % 101) * 0.5f;
}

// Jacobi averaging: a sum of sums times a power of two, so that no multiply-add
// can be fused and the GPU gives the host's bits.
struct Average {
  template <class In, class Out>
  WEFT_HOST_DEVICE void operator()(In& in, Out& out) const {
    *out = 0.25f * ((*in.offset(weft::dim_x, -1) + *in.offset(weft::dim_x, 1)) +
                    (*in.offset(weft::dim_y, -1) + *in.offset(weft::dim_y, 1)));
  }
};

// A double-buffered stencil graph over 4 blocks in `memory`, 24 passes,
// against the same graph on the host: not a bit may differ. Padding copies
// between blocks on different devices are GPU nodes ordered by events.
void check_stencil_equals_host(weft::CudaMemory memory, const weft::Extents<2>& partitions,
                               const weft::Extents<2>& sub) {
  constexpr int kPasses = 24;
  Grid ha(partitions, sub, 1, 96, 80), hb(partitions, sub, 1, 96, 80);
  Grid ga(memory, partitions, sub, 1, 96, 80), gb(memory, partitions, sub, 1, 96, 80);
  fill(ha);
  weft::deep_copy(ga, ha);

  weft::Graph host, gpu;
  host.split(Average{}, weft::concurrent_padded_access(ha), hb).named("x");
  host.then_split(Average{}, weft::concurrent_padded_access(hb), ha).named("y");
  gpu.split(weft::cuda::kernel(Average{}), weft::concurrent_padded_access(ga), gb).named("x");
  gpu.then_split(weft::cuda::kernel(Average{}), weft::concurrent_padded_access(gb), ga).named("y");
  // The same shape; on the GPU every node is a GPU node.
  CHECK(gpu.size() == host.size());
  CHECK(gpu.edges().size() == host.edges().size());
  for (std::size_t i = 0; i < gpu.size(); ++i)
    CHECK(gpu.node(static_cast<int>(i)).execution == weft::ExecutionKind::Gpu);

  weft::Executor executor;
  executor.run_n(host, kPasses).wait().get();
  executor.run_n(gpu, kPasses).wait().get();
  Grid result(partitions, sub, 1, 96, 80);
  weft::deep_copy(result, ga);
  int differ = 0;
  for (std::size_t i = 0; i < 96; ++i)
    for (std::size_t j = 0; j < 80; ++j) differ += result(i, j) != ha(i, j);
  CHECK(differ == 0);
  CHECK(ha(48, 40) != 0.0f);  // something happened
}

}  // namespace

TEST_CASE("cuda.tensor.deep_copy_and_padding_exchange_on_the_gpu_equal_the_host") {
  if (!weft::test::gpu_present()) return;
  Grid host({1, 2}, {1, 2}, 1, 48, 40), back({1, 2}, {1, 2}, 1, 48, 40);
  Grid gpu(weft::cuda_memory, {1, 2}, {1, 2}, 1, 48, 40);
  CHECK(gpu.in_gpu_memory());
  CHECK(gpu.cuda_device_of(3) == 0);
  fill(host);
  weft::deep_copy(gpu, host);
  weft::deep_copy(back, gpu);
  CHECK(same_blocks(back, host));
  host.exchange_padding();
  gpu.exchange_padding();  // on the GPU, through a stream
  weft::deep_copy(back, gpu);
  CHECK(same_blocks(back, host));
  CHECK_THROWS_WITH_AS(gpu(3, 4), doctest::Contains("is in GPU memory (CUDA device 0)"), std::logic_error);
}

TEST_CASE("cuda.tensor.a_multi_partition_stencil_on_one_gpu_equals_the_host_graph") {
  if (!weft::test::gpu_present()) return;
  // Four blocks, as 4 sub-partitions of one partition, and as 2x2 partitions
  // that all land on the one GPU.
  check_stencil_equals_host(weft::cuda_memory, {1, 1}, {1, 4});
  check_stencil_equals_host(weft::cuda_memory, {2, 2}, {1, 1});
}

TEST_CASE("cuda.logical_devices.padding_exchange_over_2_and_4_devices_equals_one_device") {
  if (!weft::test::gpu_present()) return;
  const weft::test::LogicalDevices four(4);
  Grid host({1, 4}, {1, 2}, 1, 48, 40), expected({1, 4}, {1, 2}, 1, 48, 40);
  fill(host);
  weft::deep_copy(expected, host);
  expected.exchange_padding();
  std::vector<Grid> results;
  for (int devices : {1, 2, 4}) {
    CAPTURE(devices);
    Grid gpu(weft::CudaMemory::on_devices(devices), {1, 4}, {1, 2}, 1, 48, 40);
    std::vector<bool> used(static_cast<std::size_t>(devices), false);
    for (std::size_t b = 0; b < gpu.block_count(); ++b) {
      CHECK(gpu.cuda_device_of(b) == static_cast<int>(gpu.device_of(b) % static_cast<std::size_t>(devices)));
      used[static_cast<std::size_t>(gpu.cuda_device_of(b))] = true;
    }
    CHECK(std::find(used.begin(), used.end(), false) == used.end());  // every device holds blocks
    weft::deep_copy(gpu, host);
    gpu.exchange_padding();  // between devices: copies from one device's memory to another's
    Grid& back = results.emplace_back(weft::Extents<2>{1, 4}, weft::Extents<2>{1, 2}, 1, 48, 40);
    weft::deep_copy(back, gpu);
    CHECK(same_blocks(back, expected));
    CHECK(same_blocks(back, results.front()));  // the one-device run
  }
}

TEST_CASE("cuda.logical_devices.a_stencil_graph_over_2_and_4_devices_equals_the_host_graph") {
  if (!weft::test::gpu_present()) return;
  const weft::test::LogicalDevices four(4);
  check_stencil_equals_host(weft::CudaMemory::on_devices(2), {1, 4}, {1, 1});
  check_stencil_equals_host(weft::CudaMemory::on_devices(4), {1, 4}, {1, 1});
  check_stencil_equals_host(weft::CudaMemory::on_devices(4), {2, 2}, {1, 1});
}

TEST_CASE("cuda.tensor.graph_operations_refuse_mixed_memories_and_host_kernels_on_the_gpu") {
  if (!weft::test::gpu_present()) return;
  Grid host({1, 2}, 1, 16, 16);
  Grid gpu(weft::cuda_memory, {1, 2}, 1, 16, 16), gpu2(weft::cuda_memory, {1, 2}, 1, 16, 16);
  weft::Graph g;
  CHECK(weft::test::invalid_argument_message(
            [&] { g.split(Average{}, weft::concurrent_padded_access(gpu), gpu2); }) ==
        "Graph::split: tensor argument 1 (Tensor<2> (16, 16) in 2 blocks) is in GPU memory: its kernel must "
        "be a weft::cuda::kernel (views/cuda/block_kernel_cuda.cuh, in a .cu file)");
  CHECK(weft::test::invalid_argument_message(
            [&] { g.split(weft::cuda::kernel(Average{}), weft::concurrent_padded_access(host), host); }) ==
        "Graph::split: tensor argument 1 (Tensor<2> (16, 16) in 2 blocks) is in host memory, but the kernel "
        "is a weft::cuda::kernel: make the tensors with weft::cuda_memory, or pass the kernel itself");
  CHECK(g.size() == 0);
}

TEST_CASE("cuda.tensor.boundary_and_reductions_on_the_gpu_equal_the_host") {
  if (!weft::test::gpu_present()) return;
  Grid host({1, 2}, {1, 2}, 2, 64, 48), back({1, 2}, {1, 2}, 2, 64, 48);
  Grid gpu(weft::cuda_memory, {1, 2}, {1, 2}, 2, 64, 48);
  fill(host);  // multiples of 0.5 below 51: every double sum is exact, in any order
  weft::deep_copy(gpu, host);
  auto host_max = weft::make_reduction_result<double>(-1.0),
       gpu_max = weft::make_reduction_result<double>(-1.0);
  auto host_sum = weft::make_reduction_result<double>(0.0),
       gpu_sum = weft::make_reduction_result<double>(0.0);
  weft::Graph on_host, on_gpu;
  on_host.boundary(host, weft::FirstOrderExtrapolation{}).named("edges");
  on_host.then_reduce(host, host_max, weft::MaxReducer()).named("max");
  on_host.reduce(host, host_sum).named("sum");
  on_gpu.boundary(gpu, weft::FirstOrderExtrapolation{}).named("edges");
  on_gpu.then_reduce(gpu, gpu_max, weft::MaxReducer()).named("max");
  on_gpu.reduce(gpu, gpu_sum).named("sum");
  CHECK(on_gpu.node(*on_gpu.find("max.finish")).execution == weft::ExecutionKind::Cpu);  // joins on the host
  CHECK(on_gpu.node(*on_gpu.find("max.0")).execution == weft::ExecutionKind::Gpu);
  weft::Executor executor;
  executor.run(on_host).wait().get();
  executor.run(on_gpu).wait().get();
  CHECK(gpu_max.value() == host_max.value());
  CHECK(gpu_sum.value() == host_sum.value());
  CHECK(host_max.value() == 50.0);
  weft::deep_copy(back, gpu);
  CHECK(same_blocks(back, host));  // the padding beyond the edges too
}

namespace {

// A reduction's map as GPUs need it: a functor callable on the device.
struct Twice {
  WEFT_HOST_DEVICE double operator()(double v) const { return 2.0 * v; }
};

}  // namespace

TEST_CASE("cuda.tensor.a_reduction_with_a_map_equals_the_host") {
  if (!weft::test::gpu_present()) return;
  Grid host({1, 2}, {1, 2}, 2, 64, 48);
  Grid gpu(weft::cuda_memory, {1, 2}, {1, 2}, 2, 64, 48);
  fill(host);  // multiples of 0.5 below 51: doubled, every sum is still exact
  weft::deep_copy(gpu, host);
  auto host_sum = weft::make_reduction_result<double>(0.0),
       gpu_sum = weft::make_reduction_result<double>(0.0);
  weft::Graph on_host, on_gpu;
  on_host.reduce(host, host_sum, weft::SumReducer(), Twice{});
  on_gpu.reduce(gpu, gpu_sum, weft::SumReducer(), Twice{});
  weft::Executor executor;
  executor.run(on_host).wait().get();
  executor.run(on_gpu).wait().get();
  CHECK(gpu_sum.value() == host_sum.value());
  CHECK(host_sum.value() > 0.0);
}

namespace {

// x <- 0.5 x + 1 in place, reading only its own cell.
struct HalfPlusOne {
  template <class It>
  WEFT_HOST_DEVICE void operator()(It& x) const {
    *x = 0.5 * *x + 1.0;
  }
};

// Sum of the 2D (or 1D, 3D) neighbours at distance 1 along every dimension.
struct NeighbourSum {
  template <class In, class Out>
  WEFT_HOST_DEVICE void operator()(In& in, Out& out) const {
    double sum = 0.0;
    weft::unrolled_for<In::dims>([&](auto dim) { sum += *in.offset(dim, -1) + *in.offset(dim, 1); });
    *out = sum;
  }
};

// Runs the same two operations with and without in_shared (a padded
// read into another tensor, and an in-place update) and compares the
// results bit for bit.
template <std::size_t D, class... Sizes>
void check_in_shared_matches(const weft::Extents<D>& partitions, std::size_t padding, Sizes... sizes) {
  using Field = weft::Tensor<double, D>;
  Field host(partitions, padding, sizes...);
  std::size_t k = 0;
  for (std::size_t b = 0; b < host.block_count(); ++b) {
    const auto& s = host.block_space(b);
    for (std::size_t i = 0; i < s.count; ++i)
      static_cast<double*>(s.data)[i] = static_cast<double>((k++ * 7919) % 1013);
  }
  Field in(weft::cuda_memory, partitions, padding, sizes...),
      out_global(weft::cuda_memory, partitions, padding, sizes...),
      out_shared(weft::cuda_memory, partitions, padding, sizes...);
  Field x_global(weft::cuda_memory, partitions, padding, sizes...),
      x_shared(weft::cuda_memory, partitions, padding, sizes...);
  weft::deep_copy(in, host);
  weft::deep_copy(x_global, host);
  weft::deep_copy(x_shared, host);
  weft::Graph plain, staged;
  plain.split(weft::cuda::kernel(NeighbourSum{}), weft::concurrent_padded_access(in), out_global);
  plain.then_split(weft::cuda::kernel(HalfPlusOne{}), weft::exclusive_padded_access(x_global));
  staged.split(weft::cuda::kernel(NeighbourSum{}), weft::concurrent_padded_access_in_shared(in), out_shared);
  staged.then_split(weft::cuda::kernel(HalfPlusOne{}), weft::exclusive_padded_access_in_shared(x_shared));
  CHECK(staged.size() == plain.size());  // in_shared keeps the graph's shape
  weft::Executor executor;
  executor.run_n(plain, 3).wait().get();
  executor.run_n(staged, 3).wait().get();
  Field a(partitions, padding, sizes...), b(partitions, padding, sizes...);
  const auto same = [&](const Field& g1, const Field& g2) {
    weft::deep_copy(a, g1);
    weft::deep_copy(b, g2);
    for (std::size_t blk = 0; blk < a.block_count(); ++blk) {
      const auto& s = a.block_space(blk);
      if (std::memcmp(s.data, b.block_space(blk).data, s.count * sizeof(double)) != 0) return false;
    }
    return true;
  };
  CHECK(same(out_global, out_shared));
  CHECK(same(x_global, x_shared));
}

}  // namespace

TEST_CASE("cuda.tensor.in_shared_staging_gives_the_same_bits_as_global_memory") {
  if (!weft::test::gpu_present()) return;
  check_in_shared_matches<1>({3}, 1, 1000);            // tiles of 256 that do not divide the blocks
  check_in_shared_matches<2>({1, 3}, 1, 97, 70);       // 32 x 8 tiles, ragged edges
  check_in_shared_matches<3>({1, 1, 2}, 1, 40, 9, 6);  // 32 x 4 x 2 tiles
}

TEST_CASE("cuda.tensor.in_shared_tiles_beyond_48_KiB_opt_in_to_the_device_limit") {
  if (!weft::test::gpu_present()) return;
  int limit = 0;
  REQUIRE(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0) == cudaSuccess);
  // A 32 x 4 x 2 tile of doubles with 6 cells of padding all round:
  // 44 x 16 x 14 x 8 bytes = 77 KiB, more than a launch gets by default.
  constexpr std::size_t tile_bytes = 44 * 16 * 14 * sizeof(double);
  static_assert(tile_bytes > 48 * 1024);
  if (tile_bytes > static_cast<std::size_t>(limit)) {
    MESSAGE("device 0 allows " << limit << " bytes of shared memory per block: skipping");
    return;
  }
  check_in_shared_matches<3>({1, 1, 2}, 6, 40, 12, 12);
}

TEST_CASE("cuda.tensor.in_shared_tiles_beyond_the_device_limit_are_refused_by_name") {
  if (!weft::test::gpu_present()) return;
  int limit = 0;
  REQUIRE(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0) == cudaSuccess);
  // Padding 16 around a 32 x 4 x 2 tile: 64 x 36 x 34 doubles, 612 KiB.
  REQUIRE(std::size_t{64 * 36 * 34 * sizeof(double)} > static_cast<std::size_t>(limit));
  weft::Tensor<double, 3> x(weft::cuda_memory, {1, 1, 1}, 16, 40, 40, 40);
  weft::Graph g;
  g.split(weft::cuda::kernel(HalfPlusOne{}), weft::exclusive_padded_access_in_shared(x));
  weft::Executor executor;
  try {
    executor.run(g).wait().get();
    FAIL("a tile larger than the device's shared memory was launched");
  } catch (const std::invalid_argument& error) {
    const std::string what = error.what();
    CHECK(what.find("bytes of shared memory per block") != std::string::npos);
    CHECK(what.find(std::to_string(limit)) != std::string::npos);
  }
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributed tensors in GPU memory over MPI (docs/distributed.md), run with
// 2 ranks: each rank drives the GPU local_rank % devices, padding between
// ranks goes through page-locked host memory, and the results equal the
// same graph on the host in one process, bit for bit; a distributed GPU
// reduce equals the one-process GPU reduce on every rank. Without a GPU
// every case says so and passes.
#include <doctest/doctest.h>

#include <cstring>

#include <weft/graph/graph.hpp>
#include <weft/views/cuda/block_kernel_cuda.cuh>
#include <weft/views/reducers.hpp>

#include "../cuda/gpu_test_support.cuh"
#include "mpi_test_support.hpp"

namespace {

using weft::test::session;

// x <- the mean of its neighbours along x (a power-of-two scale: exact).
struct HalfPair {
  template <class In, class Out>
  WEFT_HOST_DEVICE void operator()(In& in, Out& out) const {
    *out = 0.5 * (*in.offset(weft::dim_x, -1) + *in.offset(weft::dim_x, 1));
  }
};

// One distributed host tensor filled with cell_value, copied into `gpu`.
template <std::size_t D>
void fill_on_host_then_copy(weft::Executor& executor, const weft::Tensor<double, D>& host,
                            const weft::Tensor<double, D>& gpu) {
  weft::Graph fill;
  fill.split(weft::test::FillCellValues{}, host);
  executor.run(fill).get();
  weft::deep_copy(gpu, host);
}

template <std::size_t D, class... Sizes>
void check_padding_exchange(const weft::Extents<D>& partitions, std::size_t padding, Sizes... sizes) {
  using Field = weft::Tensor<double, D>;
  const weft::Distribution spread = weft::distributed(session->world());
  weft::Executor executor;
  Field in(spread, weft::cuda_memory, partitions, padding, sizes...),
      out(spread, weft::cuda_memory, partitions, padding, sizes...);
  Field in_back(spread, partitions, padding, sizes...), out_back(spread, partitions, padding, sizes...);
  fill_on_host_then_copy(executor, in_back, in);
  weft::Graph g;
  g.split(weft::cuda::kernel(weft::test::BoxSum<D>{static_cast<int>(padding)}),
          weft::concurrent_padded_access(in), out);
  executor.run(g).get();
  weft::deep_copy(in_back, in);
  weft::deep_copy(out_back, out);

  Field in1(partitions, padding, sizes...), out1(partitions, padding, sizes...);
  weft::Graph g1;
  g1.split(weft::test::FillCellValues{}, in1);
  g1.then_split(weft::test::BoxSum<D>{static_cast<int>(padding)}, weft::concurrent_padded_access(in1), out1);
  executor.run(g1).get();
  CHECK(weft::test::local_blocks_equal(in_back, in1));  // the padding received from other ranks
  CHECK(weft::test::local_blocks_equal(out_back, out1));
}

}  // namespace

TEST_CASE("MpiGpu.padding_copies_across_ranks_on_the_gpu_equal_one_process_on_the_host") {
  if (!weft::test::gpu_present()) return;
  for (std::size_t padding = 1; padding <= 3; ++padding) {
    CAPTURE(padding);
    check_padding_exchange<1>({8}, padding, 96);
    check_padding_exchange<2>({2, 4}, padding, 30, 40);
    check_padding_exchange<3>({2, 2, 2}, padding, 12, 10, 14);
  }
}

TEST_CASE("MpiGpu.passes_of_a_double_buffered_loop_on_logical_devices") {
  if (!weft::test::gpu_present()) return;
  // Two logical devices on one GPU: rank r drives device r % 2.
  weft::test::LogicalDevices two(2);
  using Field = weft::Tensor<double, 2>;
  const weft::Distribution spread = weft::distributed(session->world());
  weft::Executor executor;
  Field a(spread, weft::cuda_memory, {1, 4}, 1, 16, 64), b(spread, weft::cuda_memory, {1, 4}, 1, 16, 64);
  Field back(spread, {1, 4}, 1, 16, 64);
  CHECK(a.cuda_device_of(0) == session->world()->local_rank() % 2);
  fill_on_host_then_copy(executor, back, a);
  weft::Graph g;
  g.split(weft::cuda::kernel(HalfPair{}), weft::concurrent_padded_access(a), b);
  g.then_split(weft::cuda::kernel(HalfPair{}), weft::concurrent_padded_access(b), a);
  executor.run_n(g, 7).get();
  weft::deep_copy(back, a);

  Field a1({1, 4}, 1, 16, 64), b1({1, 4}, 1, 16, 64);
  weft::Graph g1;
  g1.split(weft::test::FillCellValues{}, a1);
  executor.run(g1).get();
  weft::Graph loop;
  loop.split(HalfPair{}, weft::concurrent_padded_access(a1), b1);
  loop.then_split(HalfPair{}, weft::concurrent_padded_access(b1), a1);
  executor.run_n(loop, 7).get();
  CHECK(weft::test::local_blocks_equal(back, a1));
}

TEST_CASE("MpiGpu.a_reduce_over_gpu_blocks_is_the_one_process_gpu_result_on_every_rank") {
  if (!weft::test::gpu_present()) return;
  using Field = weft::Tensor<double, 2>;
  const weft::Distribution spread = weft::distributed(session->world());
  weft::Executor executor;
  Field x(spread, weft::cuda_memory, {1, 8}, 1, 64, 200), host(spread, {1, 8}, 1, 64, 200);
  fill_on_host_then_copy(executor, host, x);
  Field x1(weft::cuda_memory, {1, 8}, 1, 64, 200), host1({1, 8}, 1, 64, 200);
  weft::Graph fill1;
  fill1.split(weft::test::FillCellValues{}, host1);
  executor.run(fill1).get();
  weft::deep_copy(x1, host1);

  auto total = weft::make_reduction_result<double>(0.0), total1 = weft::make_reduction_result<double>(0.0);
  weft::Graph g, g1;
  g.reduce(x, total);
  g1.reduce(x1, total1);
  executor.run(g).get();
  executor.run(g1).get();
  const double a = total.value(), b = total1.value();
  CHECK(std::memcmp(&a, &b, sizeof a) == 0);
  double low = a, high = a;
  session->call([&] {
    MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  });
  CHECK(low == high);
}

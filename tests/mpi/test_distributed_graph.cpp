// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributed graphs over MPI (docs/distributed.md), run with 2 and 4 ranks:
// cross-rank padding copies equal the single-process results bitwise, a
// distributed reduce equals the single-process one, runs and loops work
// across ranks, failures and cancellation end every rank, a mismatched
// graph is refused, and every message is received exactly once.
#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include <weft/graph/graph.hpp>
#include <weft/views/reducers.hpp>

#include "mpi_test_support.hpp"

namespace {

using weft::test::session;

weft::ExecutorConfig two_workers() { return weft::ExecutorConfig::cpu_only(2); }

// Fill with cell_value, then one box sum reading `reach` cells of padding.
template <std::size_t D>
void build(weft::Graph& g, weft::Tensor<double, D>& in, weft::Tensor<double, D>& out, int reach) {
  g.split(weft::test::FillCellValues{}, in);
  g.then_split(weft::test::BoxSum<D>{reach}, weft::concurrent_padded_access(in), out);
}

template <std::size_t D, class... Sizes>
void check_padding_exchange(const weft::Extents<D>& partitions, std::size_t padding, Sizes... sizes) {
  weft::Executor executor(two_workers());
  weft::Tensor<double, D> in(weft::distributed(session->world()), partitions, padding, sizes...);
  weft::Tensor<double, D> out(weft::distributed(session->world()), partitions, padding, sizes...);
  weft::Tensor<double, D> in1(partitions, padding, sizes...), out1(partitions, padding, sizes...);
  weft::Graph g, g1;
  build(g, in, out, static_cast<int>(padding));
  build(g1, in1, out1, static_cast<int>(padding));
  executor.run(g).get();
  executor.run(g1).get();
  CHECK(weft::test::local_blocks_equal(in, in1));  // the received padding, bit for bit
  CHECK(weft::test::local_blocks_equal(out, out1));
}

}  // namespace

TEST_CASE("Mpi.padding_copies_across_ranks_equal_one_process_1d_2d_3d") {
  for (std::size_t padding = 1; padding <= 3; ++padding) {
    CAPTURE(padding);
    check_padding_exchange<1>({8}, padding, 96);
    check_padding_exchange<2>({2, 4}, padding, 30, 40);
    check_padding_exchange<2>({4, 1}, padding, 41, 13);
    check_padding_exchange<3>({2, 2, 2}, padding, 12, 10, 14);
  }
}

TEST_CASE("Mpi.uneven_owner_map_and_sub_partitions") {
  weft::Executor executor(two_workers());
  const int ranks = session->size();
  std::vector<int> owners(6);
  for (int p = 0; p < 6; ++p) owners[static_cast<std::size_t>(p)] = (p * p) % ranks;  // scattered
  weft::Tensor<double, 2> in(weft::distributed(session->world(), owners), {3, 2}, {1, 2}, 2, 33, 47);
  weft::Tensor<double, 2> out(weft::distributed(session->world(), owners), {3, 2}, {1, 2}, 2, 33, 47);
  weft::Tensor<double, 2> in1({3, 2}, {1, 2}, 2, 33, 47), out1({3, 2}, {1, 2}, 2, 33, 47);
  weft::Graph g, g1;
  build(g, in, out, 2);
  build(g1, in1, out1, 2);
  executor.run_n(g, 3).get();
  executor.run_n(g1, 3).get();
  CHECK(weft::test::local_blocks_equal(in, in1));
  CHECK(weft::test::local_blocks_equal(out, out1));
}

TEST_CASE("Mpi.reduce_is_bitwise_the_one_process_result_on_every_rank") {
  weft::Executor executor(two_workers());
  weft::Tensor<double, 2> x(weft::distributed(session->world()), {1, 8}, 1, 64, 200);
  weft::Tensor<double, 2> x1({1, 8}, 1, 64, 200);
  weft::ReductionResult<double> total, total1;
  weft::Graph g, g1;
  g.split(weft::test::FillCellValues{}, x);
  g.then_reduce(x, total);
  g1.split(weft::test::FillCellValues{}, x1);
  g1.then_reduce(x1, total1);
  executor.run(g).get();
  executor.run(g1).get();
  const double a = total.value(), b = total1.value();
  CHECK(std::memcmp(&a, &b, sizeof a) == 0);
  // Every rank holds the same total.
  double low = a, high = a;
  session->call([&] {
    MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  });
  CHECK(low == high);
}

TEST_CASE("Mpi.run_n_and_a_conditional_loop_on_a_reduced_value") {
  // Heat diffusion until the total falls below a bound: the predicate reads
  // a distributed reduction, the same on every rank, so every rank loops
  // the same number of times as one process would.
  const auto count_passes = [](weft::Tensor<double, 1> a, weft::Tensor<double, 1> b) {
    weft::Executor executor(weft::ExecutorConfig::cpu_only(2));
    weft::ReductionResult<double> sum;
    const auto step = [](auto& in, auto& out) {
      *out = 0.25 * *in.offset(weft::dim_x, -1) + 0.5 * *in + 0.25 * *in.offset(weft::dim_x, 1) - 1e-3;
    };
    weft::Graph g;
    g.split(weft::test::FillCellValues{}, a);
    weft::Graph loop;
    int passes = 0;
    loop.split(step, weft::concurrent_padded_access(a), b);
    loop.then_split(step, weft::concurrent_padded_access(b), a);
    loop.then_reduce(a, sum);
    loop.sync([&passes] { ++passes; });
    loop.conditional([&] { return sum.value() > 0.5 * 96 * 1000.0 && passes < 200; });
    executor.run(g).get();
    executor.run(loop).get();
    executor.run_n(loop, 2).get();  // two more runs of the loop
    return std::pair{passes, sum.value()};
  };
  const auto [passes, total] =
      count_passes(weft::Tensor<double, 1>(weft::distributed(session->world()), {8}, 1, 96),
                   weft::Tensor<double, 1>(weft::distributed(session->world()), {8}, 1, 96));
  const auto [passes1, total1] =
      count_passes(weft::Tensor<double, 1>({8}, 1, 96), weft::Tensor<double, 1>({8}, 1, 96));
  CHECK(passes == passes1);
  CHECK(passes > 3);
  CHECK(std::memcmp(&total, &total1, sizeof total) == 0);
}

TEST_CASE("Mpi.an_exception_on_one_rank_ends_the_run_on_every_rank") {
  weft::Executor executor(two_workers());
  weft::Tensor<double, 1> a(weft::distributed(session->world()), {8}, 1, 64);
  weft::Tensor<double, 1> b(weft::distributed(session->world()), {8}, 1, 64);
  const int last = session->size() - 1;
  std::atomic<int> runs{0};
  weft::Graph g;
  g.split(weft::test::FillCellValues{}, a);
  g.then([&runs, last] {
    if (weft::test::session->rank() == last && runs.fetch_add(1) == 1)
      throw std::runtime_error("boom on purpose");
  });
  g.then_split(weft::test::BoxSum<1>{1}, weft::concurrent_padded_access(a), b);
  executor.run(g).get();  // the first run is fine
  try {
    executor.run_n(g, 3).get();
    FAIL("the run should have failed on every rank");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    if (session->rank() == last) {
      CHECK(what == "boom on purpose");
    } else {
      CHECK(what == "rank " + std::to_string(last) + ": boom on purpose");
    }
  }
  // The graph runs again afterwards, with fresh messages (no stale ones match).
  weft::Tensor<double, 1> a1({8}, 1, 64), b1({8}, 1, 64);
  weft::Graph g1;
  g1.split(weft::test::FillCellValues{}, a1);
  g1.then_split(weft::test::BoxSum<1>{1}, weft::concurrent_padded_access(a1), b1);
  executor.run_n(g, 2).get();
  executor.run(g1).get();
  CHECK(weft::test::local_blocks_equal(b, b1));
}

TEST_CASE("Mpi.cancelling_on_one_rank_cancels_every_rank") {
  weft::Executor executor(two_workers());
  weft::Tensor<double, 1> a(weft::distributed(session->world()), {8}, 1, 64);
  weft::Tensor<double, 1> b(weft::distributed(session->world()), {8}, 1, 64);
  std::atomic<weft::Future<>*> running{nullptr};
  std::atomic<int> passes{0};
  weft::Graph g;
  g.split(weft::test::FillCellValues{}, a);
  g.then([&] {
    // Rank 0 cancels its run during the third pass.
    if (weft::test::session->rank() == 0 && passes.fetch_add(1) == 2) running.load()->cancel();
  });
  g.then_split(weft::test::BoxSum<1>{1}, weft::concurrent_padded_access(a), b);
  weft::Future<> future = executor.run_n(g, 1000);
  running.store(&future);
  // Other ranks never cancel: they must still end, cancelled.
  CHECK_THROWS_AS(future.get(), weft::Cancelled);
}

TEST_CASE("Mpi.a_graph_that_differs_between_ranks_is_refused_by_name") {
  weft::Executor executor(two_workers());
  weft::Tensor<double, 1> a(weft::distributed(session->world()), {4}, 1, 64);
  weft::Graph g;
  g.split(weft::test::FillCellValues{}, a).named("fill");
  if (session->rank() == 1) g.then([] {}).named("extra");
  try {
    executor.run(g).get();
    FAIL("mismatched graphs must be refused");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find("built different graphs") != std::string::npos);
    CAPTURE(what);
    CHECK(what.find("rank 1 has 5 nodes") != std::string::npos);
  }
}

TEST_CASE("Mpi.tensors_split_differently_between_ranks_are_named") {
  weft::Executor executor(two_workers());
  const std::size_t size = session->rank() == 0 ? 64 : 60;
  weft::Tensor<double, 1> a(weft::distributed(session->world()), {4}, 1, size);
  weft::Graph g;
  g.split(weft::test::FillCellValues{}, a);
  try {
    executor.run(g).get();
    FAIL("mismatched tensors must be refused");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find(
              "rank 0 has 4 nodes, 0 edges, 0 messages of 0 bytes in all over Tensor<1> (64) in 4 blocks") !=
          std::string::npos);
    CHECK(what.find("Tensor<1> (60) in 4 blocks") != std::string::npos);
  }
}

TEST_CASE("Mpi.every_message_is_received_once_and_none_is_left") {
  weft::Executor executor(two_workers());
  weft::Tensor<double, 2> a(weft::distributed(session->world()), {2, 4}, 2, 40, 40);
  weft::Tensor<double, 2> b(weft::distributed(session->world()), {2, 4}, 2, 40, 40);
  weft::ReductionResult<double> sum;
  weft::Graph g;
  build(g, a, b, 2);
  g.then_reduce(b, sum);
  executor.run(g).get();  // opens the channel
  const std::size_t requests_before = session->requests_completed();
  const weft::mpi::Session::MessageCounts before = session->message_counts();
  constexpr std::uint64_t passes = 5;
  executor.run_n(g, static_cast<long>(passes)).get();
  const weft::mpi::Session::MessageCounts after = session->message_counts();
  // What this rank must send and receive per pass: the padding copies
  // between its blocks and other ranks' (their bytes), and its blocks'
  // partials to every other rank (the others' from them).
  const auto others = static_cast<std::uint64_t>(session->size() - 1);
  std::uint64_t sends = 0, receives = 0, bytes_out = 0, bytes_in = 0;
  for (std::size_t to = 0; to < a.block_count(); ++to) {
    for (std::size_t from : a.padding_sources(to)) {
      if (a.owner_of(from) == a.owner_of(to)) continue;
      if (a.is_local(from)) ++sends, bytes_out += a.padding_bytes(from, to);
      if (a.is_local(to)) ++receives, bytes_in += a.padding_bytes(from, to);
    }
  }
  for (std::size_t block = 0; block < b.block_count(); ++block) {
    if (b.is_local(block)) sends += others, bytes_out += others * sizeof(double);
    if (!b.is_local(block)) ++receives, bytes_in += sizeof(double);
  }
  CHECK(after.sent - before.sent == passes * sends);
  CHECK(after.received - before.received == passes * receives);
  CHECK(after.bytes_sent - before.bytes_sent == passes * bytes_out);
  CHECK(after.bytes_received - before.bytes_received == passes * bytes_in);
  CHECK(after.outstanding == 0);
  // Every request completed: the data ones, and one pass status out to and
  // one in from every other rank per pass.
  CHECK(session->requests_completed() - requests_before == passes * (sends + receives + 2 * others));
  // Across the ranks, every message sent was received once.
  std::uint64_t totals[2] = {after.sent - before.sent, after.received - before.received};
  session->call([&] { MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD); });
  CHECK(totals[0] == totals[1]);
}

TEST_CASE("Mpi.gather_puts_every_block_on_the_root_and_refuses_a_whole_tensor") {
  weft::Executor executor(two_workers());
  const int root = session->size() - 1;
  weft::Tensor<double, 2> x(weft::distributed(session->world()), {2, 4}, 1, 30, 40), x1({2, 4}, 1, 30, 40);
  weft::Graph g, g1;
  g.split(weft::test::FillCellValues{}, x);
  g1.split(weft::test::FillCellValues{}, x1);
  executor.run(g).get();
  executor.run(g1).get();
  const weft::Tensor<double, 2> whole = weft::mpi::gather(*session, x, root);
  if (session->rank() == root) {
    REQUIRE_FALSE(whole.empty());
    for (std::size_t b = 0; b < x1.block_count(); ++b) {
      const weft::BlockSpace<2>& s = x1.block_space(b);
      CHECK(std::memcmp(whole.block_space(b).data, s.data, s.count * sizeof(double)) == 0);
    }
  } else {
    CHECK(whole.empty());
  }
  CHECK_THROWS_WITH_AS(weft::mpi::gather(*session, x1, root),
                       "weft::mpi::gather: the tensor is not distributed (every rank holds all of it)",
                       std::invalid_argument);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Ranks that do not run the same thing (docs/distributed.md, "When ranks
// disagree"): twin graphs run first in different orders, run counts and
// run_until predicates that differ, and a rank that never runs a pass all
// end with an error on every rank that waits, never with swapped messages
// or a hang.
#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include <weft/graph/graph.hpp>

#include "mpi_test_support.hpp"

namespace {

using weft::test::session;

weft::ExecutorConfig two_workers() { return weft::ExecutorConfig::cpu_only(2); }

// cell_value times `scale`: twin graphs differ in their data, not their shape.
struct FillScaled {
  double scale;
  template <class It>
  void operator()(It& it) const {
    *it = scale * weft::test::cell_value(it.global_index(0), 0, 0);
  }
};

// Fill, then a box sum that reads one cell of padding each way.
void build(weft::Graph& g, weft::Tensor<double, 1>& in, weft::Tensor<double, 1>& out, double scale) {
  g.split(FillScaled{scale}, in);
  g.then_split(weft::test::BoxSum<1>{1}, weft::concurrent_padded_access(in), out);
}

weft::Tensor<double, 1> spread() { return {weft::distributed(session->world()), {8}, 1, 64}; }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("Mpi.twin_graphs_run_first_in_different_orders_are_refused_then_run_right") {
  weft::Executor executor(two_workers());
  weft::Tensor<double, 1> a_in = spread(), a_out = spread(), b_in = spread(), b_out = spread();
  weft::Graph a, b;  // one shape, different data
  build(a, a_in, a_out, 1.0);
  build(b, b_in, b_out, 3.0);
  // Rank 0 runs a first, the others b: each first run pairs with the other graph's.
  weft::Graph& first = session->rank() == 0 ? a : b;
  weft::Graph& second = session->rank() == 0 ? b : a;
  for (weft::Graph* g : {&first, &second}) {
    try {
      executor.run(*g).get();
      FAIL("twin graphs run first in different orders must be refused");
    } catch (const std::logic_error& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(contains(what, "began the first runs of different graphs: rank 0 runs graph "));
      CHECK(contains(what, "every rank must run its graphs for the first time in the same order"));
    }
  }
  // In one order everywhere, each graph exchanges its own padding.
  executor.run(a).get();
  executor.run(b).get();
  weft::Tensor<double, 1> a_in1({8}, 1, 64), a_out1({8}, 1, 64), b_in1({8}, 1, 64), b_out1({8}, 1, 64);
  weft::Graph a1, b1;
  build(a1, a_in1, a_out1, 1.0);
  build(b1, b_in1, b_out1, 3.0);
  executor.run(a1).get();
  executor.run(b1).get();
  CHECK(weft::test::local_blocks_equal(a_out, a_out1));
  CHECK(weft::test::local_blocks_equal(b_out, b_out1));
}

TEST_CASE("Mpi.run_counts_that_differ_fail_every_rank_at_the_same_pass") {
  weft::Executor executor(two_workers());
  weft::Tensor<double, 1> in = spread(), out = spread();
  weft::Graph g;
  build(g, in, out, 1.0);
  executor.run(g).get();  // run 1
  try {
    executor.run_n(g, session->rank() == 0 ? 3 : 5).get();  // run 2
    FAIL("run_n with different counts must fail");
  } catch (const std::logic_error& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(contains(what,
                   "the ranks disagree on the graph's passes: rank 0: pass 3 of run 2, then stops; rank"));
    CHECK(contains(what, ": pass 3 of run 2, then goes on"));
  }
  // The graph runs again, with counts that agree.
  executor.run_n(g, 2).get();
  weft::Tensor<double, 1> in1({8}, 1, 64), out1({8}, 1, 64);
  weft::Graph g1;
  build(g1, in1, out1, 1.0);
  executor.run(g1).get();
  CHECK(weft::test::local_blocks_equal(out, out1));
}

TEST_CASE("Mpi.run_until_predicates_that_differ_fail_every_rank_at_the_same_pass") {
  weft::Executor executor(two_workers());
  weft::Tensor<double, 1> in = spread(), out = spread();
  weft::Graph g;
  build(g, in, out, 1.0);
  // Asked before each pass: rank 0 stops after 2 passes, the others after 4.
  const int limit = session->rank() == 0 ? 2 : 4;
  int asked = 0;
  CHECK_THROWS_WITH_AS(executor.run_until(g, [&] { return asked++ >= limit; }).get(),
                       doctest::Contains("pass 2 of run 1, then stops"), std::logic_error);
  CHECK(asked == 3);  // before passes 1 and 2, and after pass 2
}

TEST_CASE("Mpi.a_rank_that_skips_a_run_leaves_the_others_an_error_after_the_pass_timeout") {
  weft::Executor executor(two_workers());
  weft::Tensor<double, 1> in = spread(), out = spread();
  weft::Graph g;
  build(g, in, out, 1.0);
  executor.run(g).get();  // every rank: the channel is open
  const auto limit = session->pass_timeout();
  session->set_pass_timeout(std::chrono::seconds(2));
  if (session->rank() != 0) {
    // Rank 0 returns early: the others hear nothing for this pass.
    const auto start = std::chrono::steady_clock::now();
    try {
      executor.run(g).get();
      FAIL("the run must time out");
    } catch (const std::runtime_error& e) {
      // Rank 0 first among the silent; with more ranks, others that timed
      // out at the same moment may be named too.
      const std::string what = e.what();
      CAPTURE(what);
      CHECK((contains(what, "waited 2 s in pass 1 of run 2 and heard nothing from rank 0 (") ||
             contains(what, "waited 2 s in pass 1 of run 2 and heard nothing from ranks 0, ")));
    }
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::seconds(2));
    // The channel is broken for good: later runs fail at once.
    CHECK_THROWS_WITH_AS(executor.run(g).get(), doctest::Contains("an earlier pass of this graph timed out"),
                         std::runtime_error);
  }
  session->set_pass_timeout(limit);
  CHECK_THROWS_AS(session->set_pass_timeout(std::chrono::duration<double>(-1.0)), std::invalid_argument);
}

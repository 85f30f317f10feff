// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Ranks that do not run the same thing (docs/distributed.md): twin graphs
// run first in different orders end with an error on every rank, never
// with swapped messages.
#include <doctest/doctest.h>

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

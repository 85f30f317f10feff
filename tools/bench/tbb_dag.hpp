// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A DAG as oneTBB's flow graph builds it: one continue_node per node, one
// edge per dependence, and a broadcast_node that starts the roots; the
// baseline of the work-DAG and graph benchmarks.
//
//   weft::bench::TbbDag dag(shape, probe);   // shape: n, for_each_successor, is_root
//   dag.run();                               // once; runs again without a reset
#pragma once

#include <cstddef>
#include <deque>

#include <oneapi/tbb/flow_graph.h>

namespace weft::bench {

class TbbDag {
 public:
  // Node i calls probe(i). Members are destroyed nodes first, graph last.
  template <class Shape, class Probe>
  TbbDag(const Shape& s, Probe& probe) : start_(graph_) {
    using tbb::flow::continue_msg;
    for (int i = 0; i < s.n; ++i) {
      nodes_.emplace_back(graph_, [&probe, i](const continue_msg&) {
        probe(i);
        return continue_msg();
      });
    }
    for (int i = 0; i < s.n; ++i) {
      auto& from = nodes_[static_cast<std::size_t>(i)];
      s.for_each_successor(i,
                           [&](int j) { tbb::flow::make_edge(from, nodes_[static_cast<std::size_t>(j)]); });
      if (s.is_root(i)) tbb::flow::make_edge(start_, from);
    }
  }

  // A continue_node resets its predecessor count when it fires, so the same
  // graph runs again without a reset.
  void run() {
    start_.try_put(tbb::flow::continue_msg());
    graph_.wait_for_all();
  }

 private:
  tbb::flow::graph graph_;
  tbb::flow::broadcast_node<tbb::flow::continue_msg> start_;
  std::deque<tbb::flow::continue_node<tbb::flow::continue_msg>> nodes_;  // never moves a node
};

}  // namespace weft::bench

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The work every DAG benchmark's nodes do, and the check that they did it:
// each node runs a tiny body the compiler cannot delete, counts its visits,
// and, in a verification run, takes a sequence number, so that after the
// runs every node is seen to have run exactly as often as expected and
// after each of its predecessors.
//
//   weft::bench::DagProbe<Shape> probe("work_dag", shape.n);
//   probe.reset(/*record_order=*/true);
//   run(shape, probe);                          // calls probe(i) per node
//   probe.check(shape, "weft", /*runs=*/1);     // exits 1 naming the first fault
//
// Shape needs `name`, `n` and `for_each_successor(i, f)`.
#pragma once

#include "bench.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace weft::bench {

template <class Shape>
class DagProbe {
 public:
  DagProbe(const char* benchmark, int n)
      : benchmark_(benchmark), visits_(static_cast<std::size_t>(n)), order_(static_cast<std::size_t>(n)) {}

  void operator()(int i) {
    do_not_optimize(i);
    clobber_memory();
    ++visits_[static_cast<std::size_t>(i)];
    if (record_order_) order_[static_cast<std::size_t>(i)] = next_.fetch_add(1, std::memory_order_relaxed);
  }

  // Called between runs only; the runtime's start and wait publish it.
  void reset(bool record_order) {
    std::fill(visits_.begin(), visits_.end(), 0);
    std::fill(order_.begin(), order_.end(), -1);
    next_.store(0, std::memory_order_relaxed);
    record_order_ = record_order;
  }

  // Every node ran `runs` times; after a verification run, every node also
  // took its sequence number after each of its predecessors. The relaxed
  // fetch_add is enough: read-modify-writes of one atomic follow one order
  // that agrees with happens-before, which the runtime's dependence
  // synchronisation must provide.
  void check(const Shape& s, const char* variant, int runs) const {
    for (int i = 0; i < s.n; ++i) {
      const int v = visits_[static_cast<std::size_t>(i)];
      if (v != runs) {
        fail(std::string(s.name) + ": " + variant + " ran node " + std::to_string(i) + " " +
             std::to_string(v) + " times in " + std::to_string(runs) + " runs, expected " +
             std::to_string(runs));
      }
    }
    if (!record_order_) return;
    for (int i = 0; i < s.n; ++i) {
      s.for_each_successor(i, [&](int j) {
        const auto before = order_[static_cast<std::size_t>(i)], after = order_[static_cast<std::size_t>(j)];
        if (before >= after) {
          fail(std::string(s.name) + ": " + variant + " ran node " + std::to_string(j) + " (sequence " +
               std::to_string(after) + ") before its predecessor " + std::to_string(i) + " (sequence " +
               std::to_string(before) + ")");
        }
      });
    }
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    std::fprintf(stderr, "%s: %s\n", benchmark_, message.c_str());
    std::exit(1);
  }

  const char* benchmark_;
  std::vector<int> visits_;
  std::vector<std::int64_t> order_;
  std::atomic<std::int64_t> next_{0};
  bool record_order_ = false;
};

}  // namespace weft::bench

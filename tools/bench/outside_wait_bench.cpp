// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Waiting from outside the pool: the main thread hands a little work to the
// workers and waits for it, over and over, so each round's time is mostly
// the hand-over and the wake-up of the waiting thread.
//
//   outside_wait.task_group    a TaskGroup of 8 callables, run and wait();
//                              against a tbb::task_group doing the same in an
//                              arena of as many threads (oneTBB's waiting
//                              thread works too).
//   outside_wait.wait_for_all  a 10-node graph run, then wait_for_all()
//                              (Taskflow's run-then-wait idiom); against the
//                              same run waited for through its future.
//   outside_wait.stencil_wait_for_all  100 runs of a 4-node heat step
//                              (boundary, padded split, boundary, padded
//                              split; 2 blocks) with run_n, then
//                              wait_for_all(); against the same runs waited
//                              for through run_n's future. Each split
//                              shares its rows, so the executor reports
//                              completions a waiter must sleep through.
//
// Every round's callables are counted and the counts checked, and the heat
// steps waited for both ways must leave the same field.
#include "bench.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <weft/graph/graph.hpp>
#include <weft/graph/tensor_access.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/task_group.hpp>
#include <weft/views/boundary_loader.hpp>
#include <weft/views/tensor.hpp>

namespace {

using weft::bench::Options;
using weft::bench::Reporter;

constexpr int kCallables = 8;

void check(const char* who, long visits, long expected) {
  if (visits != expected) {
    std::fprintf(stderr, "outside_wait: %s ran %ld callables, expected %ld\n", who, visits, expected);
    std::exit(1);
  }
}

void run_round_trip(const Options& opt, Reporter& out) {
  const int rounds = opt.quick ? 1'000 : 20'000;
  std::atomic<long> visits{0};
  const auto count = [&visits] { visits.fetch_add(1, std::memory_order_relaxed); };

  double weft_s = 0;
  {
    weft::Executor executor(weft::bench::cpu_only(opt.threads));
    const auto round = [&] {
      weft::TaskGroup group(executor);
      for (int k = 0; k < kCallables; ++k) group.run(count);
      group.wait();
    };
    round();  // warm-up: workers started
    visits = 0;
    weft_s = weft::bench::best_seconds(opt.repetitions, [&] {
      for (int r = 0; r < rounds; ++r) round();
    });
    check("weft", visits.load(), long{kCallables} * rounds * std::max(1, opt.repetitions));
  }

  double tbb_s = 0;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                              static_cast<std::size_t>(opt.threads));
    tbb::task_arena arena(opt.threads);
    tbb_s = arena.execute([&] {
      const auto round = [&] {
        tbb::task_group group;
        for (int k = 0; k < kCallables; ++k) group.run(count);
        group.wait();
      };
      round();
      visits = 0;
      const double s = weft::bench::best_seconds(opt.repetitions, [&] {
        for (int r = 0; r < rounds; ++r) round();
      });
      check("oneTBB", visits.load(), long{kCallables} * rounds * std::max(1, opt.repetitions));
      return s;
    });
  }

  const std::string params = "rounds=" + std::to_string(rounds) + " callables=" + std::to_string(kCallables) +
                             " threads=" + std::to_string(opt.threads);
  out.compare("outside_wait.task_group", params, "us/round", {"weft", weft_s * 1e6 / rounds},
              {"oneTBB", tbb_s * 1e6 / rounds});
}

void run_wait_for_all(const Options& opt, Reporter& out) {
  const int rounds = opt.quick ? 1'000 : 20'000;
  weft::Executor executor(weft::bench::cpu_only(opt.threads));
  std::atomic<long> visits{0};
  const auto count = [&visits] { visits.fetch_add(1, std::memory_order_relaxed); };
  weft::Graph g;  // a root, eight nodes beside each other, a join
  g.emplace(count);
  g.then(count);
  for (int k = 0; k < 7; ++k) g.emplace(count);
  g.then(count);
  executor.run(g).get();  // lowered once, outside the timers

  const long expected = 10L * rounds * std::max(1, opt.repetitions);
  visits = 0;
  const double all_s = weft::bench::best_seconds(opt.repetitions, [&] {
    for (int r = 0; r < rounds; ++r) {
      executor.run(g);
      executor.wait_for_all();
    }
  });
  check("wait_for_all", visits.load(), expected);
  visits = 0;
  const double future_s = weft::bench::best_seconds(opt.repetitions, [&] {
    for (int r = 0; r < rounds; ++r) executor.run(g).get();
  });
  check("future", visits.load(), expected);

  const std::string params =
      "rounds=" + std::to_string(rounds) + " nodes=10 threads=" + std::to_string(opt.threads);
  out.compare("outside_wait.wait_for_all", params, "us/run", {"weft wait_for_all", all_s * 1e6 / rounds},
              {"weft future", future_s * 1e6 / rounds});
}

// One explicit diffusion step at a cell.
constexpr auto diffuse = [](auto& in, auto& out) {
  *out = *in + 0.2 * (*in.offset(weft::dim_x, -1) + *in.offset(weft::dim_x, 1) + *in.offset(weft::dim_y, -1) +
                      *in.offset(weft::dim_y, 1) - 4.0 * *in);
};

void run_stencil_wait_for_all(const Options& opt, Reporter& out) {
  const std::size_t n = opt.quick ? 256 : 2048;
  const int runs = opt.quick ? 20 : 100;
  weft::Executor executor(weft::bench::cpu_only(opt.threads));
  weft::Tensor<double, 2> a({1, 2}, std::size_t{1}, n, n), b({1, 2}, std::size_t{1}, n, n);
  weft::Graph step;
  step.boundary(a, weft::FirstOrderExtrapolation{});
  step.then_split(diffuse, weft::concurrent_padded_access(a), b);
  step.then_boundary(b, weft::FirstOrderExtrapolation{});
  step.then_split(diffuse, weft::concurrent_padded_access(b), a);
  executor.run_n(step, 2).get();  // lowered and the pages touched, outside the timers

  // Both variants run the same steps from the same field, so their results
  // must agree bit for bit.
  const auto field = [&] {
    std::vector<double> cells;
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < n; ++i) cells.push_back(a(i, j));
    return cells;
  };
  const auto reset = [&] {
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < n; ++i) a(i, j) = (i / 64 + j / 64) % 2 == 0 ? 1.0 : 0.0;
  };
  double all_s = std::numeric_limits<double>::infinity(), future_s = all_s;
  std::vector<double> by_all, by_future;
  for (int r = 0; r < std::max(1, opt.repetitions); ++r) {
    reset();
    all_s = std::min(all_s, weft::bench::seconds([&] {
                       executor.run_n(step, runs);
                       executor.wait_for_all();
                     }));
    by_all = field();
    reset();
    future_s = std::min(future_s, weft::bench::seconds([&] { executor.run_n(step, runs).get(); }));
    by_future = field();
    if (by_all != by_future) {
      std::fprintf(stderr, "outside_wait: the heat steps waited for two ways differ\n");
      std::exit(1);
    }
  }
  const std::string params = "cells=" + std::to_string(n) + "x" + std::to_string(n) +
                             " runs=" + std::to_string(runs) + " threads=" + std::to_string(opt.threads);
  out.compare("outside_wait.stencil_wait_for_all", params, "ms/run",
              {"weft wait_for_all", all_s * 1e3 / runs}, {"weft future", future_s * 1e3 / runs});
}

}  // namespace

WEFT_BENCHMARK(outside_wait_task_group) { run_round_trip(opt, out); }
WEFT_BENCHMARK(outside_wait_for_all) { run_wait_for_all(opt, out); }
WEFT_BENCHMARK(outside_wait_stencil) { run_stencil_wait_for_all(opt, out); }

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
//
// Every round's callables are counted and the counts checked.
#include "bench.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <weft/graph/graph.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/task_group.hpp>

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

}  // namespace

WEFT_BENCHMARK(outside_wait_task_group) { run_round_trip(opt, out); }
WEFT_BENCHMARK(outside_wait_for_all) { run_wait_for_all(opt, out); }

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The task-DAG's failure path under load: trees of parents that respawn on
// their children (one child directly, several through when_all), with
// leaves failing at random, followers spawned after a child (which must
// not run when it failed), and parents that catch their children's failures
// or let them through. Every result and every wait(scheduler) is checked
// against the same tree evaluated serially.
#include <weft/runtime/task_scheduler.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <vector>

#include "../executor_configs.hpp"
#include "stress_scale.hpp"

namespace {

using Pool = weft::MemoryPool<weft::HostSpace>;

constexpr long kFallback = 1000;  // what a catching parent counts for a failed child
constexpr int kMaxChildren = 3;

std::uint64_t mix(std::uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// What a node of the tree does, from its seed alone.
struct Shape {
  bool leaf_fails;
  long leaf_value;
  int children;  // 1 to kMaxChildren
  bool catches;
  bool follower;  // also spawns a task after its first child
  explicit Shape(std::uint64_t seed) {
    const std::uint64_t h = mix(seed);
    leaf_fails = h % 4 == 0;
    leaf_value = static_cast<long>((h >> 8) % 100);
    children = 1 + static_cast<int>((h >> 16) % kMaxChildren);
    catches = (h >> 24) % 2 == 0;
    follower = (h >> 28) % 2 == 0;
  }
};

std::uint64_t child_seed(std::uint64_t seed, int i) {
  return mix(seed * 8 + static_cast<std::uint64_t>(i) + 1);
}

struct Outcome {
  bool fails = false;
  long value = 0;
};

// The serial evaluation every run is checked against. A follower adds one
// to its child's value, or fails with it.
Outcome expected(std::uint64_t seed, int depth) {
  const Shape shape(seed);
  if (depth == 0) return {shape.leaf_fails, shape.leaf_fails ? 0 : shape.leaf_value};
  long sum = 0;
  bool any_failed = false;
  for (int i = 0; i < shape.children; ++i) {
    const Outcome child = expected(child_seed(seed, i), depth - 1);
    const int copies = i == 0 && shape.follower ? 2 : 1;  // the follower mirrors child 0
    if (child.fails) {
      any_failed = true;
      sum += copies * kFallback;
    } else {
      sum += child.value + (copies == 2 ? child.value + 1 : 0);
    }
  }
  if (any_failed && !shape.catches) return {true, 0};
  return {false, sum};
}

struct Follower {
  using value_type = long;
  weft::Future<long> before;
  std::atomic<long>* ran_after_failure;
  void operator()(weft::TaskMember&, long& out) {
    try {
      out = before.get() + 1;
    } catch (...) {
      ran_after_failure->fetch_add(1);  // spawned after a failed task: must not run
      throw;
    }
  }
};

struct Node {
  using value_type = long;
  weft::TaskScheduler sched;
  std::uint64_t seed;
  int depth;
  std::atomic<long>* ran_after_failure;
  int round = 0;
  weft::Future<long> parts[kMaxChildren + 1] = {};  // the children, then the follower

  void operator()(weft::TaskMember&, long& out) {
    const Shape shape(seed);
    if (depth == 0) {
      if (shape.leaf_fails) throw std::runtime_error("leaf failed on purpose");
      out = shape.leaf_value;
      return;
    }
    const int count = shape.children + (shape.follower ? 1 : 0);
    if (round++ == 0) {
      for (int i = 0; i < shape.children; ++i) {
        parts[i] = weft::task_spawn(weft::TaskSingle(sched, weft::TaskPriority::High),
                                    Node{sched, child_seed(seed, i), depth - 1, ran_after_failure});
      }
      if (shape.follower) {
        parts[shape.children] =
            weft::task_spawn(weft::TaskSingle(parts[0]), Follower{parts[0], ran_after_failure});
      }
      for (int i = 0; i < count; ++i) {
        if (parts[i].is_null()) throw std::runtime_error("stress: the pool is exhausted");
      }
      if (count == 1) {
        weft::TaskScheduler::respawn(this, parts[0], weft::TaskPriority::High);
      } else {
        weft::TaskScheduler::respawn(this, sched.when_all(parts, static_cast<std::size_t>(count)));
      }
      return;
    }
    // Looks at every part, so that every failure below is observed; then
    // either counts the fallback for each failed one or fails with the first.
    long sum = 0;
    std::exception_ptr first;
    for (int i = 0; i < count; ++i) {
      try {
        sum += parts[i].get();
      } catch (const std::runtime_error&) {
        if (!first) first = std::current_exception();
        sum += kFallback;
      }
    }
    if (first && !shape.catches) std::rethrow_exception(first);
    out = sum;
  }
};

// Whether `root` completed as `want` says (its get() observes a failure).
bool completed_as(const weft::Future<long>& root, const Outcome& want) {
  try {
    const long got = root.get();
    return !want.fails && got == want.value;
  } catch (const std::runtime_error&) {
    return want.fails;
  }
}

void run_failing_trees(int threads) {
  weft::Executor executor(weft::test::cpu_only(threads));
  Pool pool(weft::HostSpace{}, 64u << 20);
  weft::TaskScheduler sched(executor, pool);
  sched.track_memory(true);
  std::atomic<long> ran_after_failure{0};
  const long rounds = weft::test::scaled(40);
  const int trees = static_cast<int>(weft::test::scaled(200, 2));
  constexpr int kDepth = 3;
  long mismatches = 0, wrong_waits = 0;
  for (long round = 0; round < rounds; ++round) {
    std::vector<weft::Future<long>> roots;
    std::vector<std::uint64_t> seeds;
    for (int t = 0; t < trees; ++t) {
      const std::uint64_t seed = mix(static_cast<std::uint64_t>(round * trees + t + threads * 1000003L));
      weft::Future<long> root =
          weft::host_spawn(weft::TaskSingle(sched), Node{sched, seed, kDepth, &ran_after_failure});
      REQUIRE_FALSE(root.is_null());
      roots.push_back(std::move(root));
      seeds.push_back(seed);
    }
    // The host observes the even trees now, drops the futures of every
    // third odd tree, and keeps the rest unobserved: wait() must report a
    // failure exactly when an unobserved tree failed.
    bool unobserved_failure = false;
    for (int t = 0; t < trees; ++t) {
      const Outcome want = expected(seeds[static_cast<std::size_t>(t)], kDepth);
      weft::Future<long>& root = roots[static_cast<std::size_t>(t)];
      if (t % 2 == 0) {
        if (!completed_as(root, want)) ++mismatches;
      } else {
        unobserved_failure = unobserved_failure || want.fails;
        if (t % 3 == 0) root = weft::Future<long>();
      }
    }
    bool reported = false;
    try {
      weft::wait(sched);
    } catch (const std::runtime_error&) {
      reported = true;
    }
    if (reported != unobserved_failure) ++wrong_waits;
    // Every tree is complete now; the kept ones read as expected.
    for (int t = 1; t < trees; t += 2) {
      const weft::Future<long>& root = roots[static_cast<std::size_t>(t)];
      if (root.is_null()) continue;
      const Outcome want = expected(seeds[static_cast<std::size_t>(t)], kDepth);
      if (!completed_as(root, want)) ++mismatches;
    }
    CHECK_NOTHROW(weft::wait(sched));  // everything was reported or observed
  }
  CHECK(mismatches == 0);
  CHECK(wrong_waits == 0);
  CHECK(ran_after_failure.load() == 0);
  CHECK(sched.live_blocks() == 0);  // failed tasks went back with their futures
}

}  // namespace

TEST_CASE("TaskScheduler.stress.parents_handle_random_child_failures.2threads") { run_failing_trees(2); }
TEST_CASE("TaskScheduler.stress.parents_handle_random_child_failures.3threads") { run_failing_trees(3); }
TEST_CASE("TaskScheduler.stress.parents_handle_random_child_failures.4threads") { run_failing_trees(4); }

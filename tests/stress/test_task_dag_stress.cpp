// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The dynamic task-DAG under load: several tasks at once build random DAGs
// of tasks with random dependences (single tasks and when-alls), priorities
// and respawns; every task must run after all it depends on.
#include <weft/runtime/task_scheduler.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <random>
#include <vector>

#include "stress_scale.hpp"

namespace {

struct Node {
  std::vector<int> depends_on;  // indices of earlier nodes of the same DAG
  int respawns = 0;
  int finished = 0;  // plain int: TSan checks the ordering edges to readers
};

struct NodeTask {
  Node* nodes;
  int self;
  std::atomic<long>* violations;
  int round = 0;
  void operator()(weft::TaskMember&) {
    for (int d : nodes[self].depends_on) {
      if (nodes[d].finished != 1) violations->fetch_add(1, std::memory_order_relaxed);
    }
    if (round++ < nodes[self].respawns) {
      weft::TaskScheduler::respawn(this, weft::TaskScheduler{}, weft::TaskPriority::Low);
      return;
    }
    nodes[self].finished = 1;
  }
};

// Spawns one random DAG; its futures stay on this builder.
struct Builder {
  weft::TaskScheduler sched;
  Node* nodes;
  int count;
  unsigned seed;
  std::atomic<long>* violations;
  std::atomic<long>* spawn_failures;
  void operator()(weft::TaskMember&) {
    std::mt19937 rng(seed);
    std::vector<weft::Future<>> futures(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
      Node& node = nodes[i];
      node.respawns = static_cast<int>(rng() % 4 == 0);
      const auto priority = static_cast<weft::TaskPriority>(rng() % 3);
      const int deps = i == 0 ? 0 : static_cast<int>(rng() % 4);
      for (int d = 0; d < deps; ++d)
        node.depends_on.push_back(static_cast<int>(rng() % static_cast<unsigned>(i)));
      weft::Future<> dependence;
      if (deps == 1) {
        dependence = futures[static_cast<std::size_t>(node.depends_on[0])];
      } else if (deps > 1) {
        dependence = sched.when_all(node.depends_on.size(), [&](std::size_t k) {
          return futures[static_cast<std::size_t>(node.depends_on[k])];
        });
      }
      NodeTask task{nodes, i, violations};
      futures[static_cast<std::size_t>(i)] =
          dependence.is_null() && deps > 0
              ? weft::Future<>()
              : weft::task_spawn(
                    deps > 0 ? weft::TaskSingle(dependence, priority) : weft::TaskSingle(sched, priority),
                    task);
      if (futures[static_cast<std::size_t>(i)].is_null()) spawn_failures->fetch_add(1);
    }
  }
};

}  // namespace

TEST_CASE("TaskScheduler.stress.random_dynamic_dags.2threads") {
  weft::ExecutorConfig cfg;
  cfg.cpu_workers = 2;
  cfg.gpu_workers = 0;
  weft::Executor executor(cfg);
  weft::MemoryPool<weft::HostSpace> pool(weft::HostSpace{}, 32u << 20);
  weft::TaskScheduler sched(executor, pool);
  const int dags = 8;
  const int per_dag = static_cast<int>(weft::test::scaled(4000, 4));
  for (int round = 0; round < 3; ++round) {
    std::vector<std::unique_ptr<Node[]>> graphs;
    std::atomic<long> violations{0}, spawn_failures{0};
    for (int g = 0; g < dags; ++g) {
      graphs.push_back(std::make_unique<Node[]>(static_cast<std::size_t>(per_dag)));
      weft::host_spawn(weft::TaskSingle(sched),
                       Builder{sched, graphs.back().get(), per_dag, static_cast<unsigned>(round * 100 + g),
                               &violations, &spawn_failures});
    }
    weft::wait(sched);
    CHECK(spawn_failures.load() == 0);
    CHECK(violations.load() == 0);
    long finished = 0;
    for (auto& graph : graphs) {
      for (int i = 0; i < per_dag; ++i) finished += graph[static_cast<std::size_t>(i)].finished;
    }
    CHECK(finished == static_cast<long>(dags) * per_dag);
  }
  CHECK(pool.get_usage_statistics().consumed_blocks == 0);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Device plans (device_plan.hpp): how a graph's device nodes group into
// segments, one launch per device each. Plans are plain data, so these
// tests need no GPU: on_gpu nodes on any device number stand for kernels.
#include <weft/graph/graph.hpp>
#include <weft/views/tensor.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "../executor_configs.hpp"
#include "../test_support.hpp"

namespace {

using NodeId = weft::Graph::NodeId;

void queue_nothing(weft::GpuStream /*stream*/, int /*value*/) {}

// A node with no edges yet: emplace() with no level before it adds none.
NodeId kernel(weft::Graph& g, int device) { return g.emplace(weft::on_gpu(device, queue_nothing, 0)).last(); }
NodeId host(weft::Graph& g) {
  return g.emplace([] {}).last();
}

// A random graph of 2 to max_nodes - 1 nodes: about a quarter host nodes
// (with `conditions`, a third of those condition nodes, whose edges out are
// weak), the rest kernels on up to `devices_at_most` devices, and each
// forward edge with a chance of 1 in `edge_one_in`. `device` gets each
// node's device (-1: a host node).
weft::Graph random_graph(std::mt19937& rng, int max_nodes, int devices_at_most, unsigned edge_one_in,
                         std::vector<int>& device, bool conditions = false) {
  weft::Graph g;
  const int n = 2 + static_cast<int>(rng() % static_cast<unsigned>(max_nodes - 2));
  const int devices = 1 + static_cast<int>(rng() % static_cast<unsigned>(devices_at_most));
  device.assign(static_cast<std::size_t>(n), -1);
  for (int i = 0; i < n; ++i) {
    if (rng() % 4 == 0) {
      if (conditions && rng() % 3 == 0)
        g.emplace(weft::make_branch([] { return 0; }));
      else
        host(g);
    } else {
      device[static_cast<std::size_t>(i)] = static_cast<int>(rng() % static_cast<unsigned>(devices));
      kernel(g, device[static_cast<std::size_t>(i)]);
    }
  }
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (rng() % edge_one_in == 0) g.add_edge(i, j);
  return g;
}

// Whether the units (segments, and host nodes each on its own) and the
// edges between them form a DAG, and every edge between two segments goes
// from an earlier to a later one in launch order.
bool units_are_acyclic_in_launch_order(const weft::Graph& g, const weft::DevicePlan& plan) {
  const std::size_t segments = plan.segments.size();
  auto unit = [&](NodeId id) {
    const int s = plan.segment_of[static_cast<std::size_t>(id)];
    return s >= 0 ? static_cast<std::size_t>(s) : segments + static_cast<std::size_t>(id);
  };
  std::vector<std::set<std::size_t>> next(segments + g.size());
  for (const weft::Graph::Edge& e : g.edges()) {
    const std::size_t a = unit(e.first), b = unit(e.second);
    if (a == b) continue;
    if (a < segments && b < segments && a > b) return false;
    next[a].insert(b);
  }
  std::vector<int> state(next.size(), 0);  // 0 unvisited, 1 on the path, 2 done
  std::function<bool(std::size_t)> acyclic_from = [&](std::size_t u) {
    state[u] = 1;
    for (const std::size_t v : next[u]) {
      if (state[v] == 1) return false;
      if (state[v] == 0 && !acyclic_from(v)) return false;
    }
    state[u] = 2;
    return true;
  };
  for (std::size_t u = 0; u < next.size(); ++u)
    if (state[u] == 0 && !acyclic_from(u)) return false;
  return true;
}

}  // namespace

TEST_CASE("DevicePlan.a_graph_without_device_nodes_has_no_segments") {
  weft::Graph g;
  g.emplace([] {}).then([] {}).then([] {});
  const weft::DevicePlan plan = g.device_plan();
  CHECK(plan.segments.empty());
  CHECK(plan.segment_of == std::vector<int>{-1, -1, -1});
  CHECK(plan.counts().launches == 0);
}

TEST_CASE("DevicePlan.kernels_between_host_nodes_make_one_segment_per_device") {
  weft::Graph g;
  g.emplace([] {}).named("before");
  g.then(weft::on_gpu(0, queue_nothing, 1), weft::on_gpu(1, queue_nothing, 2)).named("first");
  g.then(weft::on_gpu(0, queue_nothing, 3), weft::on_gpu(1, queue_nothing, 4)).named("second");
  g.then([] {}).named("after");
  const weft::DevicePlan plan = g.device_plan();
  // then() joins every node of a level to every one of the next, so the
  // second level waits for both devices' first kernels: a device change.
  REQUIRE(plan.segments.size() == 4);
  CHECK(plan.devices() == std::vector<int>{0, 1});
  CHECK(plan.counts(0).launches == 2);
  CHECK(plan.counts(1).launches == 2);
  CHECK(plan.counts(0).waits == 1);
  CHECK(plan.counts(0).records == 1);
  CHECK(plan.counts(0).callbacks == 1);  // only the second level feeds "after"
  CHECK(units_are_acyclic_in_launch_order(g, plan));
}

TEST_CASE("DevicePlan.a_chain_on_one_device_is_one_launch_whatever_its_length") {
  for (const int length : {1, 2, 7, 100}) {
    CAPTURE(length);
    weft::Graph g;
    host(g);
    NodeId last = 0;
    for (int i = 0; i < length; ++i) {
      const NodeId k = kernel(g, 3);
      g.add_edge(last, k);
      last = k;
    }
    const NodeId end = host(g);
    g.add_edge(last, end);
    const weft::DevicePlan plan = g.device_plan();
    REQUIRE(plan.segments.size() == 1);
    const weft::DeviceSegment& s = plan.segments[0];
    CHECK(s.device == 3);
    CHECK(s.phase == 1);  // after one host node
    CHECK(s.round == 0);
    CHECK(s.nodes.size() == static_cast<std::size_t>(length));
    CHECK(s.callback);
    CHECK_FALSE(s.records);
    CHECK(plan.counts(3).launches == 1);
    CHECK(plan.counts(3).nodes == length);
  }
}

TEST_CASE("DevicePlan.a_host_node_between_kernels_splits_their_segment") {
  weft::Graph g;
  const NodeId a = kernel(g, 0);
  const NodeId h = host(g);
  const NodeId b = kernel(g, 0);
  const NodeId c = kernel(g, 0);  // beside the host node: stays with a
  g.add_edge(a, h);
  g.add_edge(h, b);
  g.add_edge(a, c);
  const weft::DevicePlan plan = g.device_plan();
  REQUIRE(plan.segments.size() == 2);
  CHECK(plan.segment_of[static_cast<std::size_t>(a)] == 0);
  CHECK(plan.segment_of[static_cast<std::size_t>(c)] == 0);
  CHECK(plan.segment_of[static_cast<std::size_t>(b)] == 1);
  CHECK(plan.segments[0].callback);  // h and the pass's end (c is a sink) wait for it
  CHECK(plan.segments[1].phase == 1);
  CHECK(plan.counts(0).launches == 2);
}

TEST_CASE("DevicePlan.two_devices_that_wait_for_each_other_never_form_a_cycle_of_segments") {
  // a (device 0) -> b (device 1) and x (device 1) -> y (device 0): grouping
  // by device alone would put a and y in one segment and b and x in
  // another, each waiting for the other.
  weft::Graph g;
  const NodeId a = kernel(g, 0);
  const NodeId b = kernel(g, 1);
  const NodeId x = kernel(g, 1);
  const NodeId y = kernel(g, 0);
  g.add_edge(a, b);
  g.add_edge(x, y);
  const weft::DevicePlan plan = g.device_plan();
  CHECK(plan.segments.size() == 4);
  CHECK(plan.segments[static_cast<std::size_t>(plan.segment_of[static_cast<std::size_t>(b)])].waits_for ==
        std::vector<int>{plan.segment_of[static_cast<std::size_t>(a)]});
  CHECK(units_are_acyclic_in_launch_order(g, plan));
}

TEST_CASE("DevicePlan.a_halo_exchange_between_devices_starts_a_round") {
  // Per device d: fill(d) -> copy into d (after both neighbours' fills) -> sweep(d).
  constexpr int kDevices = 4;
  weft::Graph g;
  std::vector<NodeId> fill, copy, sweep;
  for (int d = 0; d < kDevices; ++d) fill.push_back(kernel(g, d));
  for (int d = 0; d < kDevices; ++d) {
    copy.push_back(kernel(g, d));
    for (int from = d - 1; from <= d + 1; ++from)
      if (from >= 0 && from < kDevices) g.add_edge(fill[static_cast<std::size_t>(from)], copy.back());
    sweep.push_back(kernel(g, d));
    g.add_edge(copy.back(), sweep.back());
  }
  const weft::DevicePlan plan = g.device_plan();
  for (int d = 0; d < kDevices; ++d) {
    CAPTURE(d);
    const weft::DevicePlanCounts c = plan.counts(d);
    CHECK(c.launches == 2);  // the fill, then the copy and the sweep
    CHECK(c.records == 1);
    CHECK(c.waits == (d == 0 || d == kDevices - 1 ? 1 : 2));
    CHECK(c.callbacks == 1);
    const auto ds = static_cast<std::size_t>(d);
    CHECK(plan.segment_of[static_cast<std::size_t>(copy[ds])] ==
          plan.segment_of[static_cast<std::size_t>(sweep[ds])]);
    CHECK(
        plan.segments[static_cast<std::size_t>(plan.segment_of[static_cast<std::size_t>(copy[ds])])].round ==
        1);
  }
  CHECK(units_are_acyclic_in_launch_order(g, plan));
}

TEST_CASE("DevicePlan.two_choices_of_a_condition_never_share_a_segment") {
  // start (device 0) -> which (a condition) => left -> left_next, or right.
  weft::Graph g;
  const NodeId start = kernel(g, 0);
  const NodeId which = g.emplace(weft::make_branch([] { return 0; })).named("which").last();
  const NodeId left = kernel(g, 0);
  const NodeId right = kernel(g, 0);
  const NodeId left_next = kernel(g, 0);
  g.add_edge(start, which);
  g.add_edge(which, left);
  g.add_edge(which, right);
  g.add_edge(left, left_next);
  const weft::DevicePlan plan = g.device_plan();
  const auto seg = [&](NodeId id) { return plan.segment_of[static_cast<std::size_t>(id)]; };
  REQUIRE(plan.segments.size() == 3);
  CHECK(seg(left) != seg(right));
  CHECK(seg(left) == seg(left_next));  // what follows a choice stays with it
  CHECK(seg(start) == 0);              // launched first: the condition node waits for it
  const weft::DeviceSegment& chosen = plan.segments[static_cast<std::size_t>(seg(left))];
  CHECK(chosen.phase == 1);  // after the condition node, a host node
  CHECK(chosen.choice == left);
  CHECK(plan.segments[static_cast<std::size_t>(seg(right))].choice == right);
  CHECK(plan.segments[0].choice == -1);
  // A choice runs only when taken: it calls back itself and is in no
  // device's chain, which holds only the segments every pass runs.
  for (const int s : {seg(left), seg(right)}) {
    CHECK(plan.segments[static_cast<std::size_t>(s)].callback);
    CHECK(plan.segments[static_cast<std::size_t>(s)].previous == -1);
  }
  CHECK(plan.segments[0].callback);  // the condition node waits for it
}

TEST_CASE("DevicePlan.a_loop_through_a_condition_node_plans_its_body_as_a_choice") {
  // init -> body -> again? => body (loops back) or done, all on device 1.
  weft::Graph g;
  const NodeId init = kernel(g, 1);
  const NodeId body = kernel(g, 1);
  const NodeId again = g.emplace(weft::make_branch([] { return 1; })).named("again?").last();
  const NodeId done = kernel(g, 1);
  g.add_edge(init, body);
  g.add_edge(body, again);
  g.add_edge(again, body);  // weak, and back: it orders nothing
  g.add_edge(again, done);  // weak, forward: done runs after the condition
  const weft::DevicePlan plan = g.device_plan();
  const auto seg = [&](NodeId id) {
    return plan.segments[static_cast<std::size_t>(plan.segment_of[static_cast<std::size_t>(id)])];
  };
  CHECK(plan.segments.size() == 3);
  CHECK(seg(init).phase == 0);
  CHECK(seg(body).phase == 0);
  CHECK(seg(body).choice == body);  // entered again from the condition node
  CHECK(seg(done).phase == 1);
  CHECK(seg(done).choice == done);
  CHECK(plan.segment_of[static_cast<std::size_t>(init)] < plan.segment_of[static_cast<std::size_t>(body)]);
  CHECK(plan.segment_of[static_cast<std::size_t>(body)] < plan.segment_of[static_cast<std::size_t>(done)]);
}

TEST_CASE("DevicePlan.random_graphs_keep_every_edge_and_contract_to_a_dag") {
  std::mt19937 rng(20261129);
  for (int trial = 0; trial < 200; ++trial) {
    CAPTURE(trial);
    std::vector<int> device;
    const weft::Graph g = random_graph(rng, 42, 4, 6, device, true);
    const int n = static_cast<int>(g.size());
    const int devices = 4;
    const weft::DevicePlan plan = g.device_plan();
    REQUIRE(plan.segment_of.size() == static_cast<std::size_t>(n));
    std::size_t planned = 0;
    for (std::size_t s = 0; s < plan.segments.size(); ++s) {
      const weft::DeviceSegment& seg = plan.segments[s];
      planned += seg.nodes.size();
      for (const NodeId id : seg.nodes) {
        CHECK(device[static_cast<std::size_t>(id)] == seg.device);
        CHECK(plan.segment_of[static_cast<std::size_t>(id)] == static_cast<int>(s));
      }
    }
    std::size_t device_nodes = 0;
    for (const int d : device) device_nodes += d >= 0 ? 1 : 0;
    CHECK(planned == device_nodes);
    for (int i = 0; i < n; ++i)
      CHECK((plan.segment_of[static_cast<std::size_t>(i)] < 0) == (device[static_cast<std::size_t>(i)] < 0));
    // Every edge between segments of two devices is an event wait.
    for (const weft::Graph::Edge& e : g.edges()) {
      const int a = plan.segment_of[static_cast<std::size_t>(e.first)];
      const int b = plan.segment_of[static_cast<std::size_t>(e.second)];
      if (a < 0 || b < 0) continue;
      if (a == b) {  // the segment's order keeps the edge
        const std::vector<NodeId>& order = plan.segments[static_cast<std::size_t>(a)].nodes;
        CHECK(std::find(order.begin(), order.end(), e.first) <
              std::find(order.begin(), order.end(), e.second));
        continue;
      }
      const weft::DeviceSegment& later = plan.segments[static_cast<std::size_t>(b)];
      if (plan.segments[static_cast<std::size_t>(a)].device == later.device) continue;
      CHECK(std::count(later.waits_for.begin(), later.waits_for.end(), a) == 1);
      CHECK(plan.segments[static_cast<std::size_t>(a)].records);
    }
    // A device's segments every pass runs follow each other, and its last
    // one calls back; a choice's segment calls back and follows none.
    for (std::size_t s = 0; s < plan.segments.size(); ++s) {
      if (plan.segments[s].choice >= 0) {
        CHECK(plan.segments[s].callback);
        CHECK(plan.segments[s].previous == -1);
        continue;
      }
      int previous = -1;
      bool last = true;
      for (std::size_t t = 0; t < plan.segments.size(); ++t) {
        if (plan.segments[t].device != plan.segments[s].device || plan.segments[t].choice >= 0) continue;
        if (t < s) previous = static_cast<int>(t);
        if (t > s) last = false;
      }
      CHECK(plan.segments[s].previous == previous);
      if (last) CHECK(plan.segments[s].callback);
    }
    // A host node hears from the last segment every pass runs of each
    // device it waits for (and from every choice's, checked above).
    for (int h = 0; h < n; ++h) {
      if (device[static_cast<std::size_t>(h)] >= 0) continue;
      std::vector<int> latest(static_cast<std::size_t>(devices), -1);
      for (const weft::Graph::Edge& e : g.edges()) {
        const int a = plan.segment_of[static_cast<std::size_t>(e.first)];
        if (e.second != h || a < 0 || plan.segments[static_cast<std::size_t>(a)].choice >= 0) continue;
        int& l = latest[static_cast<std::size_t>(plan.segments[static_cast<std::size_t>(a)].device)];
        l = std::max(l, a);
      }
      for (const int l : latest)
        if (l >= 0) CHECK(plan.segments[static_cast<std::size_t>(l)].callback);
    }
    CHECK(units_are_acyclic_in_launch_order(g, plan));
  }
}

TEST_CASE("DevicePlan.describe_prints_one_line_per_segment") {
  weft::Graph g;
  const NodeId a = kernel(g, 0);
  const NodeId b = kernel(g, 1);
  g.add_edge(a, b);
  CHECK(g.device_plan().describe() ==
        "segment 0: device 0 phase 0 round 0: 1 node, records, callback\n"
        "segment 1: device 1 phase 0 round 1: 1 node, waits for 0, callback\n");
}

TEST_CASE("DevicePlan.a_cycle_is_named_as_validate_names_it") {
  weft::Graph g;
  g.emplace([] {}).named("a");
  g.then(weft::on_gpu(0, queue_nothing, 1)).named("b");
  g.add_edge("b", "a");
  CHECK_THROWS_WITH_AS((void)g.device_plan(), doctest::Contains("has a cycle: 'b' -> 'a' -> 'b'"),
                       std::invalid_argument);
}

TEST_CASE("DevicePlan.the_host_interpreter_runs_tensor_operations_segment_by_segment") {
  // A split, a reduction (its finish is a host node) and a split that
  // reads the reduction: on 4 virtual devices, 2 segments per device.
  constexpr std::size_t size = 4099;
  weft::Tensor<double, 1> x({4}, size);
  auto total = weft::make_reduction_result<double>(0.0);
  double seen = 0.0;
  weft::Graph g;
  g.split([](auto& it) { *it = 1.0; }, x).then_reduce(x, total, weft::SumReducer());
  g.then([&] { seen = total.value(); });
  g.then_split([](auto& it, const double* sum) { *it += *sum; }, x, &seen);
  const weft::DevicePlan plan = g.device_plan();
  REQUIRE(plan.devices() == std::vector<int>{0, 1, 2, 3});
  for (const int d : plan.devices()) CHECK(plan.counts(d).launches == 2);
  const weft::test::ScopedVariable interpret("WEFT_GPU_PLAN", "interpret");
  weft::Executor executor(weft::test::with_virtual_devices(2, 4));
  struct CountSegments : weft::Observer {
    std::atomic<int> segments{0};
    void on_node_begin(const weft::NodeEvent& e) noexcept override {
      if (std::string_view(e.name).starts_with("segment ")) segments.fetch_add(1, std::memory_order_relaxed);
    }
  };
  auto counter = std::make_shared<CountSegments>();
  executor.attach(counter);
  executor.run(g).wait().get();
  executor.detach(counter);
  CHECK(counter->segments.load() == 8);  // the jobs were the plan's segments
  CHECK(seen == static_cast<double>(size));
  for (std::size_t i = 0; i < size; ++i) REQUIRE(x(i) == 1.0 + static_cast<double>(size));
}

TEST_CASE("DevicePlan.a_kernel_that_throws_fails_the_run_through_its_segment") {
  weft::Tensor<double, 1> x({2}, 100);
  weft::Graph g;
  g.split(
      [](auto& it) {
        *it = 1.0;
        throw std::runtime_error("kernel refused its cell");
      },
      x);
  const weft::test::ScopedVariable interpret("WEFT_GPU_PLAN", "interpret");
  weft::Executor executor(weft::test::with_virtual_devices(2, 2));
  CHECK_THROWS_WITH_AS(executor.run(g).wait().get(), doctest::Contains("kernel refused its cell"),
                       std::runtime_error);
}

TEST_CASE("DevicePlan.an_unknown_plan_mode_is_refused_by_name") {
  weft::Tensor<double, 1> x({2}, 100);
  weft::Graph g;
  g.split([](auto& it) { *it = 0.0; }, x);
  const weft::test::ScopedVariable bogus("WEFT_GPU_PLAN", "cuda-please");
  weft::Executor executor(weft::test::with_virtual_devices(1, 2));
  CHECK_THROWS_WITH_AS(executor.run(g), doctest::Contains("WEFT_GPU_PLAN='cuda-please': expected off"),
                       std::invalid_argument);
}

namespace {

// A model of how the CUDA backend will launch a plan, to check the plan's
// records, waits, callbacks and `previous` under every interleaving:
// - the work-DAG launches a unit once the units before it completed (the
//   graph's edges between units, plus each segment's `previous`);
// - launching a segment queues it on its device's stream; it completes for
//   the work-DAG at once, or, with a callback, once the stream ran it;
// - a stream runs its head once the segments it waits for ran; an event
//   wait binds to the producer's record at launch, so the producer must
//   have been launched first;
// - a host node runs some time after its launch.
// Returns "" when every edge of the graph saw its source finish before its
// target started and the pass ended after every segment ran.
std::string launch_in_random_order(const weft::Graph& g, const weft::DevicePlan& plan, std::mt19937& rng) {
  const std::size_t segments = plan.segments.size(), n = g.size();
  auto unit = [&](NodeId id) {
    const int s = plan.segment_of[static_cast<std::size_t>(id)];
    return s >= 0 ? static_cast<std::size_t>(s) : segments + static_cast<std::size_t>(id);
  };
  const std::size_t units = segments + n;
  std::vector<std::set<std::size_t>> after(units);
  for (const weft::Graph::Edge& e : g.edges())
    if (unit(e.first) != unit(e.second)) after[unit(e.first)].insert(unit(e.second));
  for (std::size_t s = 0; s < segments; ++s)
    if (plan.segments[s].previous >= 0) after[static_cast<std::size_t>(plan.segments[s].previous)].insert(s);
  std::vector<int> pending(units, 0);
  for (const auto& next : after)
    for (const std::size_t b : next) ++pending[b];
  // Units in use: every segment, and the host nodes (a device node's
  // number among the host units stands for nothing).
  std::vector<bool> used(units, true);
  for (std::size_t i = 0; i < n; ++i) used[segments + i] = plan.segment_of[i] < 0;
  std::vector<bool> launched(units, false), ran(units, false);
  std::vector<int> started(units, -1), finished(units, -1);
  std::map<int, std::vector<std::size_t>> streams;  // device -> queued segments, head first
  std::vector<std::size_t> hosts_launched;
  int clock = 0;
  // The runner releases a segment's segment successors when it launches
  // it, and its host successors with its completion (at launch without a
  // callback, at the callback with one).
  auto release = [&](std::size_t u, bool to_segments) {
    for (const std::size_t b : after[u])
      if ((b < segments) == to_segments) --pending[b];
  };
  std::size_t done = 0, used_count = 0;
  for (std::size_t u = 0; u < units; ++u) used_count += used[u] ? 1 : 0;
  std::size_t completed = 0;  // units complete for the work-DAG
  std::vector<bool> counted(units, false);
  std::string ended_early;  // the pass ended (every unit complete) before this ran
  auto count = [&](std::size_t u) {
    if (counted[u]) return;
    counted[u] = true;
    release(u, false);
    if (u >= segments) release(u, true);
    if (++completed == used_count)
      for (std::size_t v = 0; v < units && ended_early.empty(); ++v)
        if (used[v] && !ran[v]) ended_early = "the pass ended before unit " + std::to_string(v) + " ran";
  };
  while (done < used_count) {
    // Every possible next step, one chosen at random.
    std::vector<std::pair<int, std::size_t>> steps;  // 0 launch, 1 stream head runs, 2 host node runs
    for (std::size_t u = 0; u < units; ++u)
      if (used[u] && !launched[u] && pending[u] == 0) steps.emplace_back(0, u);
    for (const auto& [device, queue] : streams) {
      if (queue.empty()) continue;
      bool ready = true;
      for (const int w : plan.segments[queue.front()].waits_for)
        ready = ready && ran[static_cast<std::size_t>(w)];
      if (ready) steps.emplace_back(1, queue.front());
    }
    for (const std::size_t h : hosts_launched)
      if (!ran[h]) steps.emplace_back(2, h);
    if (steps.empty()) return "deadlock after " + std::to_string(done) + " of " + std::to_string(used_count);
    const auto [kind, u] = steps[rng() % steps.size()];
    ++clock;
    if (kind == 0) {
      launched[u] = true;
      if (u < segments) {
        const weft::DeviceSegment& s = plan.segments[u];
        for (const int w : s.waits_for)
          if (!launched[static_cast<std::size_t>(w)])
            return "segment " + std::to_string(u) + " launched before segment " + std::to_string(w) +
                   " it waits for";
        streams[s.device].push_back(u);
        release(u, true);
        if (!s.callback) count(u);
      } else {
        hosts_launched.push_back(u);
      }
    } else {
      started[u] = clock;
      finished[u] = clock;
      ran[u] = true;
      ++done;
      if (kind == 1) {
        std::vector<std::size_t>& queue = streams[plan.segments[u].device];
        queue.erase(queue.begin());
        if (plan.segments[u].callback) count(u);
      } else {
        count(u);
      }
    }
  }
  if (completed != used_count) return "the pass ended with units not complete";
  if (!ended_early.empty()) return ended_early;
  for (const weft::Graph::Edge& e : g.edges()) {
    const std::size_t a = unit(e.first), b = unit(e.second);
    if (a != b && !(finished[a] < started[b]))
      return "edge " + std::to_string(e.first) + " -> " + std::to_string(e.second) + " broken";
  }
  return "";
}

}  // namespace

TEST_CASE("DevicePlan.launched_as_cuda_streams_run_it_every_edge_holds_in_every_order") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    CAPTURE(trial);
    std::vector<int> device;
    const weft::Graph g = random_graph(rng, 32, 3, 5, device);
    const weft::DevicePlan plan = g.device_plan();
    for (int order = 0; order < 20; ++order) {
      CAPTURE(order);
      REQUIRE(launch_in_random_order(g, plan, rng) == "");
    }
  }
}

TEST_CASE("DevicePlan.the_launch_model_catches_a_missing_callback_wait_or_stream_order") {
  // Device 0 runs {a, x} and, after host node g, c; x feeds y on device 1;
  // host node h waits for a, c and y. {a, x} needs no callback (c's, later
  // on the same stream, covers it), but only if c cannot run first.
  weft::Graph graph;
  const NodeId a = kernel(graph, 0);
  const NodeId x = kernel(graph, 0);
  const NodeId y = kernel(graph, 1);
  const NodeId g = host(graph);
  const NodeId c = kernel(graph, 0);
  const NodeId h = host(graph);
  graph.add_edge(a, h);
  graph.add_edge(x, y);
  graph.add_edge(y, h);
  graph.add_edge(g, c);
  graph.add_edge(c, h);
  const weft::DevicePlan plan = graph.device_plan();
  std::mt19937 rng(11);
  const auto fails_sometimes = [&](const weft::DevicePlan& broken, const weft::Graph& on) {
    for (int order = 0; order < 200; ++order)
      if (!launch_in_random_order(on, broken, rng).empty()) return true;
    return false;
  };
  CHECK_FALSE(fails_sometimes(plan, graph));
  weft::DevicePlan no_callbacks = plan;
  for (weft::DeviceSegment& s : no_callbacks.segments) s.callback = false;
  CHECK(fails_sometimes(no_callbacks, graph));
  weft::DevicePlan no_waits = plan;
  for (weft::DeviceSegment& s : no_waits.segments) s.waits_for.clear();
  CHECK(fails_sometimes(no_waits, graph));
  // Without x -> y (and so y), nothing but stream order makes c's
  // callback cover a.
  weft::Graph lone;
  kernel(lone, 0);
  host(lone);
  kernel(lone, 0);
  host(lone);
  lone.add_edge(0, 3);
  lone.add_edge(1, 2);
  lone.add_edge(2, 3);
  weft::DevicePlan no_stream_order = lone.device_plan();
  REQUIRE(no_stream_order.segments.size() == 2);
  CHECK_FALSE(no_stream_order.segments[0].callback);
  CHECK_FALSE(fails_sometimes(no_stream_order, lone));
  for (weft::DeviceSegment& s : no_stream_order.segments) s.previous = -1;
  CHECK(fails_sometimes(no_stream_order, lone));
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tensor operations on graphs: Ripple's Listings 6-11 and the graph shapes
// of Figures 3, 4, 7 and 9, checked through the JSON; padded stencils run
// against serial references.
#include <weft/graph/graph.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../executor_configs.hpp"
#include "../test_support.hpp"

namespace {

using EdgeSet = std::set<std::pair<int, int>>;

EdgeSet edge_set(const nlohmann::json& doc) {
  EdgeSet out;
  for (const auto& e : doc["edges"]) out.emplace(e["from"].get<int>(), e["to"].get<int>());
  return out;
}

EdgeSet predecessors_of(const nlohmann::json& doc, int node) {
  EdgeSet out;
  for (const auto& [from, to] : edge_set(doc))
    if (to == node) out.emplace(from, to);
  return out;
}

// The padding-copy nodes that read block `source` (a copy's partition is its source), in order.
// The nodes filling a block's padding (one per padded operation): copies
// whose partition is the block they fill.
std::vector<int> fills_of(const nlohmann::json& doc, int block) {
  std::vector<int> out;
  for (const auto& n : doc["nodes"])
    if (n["kind"] == "copy" && n["partition"] == block) out.push_back(n["id"].get<int>());
  return out;
}

// The node ids of a kind, in order.
std::vector<int> nodes_of_kind(const nlohmann::json& doc, const std::string& kind) {
  std::vector<int> out;
  for (const auto& n : doc["nodes"])
    if (n["kind"] == kind) out.push_back(n["id"].get<int>());
  return out;
}

}  // namespace

TEST_CASE("GraphTensor.listing6_then_split_after_emplaces_builds_figure3") {
  constexpr std::size_t size = 1000;
  weft::Tensor<double, 1> x({1}, {4}, size);
  std::atomic<int> ran{0};
  weft::Graph g(weft::ExecutionKind::Cpu);
  g.emplace([&] { ++ran; }).named("A").emplace([&] { ++ran; }).named("B");
  g.then_split(
       weft::ExecutionKind::Gpu, [](auto& it) { *it = 1.0; }, x)
      .named("S");

  const nlohmann::json doc = g.to_json();
  REQUIRE(doc["nodes"].size() == 6);
  for (int s = 0; s < 4; ++s) {
    const auto& node = doc["nodes"][static_cast<std::size_t>(2 + s)];
    CHECK(node["name"] == "S." + std::to_string(s));
    CHECK(node["kind"] == "compute");
    CHECK(node["execution_kind"] == "gpu");
    CHECK(node["partition"] == s);
    CHECK(node["device"] == 0);  // one partition, four sub-partitions: all on device 0
    CHECK(node["level"] == 1);
  }
  // Figure 3: after a non-tensor level every split node waits for all of it.
  CHECK(edge_set(doc) == EdgeSet{{0, 2}, {0, 3}, {0, 4}, {0, 5}, {1, 2}, {1, 3}, {1, 4}, {1, 5}});

  weft::Executor executor(weft::test::with_virtual_devices(2, 1));
  executor.run(g).wait().get();
  CHECK(ran == 2);
  for (std::size_t i = 0; i < size; ++i) CHECK(x(i) == 1.0);
}

TEST_CASE("GraphTensor.listing7_saxpy_split_runs_one_node_per_partition_on_its_device") {
  constexpr std::size_t size = 4099;  // uneven on purpose
  weft::Tensor<double, 1> x({4}, size);
  weft::Tensor<double, 1> y({4}, size);
  for (std::size_t i = 0; i < size; ++i) {
    x(i) = static_cast<double>(i);
    y(i) = 1.0;
  }
  weft::Graph g(weft::ExecutionKind::Gpu);
  g.split([](auto& x_it, auto& y_it, double a) { *y_it = a * (*x_it) + (*y_it); }, x, y, 4.0);
  const nlohmann::json doc = g.to_json();
  REQUIRE(doc["nodes"].size() == 4);
  CHECK(doc["edges"].empty());
  for (int p = 0; p < 4; ++p) CHECK(doc["nodes"][static_cast<std::size_t>(p)]["device"] == p);

  weft::Executor executor(weft::test::with_virtual_devices(1, 4));
  executor.run(g).wait().get();
  for (std::size_t i = 0; i < size; ++i) CHECK(y(i) == 4.0 * static_cast<double>(i) + 1.0);
}

TEST_CASE("GraphTensor.listing8_split_then_reduce_builds_figure4") {
  constexpr std::size_t size = 10000;
  weft::Tensor<double, 1> x({4}, size);
  auto result = weft::make_reduction_result<double>(0.0);
  weft::Graph g(weft::ExecutionKind::Gpu);
  g.split([](auto& it) { *it = 1.0; }, x).then_reduce(x, result, weft::SumReducer());

  const nlohmann::json doc = g.to_json();
  REQUIRE(doc["nodes"].size() == 9);
  const std::vector<int> reduce = nodes_of_kind(doc, "reduce");
  REQUIRE(reduce == std::vector<int>{4, 5, 6, 7, 8});
  // S_i -> R_i only, and every R_i -> F.
  CHECK(edge_set(doc) == EdgeSet{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {4, 8}, {5, 8}, {6, 8}, {7, 8}});
  CHECK(doc["nodes"][8]["partition"] == -1);
  CHECK(doc["nodes"][5]["partition"] == 1);

  weft::Executor executor(weft::test::with_virtual_devices(2, 2));
  executor.run(g).wait().get();
  CHECK(result.value() == static_cast<double>(size));
}

TEST_CASE("GraphTensor.listing9_conditional_map_reduce_with_initialisation") {
  // Also under the device plan's host interpreter (docs/device_plans.md):
  // the conditional subgraph has a plan of its own, run on every pass.
  for (const char* plan_mode : {"off", "interpret"}) {
    CAPTURE(plan_mode);
    const weft::test::ScopedVariable mode("WEFT_GPU_PLAN", plan_mode);
    constexpr std::size_t size = 1000;
    weft::Tensor<double, 1> x({4}, size);
    auto result = weft::make_reduction_result<double>(0.0);
    int rounds = 0;

    weft::Graph init(weft::ExecutionKind::Gpu);
    weft::Graph map_reduce(weft::ExecutionKind::Gpu);
    init.split([](auto& it) { *it = 4.0; }, x);
    map_reduce.split([](auto& it) { *it -= 1.0; }, x)
        .then_reduce(x, result, weft::SumReducer())
        .conditional([&result, &rounds] {
          ++rounds;
          return result.value_and_reset() != 0.0;
        });
    init.then(map_reduce);

    struct CountJobs : weft::Observer {
      std::atomic<int> jobs{0};
      void on_node_begin(const weft::NodeEvent& e) noexcept override {
        if (e.node >= 0) jobs.fetch_add(1, std::memory_order_relaxed);
      }
    };
    auto counter = std::make_shared<CountJobs>();
    weft::Executor executor(weft::test::with_virtual_devices(2, 2));
    executor.attach(counter);
    executor.run(init).wait().get();
    executor.detach(counter);
    CHECK(rounds == 4);  // 4 -> 3 -> 2 -> 1 -> 0
    for (std::size_t i = 0; i < size; ++i) CHECK(x(i) == 0.0);
    // Off: init's 4 blocks and the subgraph node, then per pass 4 blocks,
    // 4 partial sums, the finish and the conditional node. Interpreted, a
    // device's blocks and partial sums are one segment (4 devices of blocks).
    CHECK(counter->jobs.load() == (std::string(plan_mode) == "off" ? 5 + 4 * 10 : 5 + 4 * 6));
  }
}

TEST_CASE("GraphTensor.listing10_concurrent_padded_access_builds_figure7") {
  constexpr std::size_t size = 400;
  weft::Tensor<double, 1> x({4}, 1, size);
  weft::Tensor<double, 1> y({4}, size);
  for (std::size_t i = 0; i < size; ++i) x(i) = static_cast<double>(i * i % 17);
  const auto difference = [](auto&& in, auto&& out) {
    *out = *in.offset(weft::dim_x, 1) - *in.offset(weft::dim_x, -1);
  };
  weft::Graph graph(weft::ExecutionKind::Gpu);
  graph.split(difference, weft::concurrent_padded_access(x), y);

  const nlohmann::json doc = graph.to_json();
  const std::vector<int> copies = nodes_of_kind(doc, "copy");
  const std::vector<int> splits = nodes_of_kind(doc, "compute");
  // Figure 7's copies a_p, b_p1, b_p2, c_p1, c_p2, d_p, grouped by the block
  // whose padding they fill: one node per block, carrying that block.
  REQUIRE(copies.size() == 4);
  REQUIRE(splits.size() == 4);
  for (int p = 0; p < 4; ++p) {
    const int fill = copies[static_cast<std::size_t>(p)];
    CHECK(doc["nodes"][static_cast<std::size_t>(fill)]["level"] == 0);
    CHECK(doc["nodes"][static_cast<std::size_t>(fill)]["partition"] == p);
    CHECK(predecessors_of(doc, fill).empty());
    // Each kernel waits for the copies INTO its padding only, never out of it.
    const int s = splits[static_cast<std::size_t>(p)];
    CHECK(doc["nodes"][static_cast<std::size_t>(s)]["level"] == 1);
    CHECK(predecessors_of(doc, s) == EdgeSet{{fill, s}});
  }

  weft::Executor executor(weft::test::with_virtual_devices(2, 4));
  executor.run(graph).wait().get();
  for (std::size_t i = 0; i < size; ++i) {
    const double right = i + 1 < size ? x(i + 1) : 0.0, left = i > 0 ? x(i - 1) : 0.0;
    CHECK(y(i) == right - left);
  }
}

TEST_CASE("GraphTensor.listing11_exclusive_padded_access_builds_figure9") {
  weft::Tensor<double, 1> x({4}, 1, 400);
  weft::Graph graph(weft::ExecutionKind::Gpu);
  graph.split(
      [](auto&& in_out) { *in_out = *in_out.offset(weft::dim_x, 1) - *in_out.offset(weft::dim_x, -1); },
      weft::exclusive_padded_access(x));
  const nlohmann::json doc = graph.to_json();
  const std::vector<int> splits = nodes_of_kind(doc, "compute");
  REQUIRE(splits.size() == 4);
  for (int p = 0; p < 4; ++p) {
    // Figure 9: the copies into p (p's fill) and the copies out of p (its
    // neighbours' fills) come first.
    std::set<int> filled;
    for (const auto& [from, to] : predecessors_of(doc, splits[static_cast<std::size_t>(p)])) {
      CHECK(doc["nodes"][static_cast<std::size_t>(from)]["kind"] == "copy");
      filled.insert(doc["nodes"][static_cast<std::size_t>(from)]["partition"].get<int>());
    }
    const std::set<int> expected = p == 0   ? std::set<int>{0, 1}
                                   : p == 3 ? std::set<int>{2, 3}
                                            : std::set<int>{p - 1, p, p + 1};
    CHECK(filled == expected);
  }
}

TEST_CASE("GraphTensor.reduce_with_a_map_folds_a_value_computed_per_cell") {
  weft::Tensor<int, 2> t({2, 3}, 9, 7);
  auto sum_of_squares = weft::make_reduction_result<long>(0);
  auto largest_magnitude = weft::make_reduction_result<int>(0);
  weft::Graph g;
  g.split(
       [](auto& it) {
         *it = static_cast<int>((it.global_index(0) * 31 + it.global_index(1) * 17) % 23) - 11;
       },
       t)
      .then_reduce(t, sum_of_squares, weft::SumReducer(), [](int v) { return static_cast<long>(v) * v; })
      .then_reduce(t, largest_magnitude, weft::MaxReducer(), [](const int& v) { return v < 0 ? -v : v; });
  // No tensor between the map and the fold: a node per block and the finishing one.
  CHECK(nodes_of_kind(g.to_json(), "reduce").size() == 2 * (6 + 1));
  weft::Executor executor(weft::test::with_virtual_devices(2, 3));
  executor.run(g).wait().get();
  long squares = 0;
  int magnitude = 0;
  for (int j = 0; j < 7; ++j) {
    for (int i = 0; i < 9; ++i) {
      const int v = (i * 31 + j * 17) % 23 - 11;
      squares += static_cast<long>(v) * v;
      magnitude = std::max(magnitude, v < 0 ? -v : v);
    }
  }
  CHECK(sum_of_squares.value() == squares);
  CHECK(largest_magnitude.value() == magnitude);
}

TEST_CASE("GraphTensor.a_large_block_reduces_on_every_worker_to_the_same_bits") {
  // One block of 300 x 300 floats: its rows are shared between the workers
  // in chunks, each folded on its own and the chunks joined in order. A
  // float sum depends on that order, so equal bits on 1, 2 and 3 workers
  // say the order is the plan's, not the timing's.
  weft::Tensor<float, 2> t({1, 1}, 300, 300);
  for (std::size_t j = 0; j < 300; ++j)
    for (std::size_t i = 0; i < 300; ++i) t(i, j) = 1.0f / static_cast<float>(1 + (i * 7 + j * 13) % 101);
  float expected = 0.0f;
  const weft::BlockRowChunks plan(300, 300);
  REQUIRE(plan.count() > 2);
  for (std::size_t c = 0; c < plan.count(); ++c) {
    float chunk = 0.0f;
    for (std::size_t j = plan.first_row(c); j < plan.last_row(c); ++j)
      for (std::size_t i = 0; i < 300; ++i) chunk += t(i, j);
    expected += chunk;
  }
  struct AnyOf {
    void init(bool& v) const { v = false; }
    void join(bool& into, const bool& from) const { into = into || from; }
  };
  for (int workers : {1, 2, 3}) {
    auto sum = weft::make_reduction_result<float>(0.0f);
    auto any_large = weft::make_reduction_result<bool>(false);  // a bool per chunk, never packed
    weft::Graph g;
    g.reduce(t, sum, weft::SumReducer()).reduce(t, any_large, AnyOf{}, [](float v) { return v > 0.99f; });
    weft::Executor executor(weft::test::cpu_only(workers));
    for (int run = 0; run < 3; ++run) {
      executor.run(g).wait().get();
      CHECK(std::bit_cast<std::uint32_t>(sum.value()) == std::bit_cast<std::uint32_t>(expected));
      CHECK(any_large.value());
    }
  }
}

namespace {

// Threads taking rows of one block: each notes itself, then waits (20 s at
// most) until a second thread has come, which happens only if the block's
// rows are shared.
class SecondThreadMeeting {
 public:
  void arrive() {
    {
      std::lock_guard<std::mutex> lock(m_);
      threads_.insert(std::this_thread::get_id());
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (true) {
      {
        std::lock_guard<std::mutex> lock(m_);
        if (threads_.size() >= 2) return;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        gave_up_ = true;
        return;
      }
      std::this_thread::yield();
    }
  }
  std::size_t threads() {
    std::lock_guard<std::mutex> lock(m_);
    return threads_.size();
  }
  bool gave_up() const { return gave_up_.load(); }

 private:
  std::mutex m_;
  std::set<std::thread::id> threads_;
  std::atomic<bool> gave_up_{false};
};

// The cells a fold saw, as a run of linear indices: joining a span with the
// one that starts where it ends keeps it in order. Associative but not
// commutative, so a total still in order says every join was in row order.
struct IndexSpan {
  std::int64_t first = -1, last = -1;
  bool in_order = true;
};
struct JoinInRowOrder {
  void init(IndexSpan& span) const { span = IndexSpan{}; }
  void join(IndexSpan& into, const IndexSpan& from) const {
    if (from.first < 0) return;
    if (into.first < 0) {
      into = from;
      return;
    }
    into.in_order = into.in_order && from.in_order && from.first == into.last + 1;
    into.last = from.last;
  }
};

}  // namespace

TEST_CASE("GraphTensor.a_large_block_reduces_on_two_workers_and_joins_its_rows_in_order") {
  constexpr std::int64_t nx = 300, ny = 200;  // one block of 60,000 cells: its rows are shared
  weft::Tensor<std::int64_t, 2> t({1, 1}, nx, ny);
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i) t(i, j) = i + nx * j;
  SecondThreadMeeting meeting;
  // The map sees the cell's index; at the start of a row it waits until a
  // second thread folds rows too (as in the split test below), so the
  // chunks finish out of order and a join in completion order would show.
  const auto span_of_cell = [&](std::int64_t index) {
    if (index % nx == 0) meeting.arrive();
    return IndexSpan{index, index, true};
  };
  auto span = weft::make_reduction_result<IndexSpan>(IndexSpan{});
  weft::Graph g;
  g.reduce(t, span, JoinInRowOrder{}, span_of_cell);
  weft::Executor executor(weft::test::cpu_only(2));
  for (int run = 0; run < 5; ++run) {
    executor.run(g).wait().get();
    CHECK(span.value().first == 0);
    CHECK(span.value().last == nx * ny - 1);
    CHECK(span.value().in_order);
  }
  CHECK(meeting.threads() == 2);
  CHECK_FALSE(meeting.gave_up());
}

TEST_CASE("GraphTensor.then_split_after_split_links_same_partitions_only") {
  weft::Tensor<int, 2> t({1, 3}, 6, 6);
  weft::Graph g;
  g.split([](auto& it) { *it = static_cast<int>(it.global_index(0) + 10 * it.global_index(1)); }, t)
      .then_split([](auto& it) { *it *= 2; }, t);
  CHECK(edge_set(g.to_json()) == EdgeSet{{0, 3}, {1, 4}, {2, 5}});
  weft::Executor executor(weft::test::with_virtual_devices(2, 0));
  executor.run(g).wait().get();
  for (int j = 0; j < 6; ++j)
    for (int i = 0; i < 6; ++i) CHECK(t(i, j) == 2 * (i + 10 * j));
}

TEST_CASE("GraphTensor.tensors_of_one_operation_must_split_alike") {
  weft::Tensor<double, 1> a({4}, 100), b({2}, 100);
  weft::Graph g;
  CHECK(
      weft::test::invalid_argument_message([&] { g.split([](auto&, auto&) {}, a, b); }) ==
      "Graph::split: tensor argument 2 (Tensor<1> (100) in 2 blocks) is not split like tensor argument 1 "
      "(Tensor<1> (100) in 4 blocks); the tensors of one operation need the same blocks on the same devices");
  CHECK(g.size() == 0);  // nothing was added
}

TEST_CASE("GraphTensor.reduce_with_max_min_and_a_user_reducer") {
  weft::Tensor<int, 2> t({2, 2}, 9, 7);
  for (int j = 0; j < 7; ++j)
    for (int i = 0; i < 9; ++i) t(i, j) = (i * 31 + j * 17) % 23 - 11;
  auto max = weft::make_reduction_result<int>(0);
  auto min = weft::make_reduction_result<int>(0);
  // A user reducer: init gives the identity, join folds cells and partials alike.
  struct BitOr {
    void init(int& v) const { v = 0; }
    void join(int& into, const int& from) const { into |= from; }
  };
  auto bits = weft::make_reduction_result<int>(0);
  weft::Graph g;
  g.reduce(t, max, weft::MaxReducer()).reduce(t, min, weft::MinReducer()).reduce(t, bits, BitOr{});
  weft::Executor executor(weft::test::with_virtual_devices(2, 0));
  executor.run(g).wait().get();
  int expect_max = -100, expect_min = 100;
  int expect_bits = 0;
  for (int j = 0; j < 7; ++j) {
    for (int i = 0; i < 9; ++i) {
      const int v = (i * 31 + j * 17) % 23 - 11;
      expect_max = std::max(expect_max, v);
      expect_min = std::min(expect_min, v);
      expect_bits |= v;
    }
  }
  CHECK(max.value() == expect_max);
  CHECK(min.value() == std::min(expect_min, 0));  // joined with the initial value 0
  CHECK(bits.value() == expect_bits);
}

namespace {

// The serial meaning of one in-place smoothing pass over blocks: each block
// reads its neighbours' values from before the pass (its padding) and its
// own cells as it updates them, left to right.
void smooth_in_place_reference(std::vector<double>& u, std::size_t blocks) {
  const std::vector<double> before = u;
  const std::size_t n = u.size();
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t begin = b * n / blocks, end = (b + 1) * n / blocks;
    for (std::size_t i = begin; i < end; ++i) {
      const double left = i == 0 ? 0.0 : (i == begin ? before[i - 1] : u[i - 1]);
      const double right = i + 1 == n ? 0.0 : (i + 1 == end ? before[i + 1] : u[i + 1]);
      u[i] = 0.25 * left + 0.5 * u[i] + 0.25 * right;
    }
  }
}

}  // namespace

TEST_CASE("GraphTensor.in_place_stencil_with_exclusive_padded_access_equals_serial") {
  constexpr std::size_t size = 512, blocks = 4;
  constexpr int steps = 50;
  weft::Tensor<double, 1> u({blocks}, 1, size);
  std::vector<double> reference(size);
  for (std::size_t i = 0; i < size; ++i) u(i) = reference[i] = (i % 37 == 0) ? 100.0 : 0.0;
  weft::Graph g;
  g.split(
      [](auto& it) {
        *it = 0.25 * *it.offset(weft::dim_x, -1) + 0.5 * *it + 0.25 * *it.offset(weft::dim_x, 1);
      },
      weft::exclusive_padded_access(u));
  weft::Executor executor(weft::test::with_virtual_devices(2, 2));
  executor.run_n(g, steps).wait().get();
  for (int s = 0; s < steps; ++s) smooth_in_place_reference(reference, blocks);
  for (std::size_t i = 0; i < size; ++i) CHECK(u(i) == reference[i]);
}

TEST_CASE("GraphTensor.double_buffered_stencil_with_concurrent_padded_access_equals_serial") {
  constexpr std::size_t size = 600;
  constexpr int steps = 40;  // each run is two passes: a -> b, then b -> a
  weft::Tensor<double, 1> a({4}, 1, size), b({4}, 1, size);
  std::vector<double> reference(size);
  for (std::size_t i = 0; i < size; ++i) a(i) = reference[i] = static_cast<double>((i * 7919) % 101);
  const auto smooth = [](auto& in, auto& out) {
    *out = (*in.offset(weft::dim_x, -1) + *in + *in.offset(weft::dim_x, 1)) / 3.0;
  };
  weft::Graph g;
  g.split(smooth, weft::concurrent_padded_access(a), b).named("ab");
  g.then_split(smooth, weft::concurrent_padded_access(b), a).named("ba");

  // Section 5.4: the second pass writes a's blocks, which the first pass's
  // copies read, so each of its kernels waits for the copies out of its
  // block: those filling the padding of blocks 0 and 2 read block 1.
  const nlohmann::json doc = g.to_json();
  const int ba1 = *g.find("ba.1");
  const std::set<int> reads_of_a1{*g.find("ab.pad0"), *g.find("ab.pad2")};
  for (int c : reads_of_a1) CHECK(edge_set(doc).count({c, ba1}) == 1);

  weft::Executor executor(weft::test::with_virtual_devices(2, 4));
  executor.run_n(g, steps).wait().get();
  for (int s = 0; s < 2 * steps; ++s) {
    const std::vector<double> before = reference;
    for (std::size_t i = 0; i < size; ++i) {
      const double left = i == 0 ? 0.0 : before[i - 1], right = i + 1 == size ? 0.0 : before[i + 1];
      reference[i] = (left + before[i] + right) / 3.0;
    }
  }
  for (std::size_t i = 0; i < size; ++i) CHECK(a(i) == doctest::Approx(reference[i]).epsilon(1e-12));
}

TEST_CASE("GraphTensor.in_shared_modifiers_keep_the_graph_shape") {
  weft::Tensor<double, 1> x({3}, 1, 30), y({3}, 30);
  weft::Graph plain, shared;
  plain.split([](auto& in, auto& out) { *out = *in.offset(0, 1); }, weft::concurrent_padded_access(x), y);
  shared.split([](auto& in, auto& out) { *out = *in.offset(0, 1); },
               weft::concurrent_padded_access_in_shared(x), weft::in_shared(y));
  CHECK(plain.to_json()["edges"] == shared.to_json()["edges"]);
  weft::Graph exclusive, exclusive_shared;
  exclusive.split([](auto& in) { *in = 1.0; }, weft::exclusive_padded_access(x));
  exclusive_shared.split([](auto& in) { *in = 1.0; }, weft::exclusive_padded_access_in_shared(x));
  CHECK(exclusive.to_json()["edges"] == exclusive_shared.to_json()["edges"]);
}

namespace {

// A user type with a polymorphic layout (Ripple section 4.2): the same
// struct lives in a Tensor as struct-of-arrays or as array-of-structs.
template <class Layout>
struct Particle : weft::PolymorphicLayout<Particle<Layout>> {
  using Storage =
      typename weft::StorageDescriptor<Layout, weft::Vector<double, 3>, weft::Vector<double, 3>>::Storage;
  double& position(std::size_t d) { return storage.template get<0>(d); }
  double& velocity(std::size_t d) { return storage.template get<1>(d); }
  Storage storage;
};

// Moves each particle by its velocity and its neighbours' (read through the
// padding), a few passes over 4 partitions; returns the positions.
template <class Layout>
std::vector<double> drift(std::size_t n, int passes) {
  weft::Tensor<Particle<Layout>, 1> particles({4}, 1, n);
  for (std::size_t i = 0; i < n; ++i) {
    auto p = particles(i);
    for (std::size_t d = 0; d < 3; ++d) {
      p.position(d) = static_cast<double>(i + d);
      p.velocity(d) = static_cast<double>((i * 13 + d * 7) % 19) * 0.125;
    }
  }
  weft::Graph g;
  g.split(
      [](auto& it, double dt) {
        auto self = *it;
        auto left = *it.offset(weft::dim_x, -1), right = *it.offset(weft::dim_x, 1);
        for (std::size_t d = 0; d < 3; ++d)
          self.position(d) += dt * (0.5 * self.velocity(d) + 0.25 * (left.velocity(d) + right.velocity(d)));
      },
      weft::exclusive_padded_access(particles), 0.01);
  weft::Executor executor(weft::test::with_virtual_devices(2, 2));
  executor.run_n(g, passes).wait().get();
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t d = 0; d < 3; ++d) out.push_back(particles(i).position(d));
  return out;
}

}  // namespace

// The fastest particle's squared speed, by a reduce whose map reads each
// cell through its layout.
template <class Layout>
double fastest_squared_speed(std::size_t n) {
  weft::Tensor<Particle<Layout>, 1> particles({4}, n);
  for (std::size_t i = 0; i < n; ++i) {
    auto p = particles(i);
    for (std::size_t d = 0; d < 3; ++d) p.velocity(d) = static_cast<double>((i * 13 + d * 7) % 19) * 0.125;
  }
  auto fastest = weft::make_reduction_result<double>(0.0);
  weft::Graph g;
  g.reduce(particles, fastest, weft::MaxReducer(), [](auto particle) {
    double squared = 0.0;
    for (std::size_t d = 0; d < 3; ++d) squared += particle.velocity(d) * particle.velocity(d);
    return squared;
  });
  weft::Executor executor(weft::test::cpu_only(2));
  executor.run(g).wait().get();
  return fastest.value();
}

TEST_CASE("GraphTensor.reduce_maps_cells_of_either_layout") {
  constexpr std::size_t n = 301;
  double expected = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    double squared = 0.0;
    for (std::size_t d = 0; d < 3; ++d) {
      const double v = static_cast<double>((i * 13 + d * 7) % 19) * 0.125;
      squared += v * v;
    }
    expected = std::max(expected, squared);
  }
  CHECK(fastest_squared_speed<weft::StridedView>(n) == expected);
  CHECK(fastest_squared_speed<weft::ContiguousView>(n) == expected);
}

TEST_CASE("GraphTensor.struct_of_arrays_and_array_of_structs_give_identical_results") {
  constexpr std::size_t n = 301;
  constexpr int passes = 5;
  const std::vector<double> strided = drift<weft::StridedView>(n, passes);
  const std::vector<double> contiguous = drift<weft::ContiguousView>(n, passes);
  CHECK(strided == contiguous);  // bitwise
  // And both equal the same arithmetic on plain structs.
  std::vector<double> position(3 * n), velocity(3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t d = 0; d < 3; ++d) {
      position[3 * i + d] = static_cast<double>(i + d);
      velocity[3 * i + d] = static_cast<double>((i * 13 + d * 7) % 19) * 0.125;
    }
  }
  for (int pass = 0; pass < passes; ++pass) {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t d = 0; d < 3; ++d) {
        const double left = i == 0 ? 0.0 : velocity[3 * (i - 1) + d];
        const double right = i + 1 == n ? 0.0 : velocity[3 * (i + 1) + d];
        position[3 * i + d] += 0.01 * (0.5 * velocity[3 * i + d] + 0.25 * (left + right));
      }
    }
  }
  CHECK(strided == position);
}

TEST_CASE("GraphTensor.a_large_block_shares_its_rows_with_every_worker") {
  constexpr std::size_t nx = 300, ny = 200;  // one block of 60,000 cells: above the sharing threshold
  weft::Tensor<std::int64_t, 2> t({1, 1}, nx, ny);
  SecondThreadMeeting meeting;
  weft::Graph g;
  g.split(
      [&](auto& it) {
        *it = it.global_index(0) + 1000 * it.global_index(1);
        // Once per row, the first rows waiting until another thread has
        // taken rows too: with two workers and a chunk plan of 19 that
        // happens unless rows are not shared.
        if (it.index(0) == 0) meeting.arrive();
      },
      t);
  weft::Executor executor(weft::test::cpu_only(2));
  executor.run(g).wait().get();
  for (std::size_t j = 0; j < ny; ++j)
    for (std::size_t i = 0; i < nx; ++i) CHECK(t(i, j) == static_cast<std::int64_t>(i + 1000 * j));
  CHECK(meeting.threads() == 2);
  CHECK_FALSE(meeting.gave_up());
}

TEST_CASE("GraphTensor.boundary_loads_the_same_padding_as_load_boundary_on_every_cell") {
  const auto make = [] {
    weft::Tensor<double, 2> t({2, 2}, {1, 2}, 2, 12, 10);  // 2 x 4 blocks, padding 2
    for (int j = 0; j < 10; ++j)
      for (int i = 0; i < 12; ++i) t(i, j) = 1.0 + i + 100.0 * j;
    return t;
  };
  weft::Tensor<double, 2> by_faces = make(), by_cells = make();
  weft::Graph faces, cells;
  faces.boundary(by_faces, weft::FirstOrderExtrapolation{}).named("walls");
  cells.split([](auto& it) { weft::load_boundary(it, weft::FirstOrderExtrapolation{}); }, by_cells);
  CHECK(faces.to_json()["nodes"].size() == 8);  // one node per block, like split
  CHECK(faces.find("walls.7"));
  weft::Executor executor(weft::test::cpu_only(2));
  executor.run(faces).wait().get();
  executor.run(cells).wait().get();
  for (std::size_t b = 0; b < by_faces.block_count(); ++b) {
    const weft::BlockSpace<2>& s = by_faces.block_space(b);
    for (std::ptrdiff_t y = -2; y < static_cast<std::ptrdiff_t>(s.extent[1]) + 2; ++y)
      for (std::ptrdiff_t x = -2; x < static_cast<std::ptrdiff_t>(s.extent[0]) + 2; ++x)
        CHECK(*by_faces.iterator(b, {x, y}) == *by_cells.iterator(b, {x, y}));
  }
  CHECK(*by_faces.iterator(0, {-2, 0}) == 1.0);  // beyond the left edge: the edge cell t(0, 0)
}

TEST_CASE("GraphTensor.a_subgraph_starting_on_partitions_joins_same_partitions_only") {
  weft::Tensor<int, 1> t({3}, 30);
  weft::Graph first, second;
  first.split([](auto& it) { *it = 1; }, t);
  second.split([](auto& it) { *it += 1; }, t);
  first.emplace([] {}).named("untied");  // beside the split: every root of the subgraph waits for it
  first.then(second);
  const EdgeSet edges = edge_set(first.to_json());
  CHECK(edges == EdgeSet{{0, 4}, {1, 5}, {2, 6}, {3, 4}, {3, 5}, {3, 6}});
  weft::Executor executor(weft::test::cpu_only(2));
  executor.run(first).wait().get();
  for (int i = 0; i < 30; ++i) CHECK(t(i) == 2);
}

TEST_CASE("GraphTensor.copies_inside_a_subgraph_still_bind_later_writers") {
  weft::Tensor<double, 1> a({2}, 1, 20), b({2}, 20);
  weft::Graph inner, outer;
  inner.split([](auto& in, auto& out) { *out = *in.offset(0, 1); }, weft::concurrent_padded_access(a), b);
  outer.then(inner);
  outer.then_split([](auto& it) { *it = 5.0; }, a).named("write_a");
  // Block 0's writer waits for the copy that reads block 0 (into block 1's padding).
  const nlohmann::json doc = outer.to_json();
  const int writer = *outer.find("write_a.0");
  const std::vector<int> copies_out_of_0 = fills_of(doc, 1);
  REQUIRE(copies_out_of_0.size() == 1);
  CHECK(edge_set(doc).count({copies_out_of_0[0], writer}) == 1);
}

TEST_CASE("GraphTensor.a_large_in_place_block_runs_its_rows_in_order") {
  // 2D Listing 11 on one block of 150 x 120 cells: rows read the row below,
  // already updated, as in a serial loop; they are not shared among threads.
  constexpr std::size_t nx = 150, ny = 120;
  weft::Tensor<double, 2> u({1, 2}, 1, nx, ny);
  std::vector<double> reference(nx * ny);
  for (std::size_t j = 0; j < ny; ++j)
    for (std::size_t i = 0; i < nx; ++i)
      u(i, j) = reference[j * nx + i] = static_cast<double>((i * 7 + j * 13) % 17);
  weft::Graph g;
  g.split(
      [](auto& it) { *it = 0.5 * *it + 0.25 * (*it.offset(weft::dim_y, -1) + *it.offset(weft::dim_y, 1)); },
      weft::exclusive_padded_access(u));
  weft::Executor executor(weft::test::cpu_only(2));
  executor.run(g).wait().get();
  const std::vector<double> before = reference;
  for (std::size_t half = 0; half < 2; ++half) {
    const std::size_t begin = half * ny / 2, end = (half + 1) * ny / 2;
    for (std::size_t j = begin; j < end; ++j) {
      for (std::size_t i = 0; i < nx; ++i) {
        const double below =
            j == 0 ? 0.0 : (j == begin ? before[(j - 1) * nx + i] : reference[(j - 1) * nx + i]);
        const double above =
            j + 1 == ny ? 0.0 : (j + 1 == end ? before[(j + 1) * nx + i] : reference[(j + 1) * nx + i]);
        reference[j * nx + i] = 0.5 * reference[j * nx + i] + 0.25 * (below + above);
      }
    }
  }
  for (std::size_t j = 0; j < ny; ++j)
    for (std::size_t i = 0; i < nx; ++i) CHECK(u(i, j) == reference[j * nx + i]);
}

TEST_CASE("GraphTensor.a_subgraph_starting_with_padding_copies_waits_for_both_blocks") {
  weft::Tensor<double, 1> a({4}, 1, 40), b({4}, 40);
  weft::Graph outer, inner;
  outer.split([](auto& it) { *it = 1.0; }, b).named("init_b");
  inner.split([](auto& in, auto& out) { *out += *in.offset(0, 1); }, weft::concurrent_padded_access(a), b);
  outer.then(inner);
  const nlohmann::json doc = outer.to_json();
  // The copies into block i's padding follow init_b on block i (they
  // overwrite padding a kernel of the level before might read) and on the
  // blocks they read, i - 1 and i + 1, and on no other block.
  for (const auto& n : doc["nodes"]) {
    if (n["kind"] != "copy") continue;
    const int i = n["partition"].get<int>();
    std::set<int> before;  // init_b.<k> has id k
    for (const auto& [from, to] : predecessors_of(doc, n["id"].get<int>())) before.insert(from);
    const std::set<int> expected = i == 0   ? std::set<int>{0, 1}
                                   : i == 3 ? std::set<int>{2, 3}
                                            : std::set<int>{i - 1, i, i + 1};
    CHECK(before == expected);
  }
  // So every kernel of the subgraph follows init_b on its own block (through its copies).
  for (int p = 0; p < 4; ++p) {
    const int kernel = static_cast<int>(doc["nodes"].size()) - 4 + p;
    bool through_a_copy = false;
    for (const auto& [copy, to] : predecessors_of(doc, kernel))
      through_a_copy = through_a_copy || edge_set(doc).count({p, copy}) == 1;
    CHECK(through_a_copy);
  }
  weft::Executor executor(weft::test::cpu_only(2));
  executor.run(outer).wait().get();
  for (int i = 0; i < 40; ++i) CHECK(b(i) == 1.0);  // a is all zero: b stays 1 + 0
}

TEST_CASE("GraphTensor.a_subgraph_writing_a_block_waits_for_copies_still_reading_it") {
  weft::Tensor<double, 1> a({2}, 1, 20), b({2}, 20);
  weft::Graph outer, inner;
  outer.split([](auto& in, auto& out) { *out = *in.offset(0, 1); }, weft::concurrent_padded_access(a), b);
  inner.split([](auto& it) { *it = 5.0; }, a).named("write_a");
  outer.then(inner);
  const nlohmann::json doc = outer.to_json();
  const int writer = *outer.find("write_a.0");
  const std::vector<int> copies_out_of_0 = fills_of(doc, 1);  // into block 1's padding
  REQUIRE(copies_out_of_0.size() == 1);
  CHECK(edge_set(doc).count({copies_out_of_0[0], writer}) == 1);
}

TEST_CASE("GraphTensor.padded_operations_side_by_side_do_not_race_on_the_padding") {
  weft::Tensor<double, 1> in({2}, 1, 20), fx({2}, 20), fy({2}, 20);
  weft::Graph g;
  g.split([](auto& u, auto& f) { *f = *u.offset(0, 1); }, weft::concurrent_padded_access(in), fx);
  g.split([](auto& u, auto& f) { *f = *u.offset(0, -1); }, weft::concurrent_padded_access(in), fy);
  const nlohmann::json doc = g.to_json();
  // The second operation's copy into block 0 follows the first's copy into
  // block 0 and the first's kernel on block 0, which reads that padding.
  const std::vector<int> copies_into_0 = fills_of(doc, 0);
  REQUIRE(copies_into_0.size() == 2);
  const EdgeSet before = predecessors_of(doc, copies_into_0[1]);
  CHECK(before.count({copies_into_0[0], copies_into_0[1]}) == 1);
  CHECK(before.size() == 2);
  weft::Executor executor(weft::test::cpu_only(2));
  for (int i = 0; i < 20; ++i) in(i) = i;
  executor.run(g).wait().get();
  for (int i = 0; i < 20; ++i) {
    CHECK(fx(i) == (i == 19 ? 0.0 : i + 1.0));
    CHECK(fy(i) == (i == 0 ? 0.0 : i - 1.0));
  }
}

TEST_CASE("GraphTensor.padded_access_needs_padding_and_appears_once") {
  weft::Tensor<double, 1> plain({2}, 20), padded({2}, 1, 20);
  weft::Graph g;
  CHECK(weft::test::invalid_argument_message(
            [&] { g.split([](auto& in) { *in = 1.0; }, weft::concurrent_padded_access(plain)); }) ==
        "Graph::split: tensor argument 1 (Tensor<1> (20) in 2 blocks) has no padding, so a padded access "
        "would read outside its blocks");
  CHECK(weft::test::invalid_argument_message([&] {
          g.split([](auto& in, auto& out) { *out = *in; }, weft::concurrent_padded_access(padded), padded);
        }) ==
        "Graph::split: tensor argument 2 (Tensor<1> (20) in 2 blocks) is also tensor argument 1; a tensor "
        "with padded access may appear once in an operation");
  CHECK(g.size() == 0);
}

TEST_CASE("GraphTensor.one_reduction_result_serves_several_operations") {
  weft::Tensor<int, 1> four({4}, 40), two({2}, 10);
  for (int i = 0; i < 40; ++i) four(i) = 1;
  for (int i = 0; i < 10; ++i) two(i) = 2;
  auto total = weft::make_reduction_result<int>(0);
  weft::Graph a, b;
  a.reduce(four, total);
  b.reduce(two, total);
  weft::Executor executor(weft::test::cpu_only(2));
  executor.run(a).wait().get();
  CHECK(total.value() == 40);
  executor.run(b).wait().get();
  CHECK(total.value() == 20);
  executor.run(a).wait().get();  // a's partials are its own: b's block count does not matter
  CHECK(total.value() == 40);
}

TEST_CASE("GraphTensor.one_node_fills_a_blocks_padding_of_every_padded_tensor") {
  // 2D, 3 x 2 blocks, two padded tensors read at diagonal neighbours: each
  // block's padding comes from up to 5 blocks, corners included, for both.
  constexpr std::size_t nx = 12, ny = 8;
  weft::Tensor<double, 2> a({3, 2}, 1, nx, ny), b({3, 2}, 1, nx, ny), out({3, 2}, nx, ny);
  for (std::size_t j = 0; j < ny; ++j)
    for (std::size_t i = 0; i < nx; ++i) {
      a(i, j) = static_cast<double>(i + 100 * j);
      b(i, j) = static_cast<double>(10000 * (i + 1) + j);
    }
  weft::Graph g;
  g.split(
       [](auto& in_a, auto& in_b, auto& o) {
         *o = *in_a.offset(weft::dim_x, 1).offset(weft::dim_y, 1) -
              *in_b.offset(weft::dim_x, -1).offset(weft::dim_y, -1);
       },
       weft::concurrent_padded_access(a), weft::concurrent_padded_access(b), out)
      .named("diag");
  const nlohmann::json doc = g.to_json();
  REQUIRE(nodes_of_kind(doc, "copy").size() == 6);
  for (int block = 0; block < 6; ++block) {
    const int fill = *g.find("diag.pad" + std::to_string(block)),
              kernel = *g.find("diag." + std::to_string(block));
    CHECK(g.node(fill).partition == block);
    CHECK(predecessors_of(doc, kernel) == EdgeSet{{fill, kernel}});
  }
  weft::Executor executor(weft::test::with_virtual_devices(2, 3));
  executor.run(g).wait().get();
  for (std::size_t j = 0; j < ny; ++j)
    for (std::size_t i = 0; i < nx; ++i) {
      const double up_right = i + 1 < nx && j + 1 < ny ? a(i + 1, j + 1) : 0.0;
      const double down_left = i > 0 && j > 0 ? b(i - 1, j - 1) : 0.0;
      CAPTURE(i);
      CAPTURE(j);
      CHECK(out(i, j) == up_right - down_left);
    }
}

TEST_CASE("GraphTensor.named_names_the_copies_and_the_finishing_node_by_role") {
  weft::Tensor<double, 1> x({3}, 1, 30), y({3}, 30);
  auto total = weft::make_reduction_result<double>(0.0);
  weft::Graph g;
  g.split([](auto& in, auto& out) { *out = *in.offset(0, 1); }, weft::concurrent_padded_access(x), y)
      .named("diff");
  g.then_reduce(y, total).named("total");
  // diff.pad<b> fills block b's padding from its neighbours.
  for (const char* name :
       {"diff.0", "diff.2", "diff.pad0", "diff.pad1", "diff.pad2", "total.0", "total.2", "total.finish"})
    CHECK_MESSAGE(g.find(name).has_value(), name);
  CHECK(g.node(*g.find("diff.pad2")).kind == weft::NodeKind::Copy);
  CHECK(g.node(*g.find("diff.pad2")).partition == 2);
  CHECK(g.node(*g.find("total.finish")).partition == -1);
}

namespace {
// Sums a cell's two neighbours, but leaves the blocks `quiet` marks alone.
struct NeighbourSumUnlessQuiet {
  template <class In, class Out>
  void operator()(In& in, Out& out, const int* /*quiet*/) const {
    *out = *in.offset(0, -1) + *in.offset(0, 1);
  }
  template <class In, class Out>
  bool skip_block(std::size_t block, const In&, const Out&, const int* quiet) const {
    return quiet[block] != 0;
  }
};
}  // namespace

TEST_CASE("GraphTensor.a_block_the_kernel_skips_gets_no_padding_copies") {
  weft::Tensor<int, 1> x({4}, 1, 40), y({4}, 40);  // blocks of 10 cells, 1 cell of padding
  for (int i = 0; i < 40; ++i) x(i) = i;
  for (std::size_t b = 0; b < 4; ++b) {  // padding marked, to see what was copied
    *x.iterator(b, {-1}) = -100;
    *x.iterator(b, {10}) = -100;
  }
  int quiet[4] = {0, 1, 0, 0};
  weft::Graph g;
  g.split(NeighbourSumUnlessQuiet{}, weft::concurrent_padded_access(x), y, static_cast<const int*>(quiet));
  weft::Executor executor(weft::test::cpu_only(2));
  executor.run(g).wait().get();

  CHECK(*x.iterator(1, {-1}) == -100);  // no copies into the skipped block
  CHECK(*x.iterator(1, {10}) == -100);
  CHECK(*x.iterator(0, {10}) == 10);  // copies into the others, from it too
  CHECK(*x.iterator(2, {-1}) == 19);
  CHECK(*x.iterator(2, {10}) == 30);
  for (int i = 10; i < 20; ++i) CHECK(y(i) == 0);  // the kernel skipped it
  CHECK(y(9) == 8 + 10);
  CHECK(y(20) == 19 + 21);

  quiet[1] = 0;  // asked again on every run
  executor.run(g).wait().get();
  CHECK(*x.iterator(1, {-1}) == 9);
  CHECK(*x.iterator(1, {10}) == 20);
  for (int i = 10; i < 20; ++i) CHECK(y(i) == (i - 1) + (i + 1));  // padding 9 and 20 included
}

namespace {
// Sums a cell's two neighbours; the copy from block `from` into block `to`'s
// padding is needless where current[from * 4 + to] says its padding is current.
struct NeighbourSumWithCurrentPadding {
  template <class In, class Out>
  void operator()(In& in, Out& out, const int* /*current*/) const {
    *out = *in.offset(0, -1) + *in.offset(0, 1);
  }
  template <class In, class Out>
  bool skip_padding_copy(std::size_t from, std::size_t to, const In&, const Out&, const int* current) const {
    return current[from * 4 + to] != 0;
  }
};
}  // namespace

TEST_CASE("GraphTensor.a_padding_copy_the_kernel_calls_needless_copies_nothing") {
  weft::Tensor<int, 1> x({4}, 1, 40), y({4}, 40);  // blocks of 10 cells, 1 cell of padding
  for (int i = 0; i < 40; ++i) x(i) = i;
  for (std::size_t b = 0; b < 4; ++b) {  // padding marked, to see what was copied
    *x.iterator(b, {-1}) = -100;
    *x.iterator(b, {10}) = -100;
  }
  int current[16] = {};
  current[1 * 4 + 2] = 1;  // block 2's padding from block 1 (cell 9 of 2's left) is current
  weft::Graph g;
  g.split(NeighbourSumWithCurrentPadding{}, weft::concurrent_padded_access(x), y,
          static_cast<const int*>(current));
  weft::Executor executor(weft::test::cpu_only(2));
  executor.run(g).wait().get();

  CHECK(*x.iterator(2, {-1}) == -100);  // that copy alone copied nothing
  CHECK(*x.iterator(2, {10}) == 30);
  CHECK(*x.iterator(1, {10}) == 20);  // the other direction between 1 and 2 still copies
  CHECK(*x.iterator(0, {10}) == 10);
  CHECK(*x.iterator(3, {-1}) == 29);
  CHECK(y(20) == -100 + 21);  // the kernel read what the padding held
  CHECK(y(25) == 24 + 26);    // and ran on every block

  current[1 * 4 + 2] = 0;  // asked again on every run
  executor.run(g).wait().get();
  CHECK(*x.iterator(2, {-1}) == 19);
  CHECK(y(20) == 19 + 21);
}

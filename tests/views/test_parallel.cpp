// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Execution policies, parallel_for, parallel_reduce, reducers and
// ReductionResult: every index visited once, the MDRange order, reductions
// equal to serial references and deterministic, exceptions, nesting inside
// jobs, and many calls from two threads on one executor.
#include <weft/runtime/executor.hpp>
#include <weft/runtime/task_group.hpp>
#include <weft/views/current_executor.hpp>
#include <weft/views/parallel_for.hpp>
#include <weft/views/parallel_reduce.hpp>
#include <weft/views/range_policy.hpp>
#include <weft/views/reducers.hpp>
#include <weft/views/reduction_result.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "../executor_configs.hpp"
#include "../test_support.hpp"

namespace {

// How often each index of [0, n) was visited.
class VisitCounts {
 public:
  explicit VisitCounts(std::size_t n) : counts_(n) {}
  void visit(std::int64_t i) const {
    counts_.at(static_cast<std::size_t>(i)).fetch_add(1, std::memory_order_relaxed);
  }
  // Indices not visited exactly once.
  std::size_t wrong() const {
    return static_cast<std::size_t>(std::count_if(counts_.begin(), counts_.end(), [](const auto& c) {
      return c.load(std::memory_order_relaxed) != 1;
    }));
  }

 private:
  mutable std::vector<std::atomic<int>> counts_;
};

// Pseudo-random values, the same on every run.
std::vector<std::int64_t> sample_values(std::size_t n) {
  std::vector<std::int64_t> values(n);
  std::uint64_t state = 0x2545F4914F6CDD1Dull;
  for (auto& v : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<std::int64_t>(state >> 33) - (std::int64_t{1} << 30);
  }
  return values;
}

std::uint64_t bits_of(double d) {
  std::uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}

struct Best {
  double value;
  std::int64_t index;
};

// Argmax, the first index on ties: a user reducer over a user type.
struct ArgMaxReducer {
  void init(Best& best) const { best = {-std::numeric_limits<double>::infinity(), -1}; }
  void join(Best& into, const Best& from) const {
    if (from.value > into.value || (from.value == into.value && from.index >= 0 && from.index < into.index))
      into = from;
  }
};

}  // namespace

// ---- policies ----------------------------------------------------------------

TEST_CASE("RangePolicy.describes_a_half_open_range") {
  weft::Executor executor(weft::test::cpu_only(1));
  const weft::RangePolicy policy(executor, 3, 10);
  CHECK(policy.begin() == 3);
  CHECK(policy.end() == 10);
  CHECK(policy.size() == 7);
  CHECK(policy.executor() == &executor);
  CHECK(policy.chunk_size() == 0);
  CHECK(weft::RangePolicy(0, 5).chunk_size(2).chunk_size() == 2);

  // Mixed index types meet in their common type.
  const std::size_t n = 12;
  const weft::RangePolicy mixed(0, n);
  static_assert(std::is_same_v<decltype(mixed)::index_type, std::size_t>);
  CHECK(mixed.size() == 12);
  CHECK(weft::RangePolicy(INT_MIN, INT_MAX).size() == std::uint64_t{UINT_MAX});
}

TEST_CASE("RangePolicy.end_before_begin_is_an_error") {
  CHECK(weft::test::invalid_argument_message([] { weft::RangePolicy(5, 3); }) ==
        "RangePolicy: end 3 is before begin 5 (expected begin <= end)");
  CHECK(weft::test::invalid_argument_message([] { weft::parallel_for(-2, [](int) {}); }) ==
        "RangePolicy: end -2 is before begin 0 (expected begin <= end)");
}

TEST_CASE("MDRangePolicy.resolves_tiles_and_rejects_bad_bounds") {
  const weft::MDRangePolicy<3> automatic({0, 0, 0}, {100, 7, 5});
  CHECK(automatic.size() == 3500);
  CHECK(automatic.tile() == std::array<std::uint64_t, 3>{100, 1, 1});  // whole rows: stride-1 inner loops
  CHECK(automatic.work_items() == 35);

  const weft::MDRangePolicy<2> tiled({2, -3}, {50, 40}, {7, 100});
  CHECK(tiled.extent(0) == 48);
  CHECK(tiled.extent(1) == 43);
  CHECK(tiled.tile() == std::array<std::uint64_t, 2>{7, 43});  // a tile never exceeds its extent
  CHECK(tiled.work_items() == 7);

  CHECK(weft::MDRangePolicy<2>({0, 4}, {10, 4}).work_items() == 0);

  CHECK(weft::test::invalid_argument_message([] {
          weft::MDRangePolicy<2>({0, 5}, {4, 3});
        }) == "MDRangePolicy: dimension 1 end 3 is before begin 5 (expected begin <= end)");
  CHECK(weft::test::invalid_argument_message([] {
          weft::MDRangePolicy<2>({0, 0}, {4, 3}, {-1, 0});
        }) == "MDRangePolicy: tile size -1 for dimension 0 (expected > 0, or 0 for automatic)");
}

// ---- parallel_for ------------------------------------------------------------

TEST_CASE("ParallelFor.visits_every_index_once.4threads") {
  weft::Executor executor(weft::test::cpu_only(4));
  for (std::int64_t n : {0, 1, 2047, 2048, 2049, 100'000, 1'000'000}) {
    CAPTURE(n);
    VisitCounts counts(static_cast<std::size_t>(n));
    weft::parallel_for(weft::RangePolicy(executor, std::int64_t{0}, n),
                       [&](std::int64_t i) { counts.visit(i); });
    CHECK(counts.wrong() == 0);
  }
}

TEST_CASE("ParallelFor.offsets_negative_and_unsigned_indices.3threads") {
  weft::Executor executor(weft::test::cpu_only(3));
  {
    VisitCounts counts(10'000);
    weft::parallel_for(weft::RangePolicy(executor, -5000, 5000), [&](int i) { counts.visit(i + 5000); });
    CHECK(counts.wrong() == 0);
  }
  {
    VisitCounts counts(5000);
    weft::parallel_for(weft::RangePolicy(executor, std::size_t{10}, std::size_t{5010}).chunk_size(100),
                       [&](std::size_t i) { counts.visit(static_cast<std::int64_t>(i) - 10); });
    CHECK(counts.wrong() == 0);
  }
  {
    // Up to the largest int: the loop must stop without overflowing.
    VisitCounts counts(5000);
    weft::parallel_for(weft::RangePolicy(executor, INT_MAX - 5000, INT_MAX).chunk_size(64),
                       [&](int i) { counts.visit(i - (INT_MAX - 5000)); });
    CHECK(counts.wrong() == 0);
  }
}

TEST_CASE("ParallelFor.small_ranges_run_inline_on_the_caller.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  const auto caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  weft::parallel_for(weft::RangePolicy(executor, 0, 2000), [&](int) {
    if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
  });
  CHECK(elsewhere.load() == 0);
}

TEST_CASE("ParallelFor.large_ranges_spread_over_workers.4threads") {
  weft::Executor executor(weft::test::cpu_only(4));
  std::mutex mutex;
  std::set<std::thread::id> threads;
  // Slow chunks: helpers have ample time to join in.
  weft::parallel_for(weft::RangePolicy(executor, 0, 64).chunk_size(1), [&](int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard<std::mutex> lock(mutex);
    threads.insert(std::this_thread::get_id());
  });
  CHECK(threads.size() >= 2);
}

TEST_CASE("ParallelFor.shorthand_runs_on_the_default_executor") {
  std::atomic<int> on_default{0};
  VisitCounts counts(50'000);
  weft::parallel_for(50'000, [&](int i) {
    counts.visit(i);
    if (&weft::current_executor() == &weft::default_executor()) on_default.fetch_add(1);
  });
  CHECK(counts.wrong() == 0);
  CHECK(on_default.load() == 50'000);
}

TEST_CASE("ParallelFor.executor_with_only_gpu_priority_workers.virtual_devices") {
  weft::ExecutorConfig config;
  config.cpu_workers = 0;
  config.virtual_devices = 1;
  config.use_cuda = false;
  weft::Executor executor(config);
  REQUIRE(executor.cpu_worker_count() == 0);
  VisitCounts counts(100'000);
  weft::parallel_for(weft::RangePolicy(executor, 0, 100'000), [&](int i) { counts.visit(i); });
  CHECK(counts.wrong() == 0);
}

TEST_CASE("ParallelFor.mdrange_rows_are_visited_with_dim0_fastest.3threads") {
  weft::Executor executor(weft::test::cpu_only(3));
  SUBCASE("one chunk: the whole order is i fastest, then j") {
    std::vector<std::pair<std::int64_t, std::int64_t>> order;
    weft::parallel_for(weft::MDRangePolicy<2>(executor, {0, 0}, {20, 10}),
                       [&](std::int64_t i, std::int64_t j) { order.emplace_back(i, j); });
    REQUIRE(order.size() == 200);
    for (std::size_t k = 0; k < order.size(); ++k) {
      CHECK(order[k].first == static_cast<std::int64_t>(k % 20));
      CHECK(order[k].second == static_cast<std::int64_t>(k / 20));
    }
  }
  SUBCASE("tiles: tile by tile, i fastest inside each and among them") {
    std::vector<std::pair<std::int64_t, std::int64_t>> order, expected;
    weft::parallel_for(weft::MDRangePolicy<2>(executor, {0, 0}, {8, 6}, {4, 3}),
                       [&](std::int64_t i, std::int64_t j) { order.emplace_back(i, j); });
    for (std::int64_t tile_j = 0; tile_j < 6; tile_j += 3)
      for (std::int64_t tile_i = 0; tile_i < 8; tile_i += 4)
        for (std::int64_t j = tile_j; j < tile_j + 3; ++j)
          for (std::int64_t i = tile_i; i < tile_i + 4; ++i) expected.emplace_back(i, j);
    CHECK(order == expected);
  }
  SUBCASE("many chunks: each row in one chunk, i ascending") {
    const std::int64_t nx = 300, ny = 200;
    std::vector<std::vector<std::int64_t>> rows(ny);  // a row belongs to one chunk, so to one thread
    weft::parallel_for(
        weft::MDRangePolicy<2>(executor, {0, 0}, {nx, ny}),
        [&](std::int64_t i, std::int64_t j) { rows[static_cast<std::size_t>(j)].push_back(i); });
    std::vector<std::int64_t> ascending(nx);
    std::iota(ascending.begin(), ascending.end(), 0);
    for (const auto& row : rows) CHECK(row == ascending);
  }
}

TEST_CASE("ParallelFor.mdrange_tiles_cover_every_index_once.3threads") {
  weft::Executor executor(weft::test::cpu_only(3));
  {
    VisitCounts counts(48 * 43);
    weft::parallel_for(weft::MDRangePolicy<2>(executor, {2, -3}, {50, 40}, {7, 5}).chunk_size(1),
                       [&](std::int64_t i, std::int64_t j) { counts.visit((i - 2) + 48 * (j + 3)); });
    CHECK(counts.wrong() == 0);
  }
  {
    VisitCounts counts(30 * 20 * 10);
    weft::parallel_for(
        weft::MDRangePolicy<3, int>(executor, {0, 0, 0}, {30, 20, 10}, {4, 3, 2}).chunk_size(3),
        [&](int i, int j, int k) { counts.visit(i + 30 * (j + 20 * k)); });
    CHECK(counts.wrong() == 0);
  }
  {
    VisitCounts counts(40 * 9 * 8 * 7);
    weft::parallel_for(weft::MDRangePolicy<4>(executor, {0, 0, 0, 0}, {40, 9, 8, 7}),
                       [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t l) {
                         counts.visit(i + 40 * (j + 9 * (k + 8 * l)));
                       });
    CHECK(counts.wrong() == 0);
  }
  std::atomic<int> calls{0};
  weft::parallel_for(weft::MDRangePolicy<2>(executor, {0, 7}, {100, 7}),
                     [&](std::int64_t, std::int64_t) { calls.fetch_add(1); });
  CHECK(calls.load() == 0);
}

TEST_CASE("ParallelFor.exception_is_rethrown_and_executor_stays_usable.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  CHECK_THROWS_WITH_AS(weft::parallel_for(weft::RangePolicy(executor, 0, 1'000'000),
                                          [](int i) {
                                            if (i == 777'777) throw std::runtime_error("bad index 777777");
                                          }),
                       "bad index 777777", std::runtime_error);

  // Once a chunk threw, chunks not yet started are skipped.
  const int n = 20'000;
  std::atomic<int> calls{0};
  CHECK_THROWS_AS(weft::parallel_for(weft::RangePolicy(executor, 0, n).chunk_size(1),
                                     [&](int) {
                                       calls.fetch_add(1);
                                       throw std::logic_error("every index fails");
                                     }),
                  std::logic_error);
  CHECK(calls.load() < n / 2);

  VisitCounts counts(300'000);
  weft::parallel_for(weft::RangePolicy(executor, 0, 300'000), [&](int i) { counts.visit(i); });
  CHECK(counts.wrong() == 0);
}

TEST_CASE("ParallelFor.nested_inside_a_parallel_for_body.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  std::atomic<std::int64_t> inner_calls{0};
  std::atomic<int> wrong_executor{0};
  weft::parallel_for(weft::RangePolicy(executor, 0, 32).chunk_size(1), [&](int) {
    // No executor named: the inner loop stays on the outer one's.
    weft::parallel_for(10'000, [&](int) {
      if (&weft::current_executor() != &executor) wrong_executor.fetch_add(1);
      inner_calls.fetch_add(1, std::memory_order_relaxed);
    });
  });
  CHECK(inner_calls.load() == 32 * 10'000);
  CHECK(wrong_executor.load() == 0);
}

TEST_CASE("ParallelFor.nested_inside_task_group_jobs.2threads") {
  for (int workers : {1, 2}) {
    CAPTURE(workers);
    weft::Executor executor(weft::test::cpu_only(workers));
    weft::TaskGroup group(executor);
    std::vector<std::int64_t> sums(8, -1);
    for (std::size_t job = 0; job < sums.size(); ++job) {
      group.run([&, job] {
        std::int64_t sum = 0;
        if (job % 2 == 0) {
          weft::parallel_reduce(
              weft::RangePolicy(executor, std::int64_t{0}, std::int64_t{100'000}),
              [](std::int64_t i, std::int64_t& partial) { partial += i; }, sum);
        } else {
          // A job's policies run on the executor running the job.
          if (&weft::current_executor() != &executor) sum = -1'000'000'000;
          std::vector<std::atomic<std::int64_t>> cells(4);
          weft::parallel_for(std::int64_t{100'000}, [&](std::int64_t i) {
            cells[static_cast<std::size_t>(i % 4)].fetch_add(i, std::memory_order_relaxed);
          });
          for (const auto& cell : cells) sum += cell.load();
        }
        sums[job] = sum;
      });
    }
    group.wait();
    for (std::int64_t sum : sums) CHECK(sum == std::int64_t{100'000} * 99'999 / 2);
  }
}

// ---- parallel_reduce ---------------------------------------------------------

TEST_CASE("ParallelReduce.sum_max_min_equal_serial_references.4threads") {
  weft::Executor executor(weft::test::cpu_only(4));
  const std::vector<std::int64_t> values = sample_values(1'000'000);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3000}, values.size()}) {
    CAPTURE(n);
    const weft::RangePolicy policy(executor, std::size_t{0}, n);
    std::int64_t sum = 999, largest = 0, smallest = 0;  // overwritten, never joined with
    weft::parallel_reduce(
        policy, [&](std::size_t i, std::int64_t& s) { s += values[i]; }, sum);
    weft::parallel_reduce(
        policy, [&](std::size_t i, std::int64_t& m) { m = std::max(m, values[i]); }, weft::MaxReducer(),
        largest);
    weft::parallel_reduce(
        policy, [&](std::size_t i, std::int64_t& m) { m = std::min(m, values[i]); }, weft::MinReducer(),
        smallest);

    const auto first = values.begin(), last = values.begin() + static_cast<std::ptrdiff_t>(n);
    CHECK(sum == std::accumulate(first, last, std::int64_t{0}));
    CHECK(largest == (n == 0 ? std::numeric_limits<std::int64_t>::lowest() : *std::max_element(first, last)));
    CHECK(smallest == (n == 0 ? std::numeric_limits<std::int64_t>::max() : *std::min_element(first, last)));
  }
}

TEST_CASE("ParallelReduce.double_sums_are_deterministic.3threads") {
  weft::Executor executor(weft::test::cpu_only(3));
  const std::size_t n = 1'000'003;
  const auto term = [](std::size_t i) { return 1.0 / (1.0 + static_cast<double>(i % 977) * 0.37); };
  const auto reduce = [&](weft::Executor& on) {
    double sum = 0.0;
    weft::parallel_reduce(
        weft::RangePolicy(on, std::size_t{0}, n).chunk_size(4096),
        [&](std::size_t i, double& s) { s += term(i); }, weft::SumReducer<double>(), sum);
    return sum;
  };
  // The same chunks joined in chunk order, serially.
  double expected = 0.0;
  for (std::size_t first = 0; first < n; first += 4096) {
    double partial = 0.0;
    for (std::size_t i = first; i < std::min(n, first + 4096); ++i) partial += term(i);
    expected += partial;
  }
  weft::Executor single(weft::test::cpu_only(1));
  CHECK(bits_of(reduce(executor)) == bits_of(expected));
  CHECK(bits_of(reduce(executor)) == bits_of(expected));
  CHECK(bits_of(reduce(single)) == bits_of(expected));  // with a fixed chunk size, whatever the workers

  // Automatic chunking: stable between calls on one executor.
  double a = 0.0, b = 0.0;
  weft::parallel_reduce(
      weft::RangePolicy(executor, std::size_t{0}, n), [&](std::size_t i, double& s) { s += term(i); }, a);
  weft::parallel_reduce(
      weft::RangePolicy(executor, std::size_t{0}, n), [&](std::size_t i, double& s) { s += term(i); }, b);
  CHECK(bits_of(a) == bits_of(b));
  CHECK(a == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("ParallelReduce.user_reducer_finds_the_first_argmax.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  std::vector<double> values(200'000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>((i * 7919) % 100'000);
  values[123'456] = 1e9;
  values[150'000] = 1e9;  // a tie: the first index wins
  Best best{0.0, 0};
  weft::parallel_reduce(
      weft::RangePolicy(executor, std::int64_t{0}, static_cast<std::int64_t>(values.size())),
      [&](std::int64_t i, Best& b) {
        const double v = values[static_cast<std::size_t>(i)];
        if (v > b.value) b = {v, i};
      },
      ArgMaxReducer(), best);
  CHECK(best.value == 1e9);
  CHECK(best.index == 123'456);
}

TEST_CASE("ParallelReduce.mdrange_sum.3threads") {
  weft::Executor executor(weft::test::cpu_only(3));
  const std::int64_t nx = 500, ny = 300, nz = 4;
  std::int64_t sum = 0;
  weft::parallel_reduce(
      weft::MDRangePolicy<3>(executor, {0, 0, 0}, {nx, ny, nz}),
      [](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t& s) { s += i * j + k; },
      weft::SumReducer(), sum);
  const std::int64_t expected =
      nz * (nx * (nx - 1) / 2) * (ny * (ny - 1) / 2) + nx * ny * (nz * (nz - 1) / 2);
  CHECK(sum == expected);
}

TEST_CASE("ParallelReduce.exception_leaves_the_result_untouched.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  std::int64_t sum = 42;
  CHECK_THROWS_AS(weft::parallel_reduce(
                      weft::RangePolicy(executor, 0, 500'000),
                      [](int i, std::int64_t& s) {
                        if (i == 400'000) throw std::runtime_error("overflow");
                        s += i;
                      },
                      sum),
                  std::runtime_error);
  CHECK(sum == 42);
  weft::parallel_reduce(
      weft::RangePolicy(executor, 0, 500'000), [](int i, std::int64_t& s) { s += i; }, sum);
  CHECK(sum == std::int64_t{500'000} * 499'999 / 2);
}

// ---- ReductionResult ---------------------------------------------------------

TEST_CASE("ReductionResult.copies_share_one_state") {
  auto result = weft::make_reduction_result<double>(0.0);
  CHECK_FALSE(result.is_complete());
  CHECK(result.value() == 0.0);

  weft::ReductionResult<double> copy = result;  // what a graph node holds
  CHECK(result.use_count() == 2);
  copy.prepare(2, weft::SumReducer());
  copy.partial(0) = 1.5;
  copy.partial(1) = 2.0;
  copy.finish(weft::SumReducer());
  CHECK(result.is_complete());
  CHECK(result.value() == 3.5);
}

TEST_CASE("ReductionResult.value_and_reset_returns_to_the_initial_value") {
  auto result = weft::make_reduction_result<int>(10);  // the initial value takes part in the reduction
  weft::parallel_reduce(
      100, [](int i, int& s) { s += i; }, result);
  CHECK(result.is_complete());
  CHECK(result.value() == 10 + 4950);
  CHECK(result.value_and_reset() == 10 + 4950);
  CHECK_FALSE(result.is_complete());
  CHECK(result.value() == 10);

  // Listing 9's loop: map, reduce, test and reset, until the sum reaches zero.
  std::vector<int> x(1000, 4);
  auto sum = weft::make_reduction_result<int>(0);
  int passes = 0;
  do {
    ++passes;
    weft::parallel_for(x.size(), [&](std::size_t i) { x[i] -= 1; });
    weft::parallel_reduce(
        x.size(), [&](std::size_t i, int& s) { s += x[i]; }, weft::SumReducer(), sum);
  } while (sum.value_and_reset() != 0);
  CHECK(passes == 4);
}

TEST_CASE("ReductionResult.finish_joins_the_initial_value_and_partials_in_partition_order") {
  // A join that is not commutative shows the order: digits appended in turn.
  struct AppendDigit {
    void init(long& v) const { v = 0; }
    void join(long& into, const long& from) const { into = into * 10 + from; }
  };
  auto digits = weft::make_reduction_result<long>(9);
  digits.prepare(3, AppendDigit{});
  digits.partial(2) = 3;  // filled out of order, as partitions finish
  digits.partial(0) = 1;
  digits.partial(1) = 2;
  digits.finish(AppendDigit{});
  CHECK(digits.value() == 9123);
}

TEST_CASE("ReductionResult.partitions_fill_their_slots_from_jobs.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  auto largest = weft::make_reduction_result<double>(-1.0);
  largest.prepare(4, weft::MaxReducer());
  CHECK(largest.partitions() == 4);
  CHECK(largest.partial(3) == -std::numeric_limits<double>::infinity());  // the identity, not a leftover
  const auto line = [&](std::size_t p) { return reinterpret_cast<std::uintptr_t>(&largest.partial(p)) / 64; };
  CHECK(line(0) != line(1));  // partitions finishing at once do not share a cache line

  // Each partition reduces its quarter on its own job, as a graph's reduce nodes do.
  weft::TaskGroup group(executor);
  for (std::size_t p = 0; p < 3; ++p) {  // partition 3 stays empty
    group.run([&, p] {
      weft::parallel_reduce(
          weft::RangePolicy(executor, std::int64_t(p) * 10'000, std::int64_t(p + 1) * 10'000),
          [](std::int64_t i, double& m) { m = std::max(m, static_cast<double>(i % 7'777)); },
          weft::MaxReducer(), largest.partial(p));
    });
  }
  group.wait();
  CHECK_FALSE(largest.is_complete());
  CHECK(largest.value() == -1.0);
  largest.finish(weft::MaxReducer());
  CHECK(largest.is_complete());
  CHECK(largest.value() == 7'776.0);

  CHECK_THROWS_WITH_AS(largest.partial(4), "ReductionResult: partial 4 out of range (4 partitions prepared)",
                       std::out_of_range);
}

// ---- stress --------------------------------------------------------------------

TEST_CASE("ParallelStress.two_threads_share_one_executor.2threads") {
  weft::Executor executor(weft::test::cpu_only(2));
  std::atomic<int> failures{0};
  const auto client = [&](int seed) {
    std::vector<int> cells(10'000);
    for (int round = 0; round < 60; ++round) {
      const int value = seed * 1000 + round;
      weft::parallel_for(weft::RangePolicy(executor, std::size_t{0}, cells.size()).chunk_size(256),
                         [&](std::size_t i) { cells[i] = value; });
      std::int64_t sum = 0;
      weft::parallel_reduce(
          weft::RangePolicy(executor, std::size_t{0}, cells.size()).chunk_size(300),
          [&](std::size_t i, std::int64_t& s) { s += cells[i]; }, sum);
      if (sum != std::int64_t{value} * 10'000) failures.fetch_add(1);
      auto result = weft::make_reduction_result<int>(0);
      weft::parallel_reduce(
          weft::MDRangePolicy<2>(executor, {0, 0}, {100, 100}, {10, 10}).chunk_size(2),
          [&](std::int64_t i, std::int64_t j, int& m) {
            m = std::max(m, cells[static_cast<std::size_t>(i + 100 * j)]);
          },
          weft::MaxReducer(), result);
      if (!result.is_complete() || result.value() != value) failures.fetch_add(1);
    }
  };
  std::thread first(client, 1);
  std::thread second(client, 2);
  first.join();
  second.join();
  CHECK(failures.load() == 0);
}

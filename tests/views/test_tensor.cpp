// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tensors split into blocks with padding (Ripple section 4.1), their
// iterators (5.2), and the host-side helpers a graph's nodes use.
#include <doctest/doctest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <weft/backends/memory_space.hpp>
#include <weft/runtime/task_group.hpp>
#include <weft/views/block_kernel.hpp>
#include <weft/views/boundary_loader.hpp>
#include <weft/views/tensor.hpp>
#include <weft/views/unrolled_for.hpp>

#include "../executor_configs.hpp"
#include "../test_support.hpp"
#include "two_component_cell.hpp"

TEST_CASE("Tensor.listing1_splits_give_the_documented_block_sizes") {
  weft::Tensor<double, 2> t({2, 2}, 1000, 1000);
  CHECK(t.block_count() == 4);
  CHECK(t.device_count() == 4);
  for (std::size_t b = 0; b < 4; ++b) CHECK(t.block_space(b).extent == weft::Extents<2>{500, 500});

  weft::Tensor<double, 2> s({2, 2}, {2, 2}, 1000, 1000);
  CHECK(s.block_count() == 16);
  CHECK(s.device_count() == 4);
  for (std::size_t b = 0; b < 16; ++b) CHECK(s.block_space(b).extent == weft::Extents<2>{250, 250});
  // Blocks count dimension 0 fastest; the 2x2 blocks of a device share it.
  CHECK(s.device_of(0) == 0);
  CHECK(s.device_of(1) == 0);
  CHECK(s.device_of(2) == 1);
  CHECK(s.device_of(4) == 0);
  CHECK(s.device_of(8) == 2);
  CHECK(s.device_of(15) == 3);
}

TEST_CASE("Tensor.uneven_sizes_give_the_first_blocks_one_cell_more") {
  weft::Tensor<int, 1> x({3}, 10);
  CHECK(x.block_space(0).extent[0] == 4);
  CHECK(x.block_space(1).extent[0] == 3);
  CHECK(x.block_space(2).extent[0] == 3);
  CHECK(x.block_place(2).origin[0] == 7);
  for (int i = 0; i < 10; ++i) x(i) = i;
  for (int i = 0; i < 10; ++i) CHECK(x(i) == i);  // every index maps to one distinct cell
}

TEST_CASE("Tensor.padding_is_one_more_trailing_integer") {
  weft::Tensor<double, 1> p({4}, 2, 100);
  CHECK(p.padding() == 2);
  CHECK(p.size(0) == 100);
  CHECK(p.block_space(0).padded[0] == 29);
  weft::Tensor<float, 2> q({1, 2}, {1, 2}, 1, 8, 8);
  CHECK(q.padding() == 1);
  CHECK(q.block_count() == 4);
  CHECK(q.block_space(0).padded == weft::Extents<2>{10, 4});
}

TEST_CASE("Tensor.bad_shapes_and_indices_are_reported") {
  CHECK(weft::test::invalid_argument_message([] { weft::Tensor<double, 1> t({0}, 10); }) ==
        "Tensor: partitions (0) and sub-partitions (1) must all be at least 1");
  CHECK(weft::test::invalid_argument_message([] {
          weft::Tensor<double, 2> t({4, 1}, {2, 1}, 7, 3);
        }) ==
        "Tensor: dimension 0 has 7 cells, too few for 8 blocks (partitions (4, 1) times sub-partitions (2, "
        "1))");
  weft::Tensor<double, 2> t({2, 1}, 4, 8);
  CHECK_THROWS_WITH_AS(t(4, 3), "Tensor index (4, 3) out of bounds (4, 8)", std::out_of_range);
  CHECK_THROWS_AS(t.block_space(2), std::out_of_range);
  CHECK_THROWS_AS((weft::Tensor<double, 1>{}.block_count()), std::logic_error);
}

namespace {

template <class F>
std::string allocation_error_message(F&& f) {
  return weft::test::thrown_message<weft::AllocationError>(f);
}

constexpr std::size_t two_to_the(int power) { return std::size_t{1} << power; }

}  // namespace

TEST_CASE("Tensor.sizes_whose_product_overflows_are_refused") {
  // 2^61 x 8 doubles is 2^67 bytes: refused before any block is allocated,
  // never wrapped into a small block that kernels then write past.
  CHECK(allocation_error_message([] {
          weft::Tensor<double, 2> t({1, 1}, two_to_the(61), 8);
        }) == "Tensor: sizes 2305843009213693952 x 8 of 8-byte elements overflow std::size_t");
  CHECK(allocation_error_message([] {
          weft::Tensor<double, 2> t({1, 1}, 1, two_to_the(61), 8);
        }) == "Tensor: sizes 2305843009213693952 x 8 (+ padding 1) of 8-byte elements overflow std::size_t");
  // Cells that fit, bytes that do not.
  CHECK(allocation_error_message([] { weft::Tensor<float, 1> t({1}, two_to_the(62)); }) ==
        "Tensor: sizes 4611686018427387904 of 4-byte elements overflow std::size_t");
  // Padding alone: 2 x padding wraps.
  CHECK(allocation_error_message([] { weft::Tensor<char, 1> t({1}, two_to_the(63), 4); }) ==
        "Tensor: sizes 4 (+ padding 9223372036854775808) of 1-byte elements overflow std::size_t");
  CHECK_THROWS_AS((weft::Tensor<double, 2>({1, 1}, two_to_the(32), two_to_the(32))), std::bad_alloc);
}

TEST_CASE("Tensor.partitioned_sizes_that_overflow_are_refused") {
  // Each of 4 blocks holds 2^60 x 16 cells: 2^64, one more than size_t counts.
  CHECK(allocation_error_message([] {
          weft::Tensor<char, 2> t({2, 1}, {2, 1}, two_to_the(62), 16);
        }) ==
        "Tensor: sizes 4611686018427387904 x 16 of 1-byte elements in 4 blocks of up to "
        "1152921504606846976 x 16 cells overflow std::size_t");
  // Every block fits; all of them together do not.
  const std::size_t max = std::numeric_limits<std::size_t>::max();
  CHECK(allocation_error_message([&] { weft::Tensor<char, 1> t({4}, 1, max); }) ==
        "Tensor: sizes 18446744073709551615 (+ padding 1) of 1-byte elements in 4 blocks of up to "
        "4611686018427387904 cells overflow std::size_t");
  // Partitions times sub-partitions, and the number of blocks, must fit too.
  CHECK(weft::test::invalid_argument_message(
            [] { weft::Tensor<double, 1> t({two_to_the(32)}, {two_to_the(32)}, 100); }) ==
        "Tensor: dimension 0 has 100 cells, too few for 4294967296 x 4294967296 blocks (partitions "
        "(4294967296) times sub-partitions (4294967296))");
  CHECK(allocation_error_message([] {
          weft::Tensor<char, 2> t({two_to_the(33), two_to_the(33)}, two_to_the(40), two_to_the(40));
        }) ==
        "Tensor: sizes 1099511627776 x 1099511627776 split into 8589934592 x 8589934592 blocks: the number "
        "of blocks overflows std::size_t");
}

TEST_CASE("Tensor.copies_share_blocks_and_elements_start_zeroed") {
  weft::Tensor<double, 1> a({2}, 8);
  weft::Tensor<double, 1> b = a;
  CHECK(a(5) == 0.0);
  b(5) = 3.5;
  CHECK(a(5) == 3.5);
  CHECK(a == b);
  CHECK(a.id() == b.id());
}

TEST_CASE("Tensor.indexed_iterator_indices_and_chained_offsets") {
  weft::Tensor<int, 2> t({2, 2}, 1, 6, 4);  // blocks of 3 x 2, one cell of padding
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 6; ++i) t(i, j) = 10 * i + j;
  const std::size_t block = 3;  // coordinates (1, 1): global cells x 3..5, y 2..3
  auto it = t.iterator(block, {1, 0});
  CHECK(*it == 10 * 4 + 2);
  CHECK(it.index(weft::dim_x) == 1);
  CHECK(it.index(weft::dim_y) == 0);
  CHECK(it.global_index(weft::dim_x) == 4);
  CHECK(it.global_index(weft::dim_y) == 2);
  CHECK(it.block(weft::dim_x) == 1);
  CHECK(it.block(weft::dim_y) == 1);
  CHECK(it.global_size(weft::dim_y) == 4);
  CHECK(it.extent(weft::dim_x) == 3);
  CHECK(*it.offset(weft::dim_x, 1) == 10 * 5 + 2);
  CHECK(*it.offset(weft::dim_y, 1).offset(weft::dim_x, -1) == 10 * 3 + 3);
  auto pad = it.offset(weft::dim_y, -1);  // block (1, 0)'s cell, in this block's padding
  CHECK(pad.index(weft::dim_y) == -1);
  CHECK_FALSE(pad.is_interior());
  CHECK(it.is_interior());
  CHECK(it.offset(weft::dim_y, 1).is_global_last(weft::dim_y));
  CHECK_THROWS_AS(t.iterator(block, {0, -2}), std::out_of_range);  // beyond the padding
}

namespace {

template <class Layout>
using Sample = TwoComponentCell<Layout>;

template <class Layout>
void check_neighbour_reads_what_offset_reads() {
  weft::Tensor<Sample<Layout>, 3> t({1, 1, 2}, {2, 1, 1}, 1, 4, 3, 4);  // 2 x 1 x 2 blocks of 2 x 3 x 2
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 4; ++i) {
        t(i, j, k).value() = 100.0 * i + 10.0 * j + k;
        t(i, j, k).tag() = -(100 * i + 10 * j + k);
      }
  t.exchange_padding();
  for (std::size_t block = 0; block < t.block_count(); ++block) {
    auto it = t.iterator(block, {1, 1, 0});
    for (std::size_t dim = 0; dim < 3; ++dim) {
      for (std::ptrdiff_t step : {-1, 1}) {
        CAPTURE(block);
        CAPTURE(dim);
        CAPTURE(step);
        auto by_offset = *it.offset(dim, step);
        auto by_neighbour = it.neighbour(dim, step);  // may lie in the padding
        CHECK(by_neighbour.value() == by_offset.value());
        CHECK(by_neighbour.tag() == by_offset.tag());
      }
    }
    it.neighbour(0, -1).tag() = 7;  // a reference: writes reach the cell
    CHECK((*it.offset(0, -1)).tag() == 7);
  }
}

}  // namespace

TEST_CASE("Tensor.neighbour_reads_and_writes_the_cell_offset_reaches") {
  check_neighbour_reads_what_offset_reads<weft::StridedView>();
  check_neighbour_reads_what_offset_reads<weft::ContiguousView>();
}

TEST_CASE("Tensor.exchange_fills_padding_from_neighbours_corners_included") {
  weft::Tensor<int, 2> t({2, 2}, {1, 2}, 1, 8, 8);  // 2 x 4 blocks of 4 x 2
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 8; ++i) t(i, j) = 100 * i + j;
  t.exchange_padding();
  for (std::size_t b = 0; b < t.block_count(); ++b) {
    const weft::BlockSpace<2>& s = t.block_space(b);
    for (std::ptrdiff_t y = -1; y <= static_cast<std::ptrdiff_t>(s.extent[1]); ++y) {
      for (std::ptrdiff_t x = -1; x <= static_cast<std::ptrdiff_t>(s.extent[0]); ++x) {
        auto it = t.iterator(b, {x, y});
        const auto gx = it.global_index(0), gy = it.global_index(1);
        const int expected = gx < 0 || gy < 0 || gx >= 8 || gy >= 8 ? 0 : static_cast<int>(100 * gx + gy);
        CHECK(*it == expected);
      }
    }
  }
  // Block 0 (x 0..3, y 0..1) is fed by its right, upper and upper-right neighbours.
  CHECK(t.padding_sources(0) == std::vector<std::size_t>{1, 2, 3});
  CHECK(weft::Tensor<int, 1>({4}, 16).padding_sources(1).empty());  // no padding, no sources
}

TEST_CASE("Tensor.copy_padding_touches_only_the_destination_padding") {
  weft::Tensor<double, 1> x({3}, 2, 12);
  for (int i = 0; i < 12; ++i) x(i) = i + 1;
  x.copy_padding(0, 1);
  CHECK(*x.iterator(1, {-1}) == 4.0);
  CHECK(*x.iterator(1, {-2}) == 3.0);
  CHECK(*x.iterator(1, {4}) == 0.0);  // block 2 has not been copied yet
  CHECK(*x.iterator(0, {4}) == 0.0);  // the source's own padding is untouched
  x.copy_padding(2, 1);
  CHECK(*x.iterator(1, {4}) == 9.0);
  CHECK(*x.iterator(1, {5}) == 10.0);
}

TEST_CASE("Tensor.boundary_loaders_fill_only_the_outer_edges") {
  weft::Tensor<double, 2> u({2, 1}, 2, 6, 3);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 6; ++i) u(i, j) = i + 10.0 * j;
  weft::load_boundaries(u, weft::FirstOrderExtrapolation{});
  CHECK(*u.iterator(0, {-2, 1}) == 10.0);  // u(0, 1)
  CHECK(*u.iterator(1, {4, 2}) == 25.0);   // block 1 ends at x = 5: u(5, 2)
  CHECK(*u.iterator(0, {1, -2}) == 1.0);   // below u(1, 0)
  CHECK(*u.iterator(1, {0, 3}) == 23.0);   // above u(3, 2)
  CHECK(*u.iterator(0, {2, 1}) == 12.0);   // interior untouched
  // Padding between the two blocks is not a boundary: loaders leave it.
  CHECK(*u.iterator(0, {4, 1}) == 0.0);

  weft::Tensor<int, 1> c({2}, 1, 4);
  weft::load_boundaries(c, weft::ConstantLoader{7});
  CHECK(*c.iterator(0, {-1}) == 7);
  CHECK(*c.iterator(1, {2}) == 7);
  CHECK(*c.iterator(0, {2}) == 0);  // between blocks: not loaded
}

TEST_CASE("Tensor.block_kernel_stencil_equals_a_serial_loop_listing4") {
  constexpr int n = 40;
  weft::Tensor<double, 2> in({2, 2}, 1, n, n);
  weft::Tensor<double, 2> out({2, 2}, n, n);
  std::vector<double> field(n * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) in(i, j) = field[static_cast<std::size_t>(j * n + i)] = (i * 7 + j * 3) % 11;
  in.exchange_padding();
  weft::load_boundaries(in, weft::ConstantLoader{2.5});
  const auto central_differences = [](auto& it, auto& result) {
    double sum = 0.0;
    weft::unrolled_for<weft::iterator_traits_t<decltype(it)>::dims>(
        [&](auto dim) { sum += *it.offset(dim, 1) - *it.offset(dim, -1); });
    *result = sum;
  };
  for (std::size_t b = 0; b < in.block_count(); ++b) weft::run_block_kernel(b, central_differences, in, out);
  const auto at = [&](int i, int j) {
    return i < 0 || j < 0 || i >= n || j >= n ? 2.5 : field[static_cast<std::size_t>(j * n + i)];
  };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) CHECK(out(i, j) == at(i + 1, j) - at(i - 1, j) + at(i, j + 1) - at(i, j - 1));
}

TEST_CASE("Tensor.unrolled_for_visits_each_dimension_as_a_constant") {
  int seen = 0;
  weft::unrolled_for<3>([&](auto dim) {
    static_assert(decltype(dim)::value < 3);
    seen |= 1 << dim;
  });
  CHECK(seen == 7);
}

TEST_CASE("Tensor.deep_copy_copies_blocks_and_padding_between_tensors_split_alike") {
  weft::Tensor<int, 2> a({2, 1}, 1, 6, 4), b({2, 1}, 1, 6, 4);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 4; ++j) a(i, j) = 10 * i + j;
  a.exchange_padding();
  weft::deep_copy(b, a);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 4; ++j) CHECK(b(i, j) == 10 * i + j);
  CHECK(*b.iterator(0, {3, 0}) == 30);  // block 0's padding, from block 1
  CHECK_FALSE(b.in_gpu_memory());
  CHECK(b.cuda_device_of(1) == -1);

  weft::Tensor<int, 2> other_split({1, 2}, 1, 6, 4), no_padding({2, 1}, 6, 4);
  CHECK(weft::test::invalid_argument_message([&] { weft::deep_copy(other_split, a); }) ==
        "deep_copy: block 0 is (3, 4) in the source but (6, 2) in the destination: the tensors must be split "
        "alike");
  CHECK(weft::test::invalid_argument_message([&] { weft::deep_copy(no_padding, a); }) ==
        "deep_copy: Tensor (6, 4) in 2 blocks (padding 1) cannot be copied into Tensor (6, 4) in 2 blocks "
        "(padding 0): they must be split alike");
}

TEST_CASE("Tensor.gpu_memory_without_a_usable_gpu_is_refused_clearly") {
  if (!weft::discover_cuda_devices().devices.empty()) {
    MESSAGE("a GPU is present: tests/cuda/tensor_gpu_test.cu covers GPU tensors");
    return;
  }
  CHECK_THROWS_WITH_AS(
      (weft::Tensor<float, 1>(weft::cuda_memory, {2}, 100)),
      doctest::Contains("Tensor: GPU memory (cuda_memory) was asked for, but no CUDA device is usable ("),
      std::runtime_error);
}

namespace {
// Adds `amount` to every cell, but says it leaves the blocks `quiet` marks.
struct AddUnlessQuiet {
  const std::vector<int>* quiet;
  std::atomic<int>* cells_visited;
  void operator()(auto& cell, int amount) const {
    *cell += amount;
    cells_visited->fetch_add(1, std::memory_order_relaxed);
  }
  bool skip_block(std::size_t block, const weft::Tensor<int, 2>&, int) const { return (*quiet)[block] != 0; }
};
}  // namespace

TEST_CASE("Tensor.block_kernels_visit_no_cell_of_a_block_the_kernel_skips") {
  // 4 blocks of 128 x 128: large enough for run_block_kernel_shared to share rows.
  weft::Tensor<int, 2> t({2, 1}, {1, 2}, 256, 256);
  constexpr int cells = 128 * 128;
  const std::vector<int> quiet{0, 1, 1, 0};
  std::atomic<int> visited{0};
  AddUnlessQuiet kernel{&quiet, &visited};
  int three = 3, four = 4, zero = 0;
  for (std::size_t b = 0; b < t.block_count(); ++b) weft::run_block_kernel(b, kernel, t, three);
  CHECK(visited.load() == 2 * cells);
  weft::Executor executor(weft::test::cpu_only(2));
  weft::TaskGroup group(executor);
  group.run([&] {  // on a worker: the rows of a large block may be shared
    for (std::size_t b = 0; b < t.block_count(); ++b) weft::run_block_kernel_shared(b, kernel, t, four);
  });
  group.wait();
  CHECK(visited.load() == 4 * cells);
  for (std::size_t j = 0; j < 256; ++j)
    for (std::size_t i = 0; i < 256; ++i) {
      const std::size_t block = i / 128 + 2 * (j / 128);
      CHECK(t(i, j) == (quiet[block] != 0 ? 0 : 7));
    }
  // A kernel without skip_block runs every block.
  CHECK_FALSE(weft::kernel_skips_block([](auto&, int) {}, 1, t, zero));
  CHECK(weft::kernel_skips_block(kernel, 1, t, zero));
}

TEST_CASE("Tensor.shared_block_rows_come_in_chunks_that_shrink_to_one_row_at_the_end") {
  // 200 rows of 800 cells: chunks of 5 rows (4000 cells) while 10 rows or
  // more are left, then halving: 3, 1, 1.
  const weft::BlockRowChunks plan(200, 800);
  REQUIRE(plan.count() == 39 + 3);
  for (std::size_t c = 0; c < 39; ++c) CHECK(plan.last_row(c) - plan.first_row(c) == 5);
  std::vector<std::size_t> tail;
  for (std::size_t c = 39; c < plan.count(); ++c) tail.push_back(plan.last_row(c) - plan.first_row(c));
  CHECK(tail == std::vector<std::size_t>{3, 1, 1});
  // Every plan covers its rows once, in order, in chunks of at most the
  // first one's rows, whatever their length.
  for (const auto& [rows, row_cells] : std::vector<std::pair<std::size_t, std::size_t>>{
           {1, 1}, {2, 100000}, {7, 4096}, {33, 128}, {300, 300}, {1000, 3}, {5000, 1}, {0, 64}}) {
    const weft::BlockRowChunks p(rows, row_cells);
    std::size_t next = 0;
    for (std::size_t c = 0; c < p.count(); ++c) {
      CHECK(p.first_row(c) == next);
      CHECK(p.last_row(c) > p.first_row(c));
      CHECK(p.last_row(c) - p.first_row(c) <= p.last_row(0) - p.first_row(0));
      next = p.last_row(c);
    }
    CHECK(next == rows);
    if (rows > 0) CHECK(p.last_row(p.count() - 1) - p.first_row(p.count() - 1) == 1);
  }
}

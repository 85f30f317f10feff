// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How padding moves as runs of rows: the run walk a Tensor copies by,
// element_storage::copy_rows in each layout, and padding filled through
// those runs in 3D tensors of a polymorphic struct. In GPU memory each run
// is one cudaMemcpy2DAsync per component array; here the host mover makes
// the same calls, so the decomposition is what these tests check.
#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include <weft/views/detail/row_runs.hpp>
#include <weft/views/element_storage.hpp>
#include <weft/views/tensor.hpp>

#include "two_component_cell.hpp"

namespace {

template <class Layout>
using Cell = TwoComponentCell<Layout>;

template <std::size_t D>
using Box = std::array<std::ptrdiff_t, D>;

// The rows walk_row_runs visits, expanded one by one.
template <std::size_t D>
std::vector<std::pair<Box<D>, std::size_t>> rows_of_runs(const Box<D>& begin, const Box<D>& end) {
  std::vector<std::pair<Box<D>, std::size_t>> rows;
  weft::detail::walk_row_runs<D>(begin, end, [&](const Box<D>& first, std::size_t width, std::size_t count) {
    for (std::size_t r = 0; r < count; ++r) {
      Box<D> row = first;
      if constexpr (D > 1) row[1] += static_cast<std::ptrdiff_t>(r);
      rows.emplace_back(row, width);
    }
  });
  return rows;
}

template <std::size_t D>
std::vector<std::pair<Box<D>, std::size_t>> rows_one_by_one(const Box<D>& begin, const Box<D>& end) {
  std::vector<std::pair<Box<D>, std::size_t>> rows;
  weft::detail::walk_rows<D>(
      begin, end, [&](const Box<D>& first, std::size_t width) { rows.emplace_back(first, width); });
  return rows;
}

// A 2D mover that counts its calls and rows, then moves like the host's.
struct CountingMove2D {
  int* calls;
  std::size_t* rows_moved;
  void operator()(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                  std::size_t rows) const {
    ++*calls;
    *rows_moved += rows;
    weft::detail::HostMove2D{}(dst, dst_pitch, src, src_pitch, width, rows);
  }
};

template <class Layout>
void check_copy_rows_matches_row_copies() {
  using S = weft::element_storage<Cell<Layout>>;
  constexpr std::size_t count = 64, pitch = 8;
  auto* src = static_cast<std::byte*>(::operator new (S::bytes(count), std::align_val_t{S::alignment}));
  auto* by_rows = static_cast<std::byte*>(::operator new (S::bytes(count), std::align_val_t{S::alignment}));
  auto* one_by_one =
      static_cast<std::byte*>(::operator new (S::bytes(count), std::align_val_t{S::alignment}));
  for (std::size_t i = 0; i < count; ++i) {
    S::at(src, i, count).value() = 0.5 * static_cast<double>(i);
    S::at(src, i, count).tag() = static_cast<std::int32_t>(1000 + i);
    for (auto* b : {by_rows, one_by_one}) {
      S::at(b, i, count).value() = -1.0;
      S::at(b, i, count).tag() = -1;
    }
  }
  // Rows of 3 elements, 5 apart in the source and `pitch` apart in the copy.
  int calls = 0;
  std::size_t rows_moved = 0;
  S::copy_rows(by_rows, 2, pitch, count, src, 1, 5, count, 3, 4, CountingMove2D{&calls, &rows_moved});
  for (std::size_t r = 0; r < 4; ++r) S::copy(one_by_one, 2 + r * pitch, count, src, 1 + r * 5, count, 3);
  CHECK(calls == (S::polymorphic && std::is_same_v<Layout, weft::StridedView> ? 2 : 1));  // one per array
  CHECK(rows_moved == 4 * static_cast<std::size_t>(calls));
  for (std::size_t i = 0; i < count; ++i) {
    CHECK(S::at(by_rows, i, count).value() == S::at(one_by_one, i, count).value());
    CHECK(S::at(by_rows, i, count).tag() == S::at(one_by_one, i, count).tag());
  }
  CHECK(S::at(by_rows, 2 + 3 * pitch + 2, count).tag() == 1000 + 1 + 3 * 5 + 2);  // last cell of the last row
  for (auto* b : {src, by_rows, one_by_one}) ::operator delete (b, std::align_val_t{S::alignment});
}

// Every padding cell of every block of `t` holds the global cell it
// stands for (value 10000 z + 100 y + x, tag its parity), or 0 beyond the grid.
template <class Tensor3>
void check_padding_holds_neighbours(const Tensor3& t, std::ptrdiff_t nx, std::ptrdiff_t ny,
                                    std::ptrdiff_t nz) {
  const auto p = static_cast<std::ptrdiff_t>(t.padding());
  for (std::size_t b = 0; b < t.block_count(); ++b) {
    const weft::BlockSpace<3>& s = t.block_space(b);
    for (std::ptrdiff_t z = -p; z < static_cast<std::ptrdiff_t>(s.extent[2]) + p; ++z)
      for (std::ptrdiff_t y = -p; y < static_cast<std::ptrdiff_t>(s.extent[1]) + p; ++y)
        for (std::ptrdiff_t x = -p; x < static_cast<std::ptrdiff_t>(s.extent[0]) + p; ++x) {
          auto it = t.iterator(b, {x, y, z});
          const auto gx = it.global_index(0), gy = it.global_index(1), gz = it.global_index(2);
          const bool outside = gx < 0 || gy < 0 || gz < 0 || gx >= nx || gy >= ny || gz >= nz;
          const double expected = outside ? 0.0 : static_cast<double>(10000 * gz + 100 * gy + gx);
          auto cell = *it;
          CHECK(cell.value() == expected);
          CHECK(cell.tag() == (outside ? 0 : static_cast<std::int32_t>((gx + gy + gz) % 2)));
        }
  }
}

template <class Layout>
void check_3d_padding_through_runs() {
  constexpr std::ptrdiff_t nx = 9, ny = 7, nz = 5;
  weft::Tensor<Cell<Layout>, 3> t({2, 2, 2}, 2, nx, ny, nz);
  for (std::ptrdiff_t z = 0; z < nz; ++z)
    for (std::ptrdiff_t y = 0; y < ny; ++y)
      for (std::ptrdiff_t x = 0; x < nx; ++x) {
        auto cell = t(x, y, z);
        cell.value() = static_cast<double>(10000 * z + 100 * y + x);
        cell.tag() = static_cast<std::int32_t>((x + y + z) % 2);
      }
  t.exchange_padding();
  check_padding_holds_neighbours(t, nx, ny, nz);

  // Packing for another rank and unpacking gives the same padding.
  weft::Tensor<Cell<Layout>, 3> u({2, 2, 2}, 2, nx, ny, nz);
  for (std::ptrdiff_t z = 0; z < nz; ++z)
    for (std::ptrdiff_t y = 0; y < ny; ++y)
      for (std::ptrdiff_t x = 0; x < nx; ++x) {
        auto from = t(x, y, z);
        auto to = u(x, y, z);
        to.value() = from.value();
        to.tag() = from.tag();
      }
  for (std::size_t to = 0; to < u.block_count(); ++to) {
    for (std::size_t from : u.padding_sources(to)) {
      std::vector<std::byte> packed(u.padding_bytes(from, to) + 64);
      void* aligned = packed.data();
      std::size_t space = packed.size();
      REQUIRE(std::align(weft::element_storage<Cell<Layout>>::alignment, u.padding_bytes(from, to), aligned,
                         space));
      u.pack_padding(from, to, aligned);
      u.unpack_padding(from, to, aligned);
    }
  }
  check_padding_holds_neighbours(u, nx, ny, nz);
}

}  // namespace

TEST_CASE("PaddingRows.runs_cover_the_rows_of_a_box_in_order") {
  CHECK(rows_of_runs<1>({3}, {7}) == rows_one_by_one<1>({3}, {7}));
  CHECK(rows_of_runs<2>({-2, 1}, {4, 6}) == rows_one_by_one<2>({-2, 1}, {4, 6}));
  CHECK(rows_of_runs<3>({0, -1, 2}, {3, 2, 5}) == rows_one_by_one<3>({0, -1, 2}, {3, 2, 5}));
  CHECK(rows_of_runs<4>({0, 0, 0, 0}, {2, 3, 2, 2}) == rows_one_by_one<4>({0, 0, 0, 0}, {2, 3, 2, 2}));
  CHECK(rows_of_runs<3>({0, 0, 0}, {3, 0, 5}).empty());  // empty along one axis
  CHECK(rows_one_by_one<2>({1, 1}, {1, 4}).empty());

  // A halo along x of a 2D grid, 2 cells wide and 100 rows tall: one run.
  int runs = 0;
  weft::detail::walk_row_runs<2>({0, 0}, {2, 100}, [&](const Box<2>&, std::size_t width, std::size_t rows) {
    ++runs;
    CHECK(width == 2);
    CHECK(rows == 100);
  });
  CHECK(runs == 1);
  // In 3D, one run per plane.
  runs = 0;
  weft::detail::walk_row_runs<3>({0, 0, 0}, {2, 10, 4},
                                 [&](const Box<3>&, std::size_t, std::size_t) { ++runs; });
  CHECK(runs == 4);
}

TEST_CASE("PaddingRows.copy_rows_equals_row_by_row_copies_in_every_layout") {
  check_copy_rows_matches_row_copies<weft::StridedView>();
  check_copy_rows_matches_row_copies<weft::ContiguousView>();

  std::vector<int> src(30), dst(30, -1);
  for (int i = 0; i < 30; ++i) src[static_cast<std::size_t>(i)] = i;
  int calls = 0;
  std::size_t rows_moved = 0;
  // Rows of 2 from source indices 10, 18, 26 to 0, 4, 8.
  weft::element_storage<int>::copy_rows(dst.data(), 0, 4, 30, src.data(), 10, 8, 30, 2, 3,
                                        CountingMove2D{&calls, &rows_moved});
  CHECK(calls == 1);
  CHECK(rows_moved == 3);
  const std::vector<int> expected{10, 11, -1, -1, 18, 19, -1, -1, 26, 27, -1};
  CHECK(std::vector<int>(dst.begin(), dst.begin() + 11) == expected);
}

TEST_CASE("PaddingRows.copy_rows_refuses_rows_that_overlap_or_run_past_the_end") {
  // Buffers larger than the 20 elements the calls declare: what is checked
  // is the declared count, and no refused copy can touch memory anyway.
  std::vector<int> a(64), b(64);
  using S = weft::element_storage<int>;
  CHECK_THROWS_AS(S::copy_rows(b.data(), 0, 2, 20, a.data(), 0, 4, 20, 3, 2), std::invalid_argument);
  // Source rows at 0, 8, 16 of 5 elements: the last ends at 21 > 20.
  CHECK_THROWS_AS(S::copy_rows(b.data(), 0, 5, 20, a.data(), 0, 8, 20, 5, 3), std::out_of_range);
  CHECK_THROWS_AS(S::copy_rows(b.data(), 0, 4, 20, a.data(), 0, 4, 20, 4, 7), std::out_of_range);
  CHECK_NOTHROW(S::copy_rows(b.data(), 0, 4, 20, a.data(), 0, 8, 20, 4, 2));
  CHECK_NOTHROW(S::copy_rows(b.data(), 0, 0, 20, a.data(), 0, 0, 20, 4, 1));  // one row needs no pitch
}

TEST_CASE("PaddingRows.padding_of_3d_struct_tensors_moves_through_runs") {
  check_3d_padding_through_runs<weft::StridedView>();
  check_3d_padding_through_runs<weft::ContiguousView>();
}

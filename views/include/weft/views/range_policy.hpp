// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Execution policies: the index space a parallel_for / parallel_reduce walks,
// and optionally the Executor that walks it.
//
//   weft::RangePolicy(0, n)                         // i in [0, n)
//   weft::RangePolicy(executor, 0, n).chunk_size(4096)
//   weft::MDRangePolicy<2>({0, 0}, {nx, ny})        // (i, j), i fastest
//   weft::MDRangePolicy<3>({0, 0, 0}, {nx, ny, nz}, {64, 4, 4})   // with tiles
//
// Ranges are half-open; an end before its begin throws std::invalid_argument.
// A policy without an executor runs on weft::current_executor() (see
// current_executor.hpp).
//
// Iteration order. An MDRangePolicy is cut into tiles (tile sizes per
// dimension; 0 or none means automatic: the whole extent of dimension 0 and 1
// in the others). Tiles are visited in order with dimension 0 varying fastest,
// and inside a tile dimension 0 is the innermost loop: f(i, j) is called with
// i varying fastest. That is the order of weft's LayoutLeft Views and Tensors,
// whose first index is contiguous, so the innermost loop walks memory with
// stride 1 and vectorises. Chunks (the units handed to threads) are runs of
// consecutive tiles, or of consecutive indices for a RangePolicy.
//
// chunk_size(n): indices per chunk for a RangePolicy, tiles per chunk for an
// MDRangePolicy; 0 (the default) lets parallel_for choose (parallel_for.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <weft/backends/host_device.hpp>

namespace weft {

class Executor;

// Integral index types, bool excepted.
template <class I>
concept PolicyIndex = std::integral<I> && !std::same_as<std::remove_cv_t<I>, bool>;

namespace detail {

// end - begin for end >= begin, for any index type: converting to uint64 is
// modular, so the difference is exact even across the sign boundary.
template <PolicyIndex Index>
WEFT_HOST_DEVICE constexpr std::uint64_t index_distance(Index begin, Index end) noexcept {
  return static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(begin);
}

// begin + offset, for offsets up to index_distance(begin, end).
template <PolicyIndex Index>
WEFT_HOST_DEVICE constexpr Index index_advance(Index begin, std::uint64_t offset) noexcept {
  return static_cast<Index>(static_cast<std::uint64_t>(begin) + offset);
}

}  // namespace detail

template <PolicyIndex Index = std::int64_t>
class RangePolicy {
 public:
  using index_type = Index;

  RangePolicy(Index begin, Index end) : begin_(begin), end_(end) { check(); }
  RangePolicy(Executor& executor, Index begin, Index end) : executor_(&executor), begin_(begin), end_(end) {
    check();
  }

  RangePolicy& chunk_size(std::uint64_t indices) noexcept {
    chunk_size_ = indices;
    return *this;
  }

  WEFT_HOST_DEVICE Index begin() const noexcept { return begin_; }
  WEFT_HOST_DEVICE Index end() const noexcept { return end_; }
  WEFT_HOST_DEVICE std::uint64_t size() const noexcept { return detail::index_distance(begin_, end_); }
  std::uint64_t chunk_size() const noexcept { return chunk_size_; }
  Executor* executor() const noexcept { return executor_; }

  // The policy as work items, the unit chunks are made of: here one index each.
  WEFT_HOST_DEVICE std::uint64_t work_items() const noexcept { return size(); }
  WEFT_HOST_DEVICE std::uint64_t indices_per_work_item() const noexcept { return 1; }

  // Calls call(i) for the indices of work items [first_item, last_item), in
  // order. A plain counted loop, so that the compiler vectorises it.
  template <class Call>
  WEFT_HOST_DEVICE void for_each_index(std::uint64_t first_item, std::uint64_t last_item,
                                       const Call& call) const {
    const Index last = detail::index_advance(begin_, last_item);
    for (Index i = detail::index_advance(begin_, first_item); i < last; ++i) call(i);
  }

 private:
  void check() const {
    if (end_ < begin_) {
      throw std::invalid_argument("RangePolicy: end " + std::to_string(end_) + " is before begin " +
                                  std::to_string(begin_) + " (expected begin <= end)");
    }
  }

  Executor* executor_ = nullptr;
  Index begin_;
  Index end_;
  std::uint64_t chunk_size_ = 0;
};

// RangePolicy(0, n) with n of another integral type uses their common type.
template <class B, class E>
RangePolicy(B, E) -> RangePolicy<std::common_type_t<B, E>>;
template <class B, class E>
RangePolicy(Executor&, B, E) -> RangePolicy<std::common_type_t<B, E>>;

template <int Rank, PolicyIndex Index = std::int64_t>
class MDRangePolicy {
  static_assert(Rank >= 2 && Rank <= 4, "MDRangePolicy supports ranks 2 to 4");

 public:
  using index_type = Index;
  using Indices = std::array<Index, Rank>;
  using Sizes = std::array<std::uint64_t, Rank>;
  static constexpr int rank = Rank;

  // tile: per dimension, 0 for automatic (see the top of this file).
  MDRangePolicy(const Indices& begin, const Indices& end, const Indices& tile = {})
      : begin_(begin), end_(end) {
    set_up(tile);
  }
  MDRangePolicy(Executor& executor, const Indices& begin, const Indices& end, const Indices& tile = {})
      : executor_(&executor), begin_(begin), end_(end) {
    set_up(tile);
  }

  MDRangePolicy& chunk_size(std::uint64_t tiles) noexcept {
    chunk_size_ = tiles;
    return *this;
  }

  WEFT_HOST_DEVICE const Indices& begin() const noexcept { return begin_; }
  WEFT_HOST_DEVICE const Indices& end() const noexcept { return end_; }
  // The tile sizes in use, automatic ones resolved.
  WEFT_HOST_DEVICE const Sizes& tile() const noexcept { return tile_; }
  WEFT_HOST_DEVICE std::uint64_t extent(std::size_t dim) const noexcept { return extent_[dim]; }
  WEFT_HOST_DEVICE std::uint64_t size() const noexcept { return size_; }
  std::uint64_t chunk_size() const noexcept { return chunk_size_; }
  Executor* executor() const noexcept { return executor_; }

  // Work items are tiles.
  WEFT_HOST_DEVICE std::uint64_t work_items() const noexcept { return size_ == 0 ? 0 : tile_count_; }
  WEFT_HOST_DEVICE std::uint64_t indices_per_work_item() const noexcept { return tile_volume_; }

  // Calls call(i0, i1, ...) for every index of tiles [first_tile, last_tile):
  // tiles in order, dimension 0 fastest, and inside a tile dimension 0 innermost.
  template <class Call>
  WEFT_HOST_DEVICE void for_each_index(std::uint64_t first_tile, std::uint64_t last_tile,
                                       const Call& call) const {
    Indices lo{}, hi{};
    for (std::uint64_t t = first_tile; t < last_tile; ++t) {
      std::uint64_t rest = t;
      for (std::size_t d = 0; d < kRank; ++d) {
        const std::uint64_t coordinate = rest % tiles_per_dim_[d];
        rest /= tiles_per_dim_[d];
        const std::uint64_t offset = coordinate * tile_[d];
        lo[d] = detail::index_advance(begin_[d], offset);
        hi[d] = detail::index_advance(lo[d], std::min(tile_[d], extent_[d] - offset));
      }
      visit_box(lo, hi, call);
    }
  }

 private:
  template <class Call>
  WEFT_HOST_DEVICE static void visit_box(const Indices& lo, const Indices& hi, const Call& call) {
    if constexpr (Rank == 2) {
      for (Index i1 = lo[1]; i1 < hi[1]; ++i1)
        for (Index i0 = lo[0]; i0 < hi[0]; ++i0) call(i0, i1);
    } else if constexpr (Rank == 3) {
      for (Index i2 = lo[2]; i2 < hi[2]; ++i2)
        for (Index i1 = lo[1]; i1 < hi[1]; ++i1)
          for (Index i0 = lo[0]; i0 < hi[0]; ++i0) call(i0, i1, i2);
    } else {
      for (Index i3 = lo[3]; i3 < hi[3]; ++i3)
        for (Index i2 = lo[2]; i2 < hi[2]; ++i2)
          for (Index i1 = lo[1]; i1 < hi[1]; ++i1)
            for (Index i0 = lo[0]; i0 < hi[0]; ++i0) call(i0, i1, i2, i3);
    }
  }

  void set_up(const Indices& tile) {
    size_ = 1;
    tile_count_ = 1;
    tile_volume_ = 1;
    for (std::size_t d = 0; d < kRank; ++d) {
      if (end_[d] < begin_[d]) {
        throw std::invalid_argument("MDRangePolicy: dimension " + std::to_string(d) + " end " +
                                    std::to_string(end_[d]) + " is before begin " +
                                    std::to_string(begin_[d]) + " (expected begin <= end)");
      }
      if (std::is_signed_v<Index> && tile[d] < Index{0}) {
        throw std::invalid_argument("MDRangePolicy: tile size " + std::to_string(tile[d]) +
                                    " for dimension " + std::to_string(d) +
                                    " (expected > 0, or 0 for automatic)");
      }
      extent_[d] = detail::index_distance(begin_[d], end_[d]);
      // A tile never exceeds its extent, so tile_volume_ is the work a full tile holds.
      const std::uint64_t extent_or_one = std::max<std::uint64_t>(extent_[d], 1);
      const std::uint64_t requested = tile[d] != 0 ? static_cast<std::uint64_t>(tile[d])
                                      : d == 0     ? extent_or_one
                                                   : 1;
      const std::uint64_t size = std::min(requested, extent_or_one);
      tile_[d] = size;
      tiles_per_dim_[d] = (extent_or_one + size - 1) / size;
      if (__builtin_mul_overflow(size_, extent_[d], &size_)) {
        throw std::invalid_argument("MDRangePolicy: the iteration space has more than 2^64 indices");
      }
      tile_count_ *= tiles_per_dim_[d];  // <= size_ when size_ > 0, so no overflow then
      tile_volume_ *= size;
    }
  }

  static constexpr std::size_t kRank = Rank;

  Executor* executor_ = nullptr;
  Indices begin_;
  Indices end_;
  Sizes tile_{};
  Sizes extent_{};
  Sizes tiles_per_dim_{};
  std::uint64_t size_ = 0;
  std::uint64_t tile_count_ = 0;
  std::uint64_t tile_volume_ = 1;
  std::uint64_t chunk_size_ = 0;
};

namespace detail {

template <class Policy>
struct is_execution_policy : std::false_type {};
template <class Index>
struct is_execution_policy<RangePolicy<Index>> : std::true_type {};
template <int Rank, class Index>
struct is_execution_policy<MDRangePolicy<Rank, Index>> : std::true_type {};

// Whether f can be called with one index per dimension of Policy followed by `Extra` arguments.
template <class Policy, class F, class... Extra>
struct invocable_per_index;
template <class Index, class F, class... Extra>
struct invocable_per_index<RangePolicy<Index>, F, Extra...> : std::is_invocable<F, Index, Extra...> {};
template <int Rank, class Index, class F, class... Extra>
struct invocable_per_index<MDRangePolicy<Rank, Index>, F, Extra...> {
  template <std::size_t, class T>
  using repeat = T;
  template <std::size_t... Dim>
  static constexpr bool check(std::index_sequence<Dim...>) {
    return std::is_invocable_v<F, repeat<Dim, Index>..., Extra...>;
  }
  static constexpr bool value = check(std::make_index_sequence<Rank>{});
};

}  // namespace detail

// RangePolicy or MDRangePolicy.
template <class Policy>
concept ExecutionPolicy = detail::is_execution_policy<std::remove_cvref_t<Policy>>::value;

}  // namespace weft

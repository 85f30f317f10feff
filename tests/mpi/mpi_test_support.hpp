// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the MPI suites share: the session, and tensors filled the same way
// on every rank, whether distributed or not.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <mpi.h>

#include <weft/backends/host_device.hpp>
#include <weft/graph/graph.hpp>
#include <weft/mpi/gather.hpp>
#include <weft/mpi/session.hpp>

namespace weft::test {

extern mpi::Session* session;

// A value per global cell that differs from its neighbours' in every bit pattern.
inline double cell_value(std::ptrdiff_t x, std::ptrdiff_t y, std::ptrdiff_t z) {
  const auto h = static_cast<std::uint64_t>((x * 73856093) ^ (y * 19349663) ^ (z * 83492791));
  return static_cast<double>(h % 100003) / 7.0 + static_cast<double>(x) * 0.5;
}

// Fills each cell with cell_value of its global index (a split functor).
struct FillCellValues {
  template <class It>
  void operator()(It& it) const {
    constexpr std::size_t dims = std::remove_cvref_t<It>::dims;
    const std::ptrdiff_t y = dims > 1 ? it.global_index(1) : 0, z = dims > 2 ? it.global_index(2) : 0;
    *it = cell_value(it.global_index(0), y, z);
  }
};

// out = the sum of `in` over the box reaching `reach` cells each way along
// every dimension: reads the padding, and only adds (no multiply-add a GPU
// could fuse), so host and GPU give the same bits.
template <std::size_t D>
struct BoxSum {
  int reach;
  template <class In, class Out>
  WEFT_HOST_DEVICE void operator()(In& in, Out& out) const {
    double sum = 0.0;
    if constexpr (D == 1) {
      for (int i = -reach; i <= reach; ++i) sum += *in.offset(dim_x, i);
    } else if constexpr (D == 2) {
      for (int j = -reach; j <= reach; ++j)
        for (int i = -reach; i <= reach; ++i) sum += *in.offset(dim_x, i).offset(dim_y, j);
    } else {
      for (int k = -reach; k <= reach; ++k)
        for (int j = -reach; j <= reach; ++j)
          for (int i = -reach; i <= reach; ++i) sum += *in.offset(dim_x, i).offset(dim_y, j).offset(dim_z, k);
    }
    *out = sum;
  }
};

// Whether the blocks this rank owns hold the same bytes, padding
// included, in `distributed` and in `whole` (split alike, not distributed).
template <class T, std::size_t D>
bool local_blocks_equal(const Tensor<T, D>& distributed, const Tensor<T, D>& whole) {
  for (std::size_t b = 0; b < distributed.block_count(); ++b) {
    if (!distributed.is_local(b)) continue;
    const BlockSpace<D>& a = distributed.block_space(b);
    const BlockSpace<D>& w = whole.block_space(b);
    if (std::memcmp(a.data, w.data, element_storage<T>::bytes(a.count)) != 0) return false;
  }
  return true;
}

}  // namespace weft::test

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the MPI suites share: the session, and tensors filled the same way
// on every rank, whether distributed or not.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <mpi.h>

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

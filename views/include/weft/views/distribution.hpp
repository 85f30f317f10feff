// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distribution: which rank of a RankGroup owns each device partition of a
// Tensor (issue 17, docs/distributed.md). A distributed Tensor allocates only
// the blocks of this rank's partitions; graphs over it run those blocks'
// nodes here and exchange padding with the other ranks.
//
//   auto ranks = session.world();                          // weft::mpi::Session
//   weft::Tensor<double, 2> u(weft::distributed(ranks), {1, 8}, 1, nx, ny);
//   weft::Tensor<double, 2> v(weft::distributed(ranks, {0, 0, 1, 1, 1, 1, 0, 0}), {1, 8}, 1, nx, ny);
//
// By default partitions go to ranks in contiguous runs, as evenly as they
// divide (block distribution): partition p belongs to rank p * ranks /
// partitions. An explicit owner map gives each partition's rank.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <weft/runtime/rank_group.hpp>

namespace weft {

struct Distribution {
  std::shared_ptr<RankGroup> group;
  std::vector<int> owners;  // one rank per device partition; empty: block distribution
};

inline Distribution distributed(std::shared_ptr<RankGroup> group, std::vector<int> owners = {}) {
  if (group == nullptr) throw std::invalid_argument("weft::distributed: the rank group is null");
  return Distribution{std::move(group), std::move(owners)};
}

// The block distribution of `partitions` over `ranks`: contiguous runs,
// sizes differing by at most one.
inline std::vector<int> block_owners(std::size_t partitions, int ranks) {
  std::vector<int> owners(partitions);
  for (std::size_t p = 0; p < partitions; ++p)
    owners[p] = static_cast<int>(p * static_cast<std::size_t>(ranks) / partitions);
  return owners;
}

namespace detail {

// A Distribution checked against a tensor's partitions: the owner of each.
inline std::vector<int> resolve_owners(const Distribution& d, std::size_t partitions) {
  if (d.group == nullptr) throw std::invalid_argument("Tensor: the distribution has no rank group");
  const int ranks = d.group->size();
  if (d.owners.empty()) return block_owners(partitions, ranks);
  if (d.owners.size() != partitions) {
    throw std::invalid_argument("Tensor: the owner map gives " + std::to_string(d.owners.size()) +
                                " ranks for " + std::to_string(partitions) + " partitions");
  }
  for (std::size_t p = 0; p < partitions; ++p) {
    if (d.owners[p] < 0 || d.owners[p] >= ranks) {
      throw std::invalid_argument("Tensor: the owner map gives partition " + std::to_string(p) + " to rank " +
                                  std::to_string(d.owners[p]) + "; " + d.group->describe() +
                                  " has ranks 0 to " + std::to_string(ranks - 1));
    }
  }
  return d.owners;
}

}  // namespace detail

}  // namespace weft

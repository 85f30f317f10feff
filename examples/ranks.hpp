// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Where an example runs: in one process (OneProcess, here), or on the ranks
// of an MPI job when mpirun started it (MpiRanks, mpi_ranks.hpp). Both offer
// the same few calls, so an example is written once, as a template on them:
//
//   template <class Ranks>
//   int run(const Ranks& ranks) {
//     auto u = weft::examples::make_tensor<double, 2>(ranks, {1, 4}, {1, 1}, 1, n, n);  // over the ranks
//     weft::examples::for_each_local_cell(u, [&](std::size_t i, std::size_t j) { u(i, j) = 1.0; });
//     ranks.together([&] { if (ranks.root()) weft::examples::check_writable(path); });
//     ...                                              // the same graph on every rank
//     const auto whole = ranks.gather(u);              // every block, on rank 0 only
//     if (ranks.root()) print(whole(0, 0));
//   }
//
//   group()      the rank group to spread tensors over (null: one process)
//   gather(t)    on rank 0, a host tensor with every block of t; collective,
//                between graph runs (OneProcess: t itself)
//   together(f)  runs f on every rank; if it throws on any rank, throws on
//                every rank, so that no rank goes on into a collective call
//                (a graph's first run, a gather) that another rank never
//                makes. Only the lowest failing rank rethrows its own error,
//                which its main prints; the others throw ReportedByRank.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <weft/weft.hpp>

namespace weft::examples {

// What together() throws on the ranks whose error another rank reports:
// main exits with exit_code, printing nothing.
class ReportedByRank : public std::runtime_error {
 public:
  ReportedByRank(int rank, int exit_code)
      : std::runtime_error("failed; rank " + std::to_string(rank) + " reported why"), exit_code_(exit_code) {}
  int exit_code() const noexcept { return exit_code_; }

 private:
  int exit_code_;
};

struct OneProcess {
  int rank() const noexcept { return 0; }
  int size() const noexcept { return 1; }
  bool root() const noexcept { return true; }
  std::shared_ptr<RankGroup> group() const { return nullptr; }
  template <class T, std::size_t D>
  Tensor<T, D> gather(const Tensor<T, D>& tensor) const {
    return tensor;
  }
  template <class F>
  void together(F&& f) const {
    std::forward<F>(f)();
  }
};

// A host tensor (partitions, sub_partitions, padding, sizes...), spread
// over ranks.group() when there is one.
template <class T, std::size_t D, class Ranks, class... Sizes>
Tensor<T, D> make_tensor(const Ranks& ranks, const Extents<D>& partitions, const Extents<D>& sub_partitions,
                         Sizes... sizes) {
  if (const std::shared_ptr<RankGroup> group = ranks.group())
    return Tensor<T, D>(distributed(group), partitions, sub_partitions, sizes...);
  return Tensor<T, D>(partitions, sub_partitions, sizes...);
}

// f(i, j) for every cell of the blocks of a 2D host tensor this rank holds.
template <class T, class F>
void for_each_local_cell(const Tensor<T, 2>& tensor, F&& f) {
  const TensorGeometry<2>& g = tensor.geometry();
  for (std::size_t b = 0; b < tensor.block_count(); ++b) {
    if (!tensor.is_local(b)) continue;
    const Extents<2> origin = g.block_origin(b), extent = g.block_extent(b);
    for (std::size_t j = origin[1]; j < origin[1] + extent[1]; ++j)
      for (std::size_t i = origin[0]; i < origin[0] + extent[0]; ++i) f(i, j);
  }
}

}  // namespace weft::examples

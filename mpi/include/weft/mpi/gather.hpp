// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// gather(session, tensor, root): every block of a distributed tensor, in
// one host tensor on rank `root` split the same way (padding included), for
// output and checks; other ranks get an empty Tensor. Collective: every
// rank of the tensor's group calls it, between graph runs over the tensor.
//
//   weft::Tensor<double, 2> whole = weft::mpi::gather(mpi, u, 0);
//   if (mpi.rank() == 0) write_png(whole);
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include <mpi.h>

#include <weft/mpi/session.hpp>
#include <weft/views/tensor.hpp>

namespace weft::mpi {

namespace detail {

template <class T, std::size_t D, std::size_t... I>
Tensor<T, D> tensor_like(const TensorGeometry<D>& g, std::index_sequence<I...>) {
  return Tensor<T, D>(g.partitions(), g.sub_partitions(), g.padding(), g.sizes()[I]...);
}

}  // namespace detail

template <class T, std::size_t D>
Tensor<T, D> gather(const Session& session, const Tensor<T, D>& tensor, int root = 0) {
  if (root < 0 || root >= session.size()) {
    throw std::invalid_argument("weft::mpi::gather: root " + std::to_string(root) + " is not a rank of the " +
                                std::to_string(session.size()) + " ranks");
  }
  if (tensor.in_gpu_memory()) {
    throw std::invalid_argument(
        "weft::mpi::gather: the tensor is in GPU memory; deep_copy it into a host tensor distributed the "
        "same way first");
  }
  if (tensor.rank_group() == nullptr) {
    throw std::invalid_argument(
        "weft::mpi::gather: the tensor is not distributed (every rank holds all of it)");
  }
  const int me = session.rank();
  Tensor<T, D> whole;
  // The root allocates first, and every rank hears whether it could: a
  // root that fails must not leave the others blocked in their sends.
  std::string refused;
  if (me == root) {
    try {
      whole = detail::tensor_like<T, D>(tensor.geometry(), std::make_index_sequence<D>{});
    } catch (const std::exception& error) {
      refused = error.what();
    }
  }
  int allocated = refused.empty() ? 1 : 0;
  session.call([&] { MPI_Allreduce(MPI_IN_PLACE, &allocated, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD); });
  if (allocated == 0) {
    throw std::runtime_error("weft::mpi::gather: rank " + std::to_string(root) +
                             " could not allocate the whole tensor" +
                             (refused.empty() ? "" : ": " + refused));
  }
  // Blocks in order; blocking calls on the progress thread (no graph runs
  // now), on a communicator of their own so that no message of the
  // program's can match them.
  session.call([&] {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    for (std::size_t b = 0; b < tensor.block_count(); ++b) {
      const int owner = tensor.owner_of(b);
      const BlockSpace<D>& s = tensor.block_space(b);
      const std::size_t bytes = element_storage<T>::bytes(s.count);
      if (bytes > static_cast<std::size_t>(INT32_MAX)) {
        MPI_Comm_free(&comm);  // every rank throws here alike: the blocks are the same everywhere
        throw std::length_error("weft::mpi::gather: block " + std::to_string(b) + " has more than 2 GiB");
      }
      const auto tag = static_cast<int>(b % 32768);  // in order per pair, so a tag may repeat
      if (me == root && owner == root) {
        std::memcpy(whole.block_space(b).data, s.data, bytes);
      } else if (me == root) {
        MPI_Recv(whole.block_space(b).data, static_cast<int>(bytes), MPI_BYTE, owner, tag, comm,
                 MPI_STATUS_IGNORE);
      } else if (me == owner) {
        MPI_Send(s.data, static_cast<int>(bytes), MPI_BYTE, root, tag, comm);
      }
    }
    MPI_Comm_free(&comm);
  });
  return whole;
}

}  // namespace weft::mpi

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The RankGroup of an MPI communicator, and the channels it opens: each a
// duplicate of the communicator, so graphs never see each other's messages.
// Internal to the mpi layer (mpi_channel.cpp).
#pragma once

#include <memory>
#include <string>

#include <mpi.h>

#include <weft/runtime/rank_group.hpp>

#include "progress.hpp"

namespace weft::mpi::detail {

class MpiGroup final : public RankGroup {
 public:
  MpiGroup(std::shared_ptr<Progress> progress, MPI_Comm comm, std::string name, int rank, int size,
           int local_rank)
      : progress_(std::move(progress)),
        comm_(comm),
        name_(std::move(name)),
        rank_(rank),
        size_(size),
        local_rank_(local_rank) {}
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  int local_rank() const noexcept override { return local_rank_; }
  std::string describe() const override {
    return name_ + " (" + std::to_string(size_) + (size_ == 1 ? " rank)" : " ranks)");
  }
  std::unique_ptr<RankChannel> open_channel(int tags) override;

 private:
  std::shared_ptr<Progress> progress_;
  MPI_Comm comm_;
  std::string name_;
  int rank_, size_, local_rank_;
};

}  // namespace weft::mpi::detail

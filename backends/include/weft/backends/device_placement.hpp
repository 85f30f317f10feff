// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DevicePlacement: which device each device-partition of a Tensor lives and
// runs on.
//
//   weft::DevicePlacement spread(6, /*device_count=*/4);     // round robin
//   spread.device_of(5);                                     // 1 (= 5 % 4)
//   spread.partitions_on(1);                                 // {1, 5}
//
//   weft::DevicePlacement pinned({0, 0, 1, 1}, /*device_count=*/2);   // explicit
//   pinned.device_of(2);                                     // 1
//
// Round robin (partition p on device p % device_count) spreads partitions
// evenly; with more partitions than devices a device holds several, which is
// how one GPU runs a multi-partition pipeline. An explicit mapping chooses
// partition by partition. Every device index is checked against device_count
// when the placement is made, so a placement that exists is valid.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace weft {

class DevicePlacement {
 public:
  // Round robin: partition p on device p % device_count.
  DevicePlacement(std::size_t partitions, int device_count) : device_count_(device_count) {
    check_device_count();
    device_of_partition_.reserve(partitions);
    for (std::size_t p = 0; p < partitions; ++p)
      device_of_partition_.push_back(static_cast<int>(p % static_cast<std::size_t>(device_count)));
  }

  // Explicit: partition p on device_of_partition[p].
  DevicePlacement(std::vector<int> device_of_partition, int device_count)
      : device_count_(device_count), device_of_partition_(std::move(device_of_partition)) {
    check_device_count();
    for (std::size_t p = 0; p < device_of_partition_.size(); ++p) {
      const int device = device_of_partition_[p];
      if (device < 0 || device >= device_count_) {
        throw std::invalid_argument("DevicePlacement: partition " + std::to_string(p) +
                                    " is mapped to device " + std::to_string(device) +
                                    " (expected a device in [0, " + std::to_string(device_count_) + "))");
      }
    }
  }

  std::size_t partitions() const noexcept { return device_of_partition_.size(); }
  int device_count() const noexcept { return device_count_; }
  const std::vector<int>& devices() const noexcept { return device_of_partition_; }

  int device_of(std::size_t partition) const {
    if (partition >= device_of_partition_.size()) {
      throw std::out_of_range("DevicePlacement: partition " + std::to_string(partition) + " out of range (" +
                              std::to_string(device_of_partition_.size()) + " partitions placed)");
    }
    return device_of_partition_[partition];
  }

  // The partitions on `device`, in increasing order.
  std::vector<std::size_t> partitions_on(int device) const {
    if (device < 0 || device >= device_count_) {
      throw std::out_of_range("DevicePlacement: device " + std::to_string(device) + " out of range (" +
                              std::to_string(device_count_) + " devices)");
    }
    std::vector<std::size_t> found;
    for (std::size_t p = 0; p < device_of_partition_.size(); ++p)
      if (device_of_partition_[p] == device) found.push_back(p);
    return found;
  }

  // True when partitions a and b are on one device, so data moves between
  // them without a peer or host-staged copy.
  bool same_device(std::size_t a, std::size_t b) const { return device_of(a) == device_of(b); }

 private:
  void check_device_count() const {
    if (device_count_ < 1) {
      throw std::invalid_argument("DevicePlacement: device count " + std::to_string(device_count_) +
                                  " (expected at least 1 device to place partitions on)");
    }
  }

  int device_count_;
  std::vector<int> device_of_partition_;
};

}  // namespace weft

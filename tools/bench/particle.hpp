// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Ripple's Particle (section 7.2): position and velocity, one struct for
// both layouts; the host (views_bench.cpp) and GPU (cuda_layout_bench.cu)
// particle benchmarks update the same type.
#pragma once

#include <cstddef>

#include <weft/backends/host_device.hpp>
#include <weft/views/polymorphic_layout.hpp>
#include <weft/views/storage_descriptor.hpp>
#include <weft/views/vector.hpp>

namespace weft::bench {

template <class Layout>
struct Particle : weft::PolymorphicLayout<Particle<Layout>> {
  using Storage =
      typename weft::StorageDescriptor<Layout, weft::Vector<float, 3>, weft::Vector<float, 3>>::Storage;
  WEFT_HOST_DEVICE float& position(std::size_t d) noexcept { return storage.template get<0>(d); }
  WEFT_HOST_DEVICE float& velocity(std::size_t d) noexcept { return storage.template get<1>(d); }
  WEFT_HOST_DEVICE void update(float dt) noexcept {
    for (std::size_t d = 0; d < 3; ++d) position(d) += velocity(d) * dt;
  }
  Storage storage;
};

}  // namespace weft::bench

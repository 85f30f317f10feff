// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Where StridedView and ContiguousView put the values of `count` elements in
// one byte buffer. Internal to element_storage; exposed so tests can check
// the placement rules.
//
// Strided (struct of arrays): every scalar component and every element of a
// Vector component gets its own array of padded_count(count) values, in
// declaration order. padded_count rounds count up so that every array is a
// whole number of `alignment`-byte blocks: each array then starts
// 64-byte aligned (or more, for over-aligned types), so SIMD loops over it
// need no peeling, and an array's start is count-independent arithmetic:
//   array of component I, element k = base + padded * (prefix_bytes[I] + k * sizeof(value_type<I>))
//
// Contiguous (array of structures): one record per element, the components
// at the offsets a struct declaring them in order would give them.
//
//   using B = weft::detail::strided_buffer<weft::detail::storage_components<weft::Vector<double, 3>, bool>>;
//   static_assert(B::granule == 64 && B::alignment == 64);  // the bool arrays set the granule
#pragma once

#include <weft/backends/host_device.hpp>

#include <array>
#include <cstddef>

namespace weft::detail {

constexpr std::size_t round_up(std::size_t value, std::size_t multiple) noexcept {
  return (value + multiple - 1) / multiple * multiple;
}

constexpr std::size_t greatest_common_divisor(std::size_t a, std::size_t b) noexcept {
  while (b != 0) {
    const std::size_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

template <class Components>
struct strided_buffer {
  static constexpr std::size_t count = Components::count;

  static constexpr std::size_t alignment = [] {
    std::size_t a = 64;
    for (std::size_t value_alignment : Components::value_alignments)
      a = a < value_alignment ? value_alignment : a;
    return a;
  }();

  // padded_count is a multiple of granule, which makes every array
  // (padded_count * sizeof(value)) a multiple of `alignment`. Alignments are
  // powers of two, so the granule is one too and rounding is a mask.
  static constexpr std::size_t granule = [] {
    std::size_t g = 1;
    for (std::size_t size : Components::value_sizes) {
      const std::size_t needed = alignment / greatest_common_divisor(alignment, size);
      g = g < needed ? needed : g;
    }
    return g;
  }();

  // Bytes of one element's values, over all components.
  static constexpr std::size_t element_bytes = [] {
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < count; ++i) bytes += Components::extents[i] * Components::value_sizes[i];
    return bytes;
  }();

  // Component I's first array starts at padded_count * prefix_bytes[I].
  static constexpr std::array<std::size_t, count> prefix_bytes = [] {
    std::array<std::size_t, count> prefix{};
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < count; ++i) {
      prefix[i] = bytes;
      bytes += Components::extents[i] * Components::value_sizes[i];
    }
    return prefix;
  }();

  // One entry per array: where it starts (in units of padded_count bytes) and
  // the size of its values. Used to copy element ranges array by array.
  struct Array {
    std::size_t prefix_bytes;
    std::size_t value_size;
  };
  static constexpr std::size_t array_count = [] {
    std::size_t arrays = 0;
    for (std::size_t extent : Components::extents) arrays += extent;
    return arrays;
  }();
  static constexpr std::array<Array, array_count> arrays = [] {
    std::array<Array, array_count> result{};
    std::size_t a = 0;
    for (std::size_t i = 0; i < count; ++i) {
      for (std::size_t k = 0; k < Components::extents[i]; ++k) {
        result[a++] = Array{prefix_bytes[i] + k * Components::value_sizes[i], Components::value_sizes[i]};
      }
    }
    return result;
  }();

  WEFT_HOST_DEVICE static constexpr std::size_t padded_count(std::size_t element_count) noexcept {
    return (element_count + granule - 1) & ~(granule - 1);
  }
  WEFT_HOST_DEVICE static constexpr std::size_t bytes(std::size_t element_count) noexcept {
    return padded_count(element_count) * element_bytes;
  }
};

template <class Components>
struct contiguous_buffer {
  static constexpr std::size_t count = Components::count;

  static constexpr std::size_t alignment = [] {
    std::size_t a = 1;
    for (std::size_t value_alignment : Components::value_alignments)
      a = a < value_alignment ? value_alignment : a;
    return a;
  }();

  static constexpr std::array<std::size_t, count> offsets = [] {
    std::array<std::size_t, count> result{};
    std::size_t end = 0;
    for (std::size_t i = 0; i < count; ++i) {
      result[i] = round_up(end, Components::value_alignments[i]);
      end = result[i] + Components::extents[i] * Components::value_sizes[i];
    }
    return result;
  }();

  static constexpr std::size_t record_bytes = round_up(
      offsets[count - 1] + Components::extents[count - 1] * Components::value_sizes[count - 1], alignment);

  WEFT_HOST_DEVICE static constexpr std::size_t bytes(std::size_t element_count) noexcept {
    return element_count * record_bytes;
  }
};

}  // namespace weft::detail

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// deep_copy: the only way data moves between Views (Kokkos tutorial: "Kokkos
// NEVER has a hidden, expensive deep-copy").
//
//   weft::View<double**, weft::LayoutLeft> a("a", 4, 3);
//   weft::View<double**> b("b", 4, 3);
//   weft::deep_copy(a, 1.5);       // every element of a is 1.5
//   weft::deep_copy(b, a);         // b(i, j) = a(i, j), whatever the two layouts
//
// deep_copy(dst, src) copies element by element between Views of the same
// rank, element type and extents, in any layouts and memory spaces. Equal
// extents are checked first: a mismatch throws std::invalid_argument ("deep_copy:
// View 'a' extents (4, 3) differ from View 'b' extents (3, 4)", destination
// first) and copies nothing. When both Views are contiguous with the same
// strides the copy is one block (memcpy, or one copy_from_host /
// copy_to_host). Otherwise Views in host-accessible spaces are copied in
// place, and a View in a space the host cannot reach is staged through a host
// buffer the size of its span with the space's copy_to_host / copy_from_host
// (a non-contiguous destination is read, updated and written back, so the
// elements between its strides keep their values). A copy of a View onto
// itself (a host mirror_view) does nothing. Views that overlap in any other
// way give unspecified results.
//
// deep_copy(dst, value) sets every element of dst to value.
//
// Both run on the calling thread and are complete when they return.
//
// deep_copy(stream, dst, src) queues the same copy on a CUDA stream
// (weft::GpuStream: what a GPU graph node gets) and returns without waiting:
// later work on that stream sees the data. Both Views must be contiguous
// with the same strides, so that it is one copy (else std::invalid_argument).
// It is fully asynchronous when the host side, if any, is HostPinnedSpace;
// with pageable host memory CUDA stages the copy and the call returns once
// the source may be reused (host to device) or the data has arrived (device
// to host).
#pragma once

#include <weft/backends/cuda_streams.hpp>
#include <weft/backends/detail/checked_size.hpp>
#include <weft/backends/memory_space.hpp>
#include <weft/views/view.hpp>
#include <weft/views/view_errors.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace weft {

namespace detail {

template <std::size_t Rank>
struct StridedShape {
  std::array<std::size_t, Rank> extents{};
  std::array<std::size_t, Rank> strides{};
};

template <class V>
StridedShape<V::rank> strided_shape_of(const V& view) {
  StridedShape<V::rank> shape;
  for (std::size_t i = 0; i < V::rank; ++i) {
    shape.extents[i] = view.extent(i);
    shape.strides[i] = view.stride(i);
  }
  return shape;
}

// Calls visit(dst_offset, src_offset) for every multi-index of `extents`. The
// dimensions are walked so that the one with the smallest destination stride
// is the innermost loop.
template <std::size_t Rank, class Visit>
void for_each_offset_pair(const std::array<std::size_t, Rank>& extents,
                          const std::array<std::size_t, Rank>& dst_strides,
                          const std::array<std::size_t, Rank>& src_strides, Visit&& visit) {
  if constexpr (Rank == 0) {
    visit(std::size_t{0}, std::size_t{0});
  } else {
    for (std::size_t e : extents) {
      if (e == 0) return;
    }
    std::array<std::size_t, Rank> order{};
    for (std::size_t i = 0; i < Rank; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return dst_strides[a] > dst_strides[b]; });
    const std::size_t inner = order[Rank - 1];
    std::array<std::size_t, Rank> counter{};  // over order[0 .. Rank-2]; the inner loop is explicit
    std::size_t dst_base = 0;
    std::size_t src_base = 0;
    while (true) {
      for (std::size_t n = 0; n < extents[inner]; ++n) {
        visit(dst_base + n * dst_strides[inner], src_base + n * src_strides[inner]);
      }
      // Advance the odometer over the outer dimensions, innermost of them first.
      std::size_t level = Rank - 1;
      while (level-- > 0) {
        const std::size_t d = order[level];
        if (++counter[d] < extents[d]) {
          dst_base += dst_strides[d];
          src_base += src_strides[d];
          break;
        }
        dst_base -= (extents[d] - 1) * dst_strides[d];
        src_base -= (extents[d] - 1) * src_strides[d];
        counter[d] = 0;
      }
      if (level == static_cast<std::size_t>(-1)) return;
    }
  }
}

template <class T, std::size_t Rank>
void copy_strided(T* dst, const std::array<std::size_t, Rank>& dst_strides, const T* src,
                  const std::array<std::size_t, Rank>& src_strides,
                  const std::array<std::size_t, Rank>& extents) {
  for_each_offset_pair(extents, dst_strides, src_strides,
                       [&](std::size_t d, std::size_t s) { dst[d] = src[s]; });
}

// Host memory holding `elements` values of T, for staging device data.
// (A View's span always fits in bytes; the check keeps that an invariant
// rather than an assumption.)
template <class T>
class StagingBuffer {
 public:
  explicit StagingBuffer(std::size_t elements) : buffer_(HostSpace{}, checked_bytes(elements)) {}
  T* data() const noexcept { return static_cast<T*>(buffer_.data()); }
  std::size_t bytes() const noexcept { return buffer_.size(); }

 private:
  static std::size_t checked_bytes(std::size_t elements) {
    const CheckedSize bytes = CheckedSize(elements) * sizeof(T);
    if (!bytes.fits()) {
      throw_size_overflow("deep_copy: a staging buffer of " + std::to_string(elements) + " elements of " +
                          std::to_string(sizeof(T)) + " bytes overflows std::size_t");
    }
    return bytes.value();
  }

  SpaceBuffer<HostSpace> buffer_;
};

template <class V>
bool same_strides(const V& a, const auto& b) {
  for (std::size_t i = 0; i < V::rank; ++i) {
    if (a.stride(i) != b.stride(i)) return false;
  }
  return true;
}

// Writes `fill(host_pointer)` into dst's span when dst's space is not host
// accessible: the span is read first unless every element of it is written.
template <class Dst, class Fill>
void update_device_span(const Dst& dst, Fill&& fill) {
  using T = typename Dst::non_const_value_type;
  StagingBuffer<T> staging(dst.span());
  if (!dst.span_is_contiguous()) dst.space().copy_to_host(staging.data(), dst.data(), staging.bytes());
  fill(staging.data());
  dst.space().copy_from_host(dst.data(), staging.data(), staging.bytes());
}

// A value deep_copy can fill a View of T with (a View is a source instead).
template <class Value, class T>
concept FillValue = !AnyView<Value> && std::is_convertible_v<const Value&, T>;

// What both forms of deep_copy(dst, src) require: writable dst, the same
// element type and rank, equal extents (else std::invalid_argument).
template <class Dst, class Src>
void check_copy_shapes(const Dst& dst, const Src& src) {
  static_assert(!std::is_const_v<typename Dst::value_type>,
                "deep_copy: the destination View has const elements");
  static_assert(std::is_same_v<typename Dst::non_const_value_type, typename Src::non_const_value_type>,
                "deep_copy: the two Views must have the same element type");
  static_assert(Dst::rank == Src::rank, "deep_copy: the two Views must have the same rank");
  const StridedShape<Dst::rank> to = strided_shape_of(dst);
  const StridedShape<Src::rank> from = strided_shape_of(src);
  if (to.extents != from.extents) {
    throw std::invalid_argument("deep_copy: " + view_name(dst.label()) + " extents " +
                                format_index_list(to.extents) + " differ from " + view_name(src.label()) +
                                " extents " + format_index_list(from.extents));
  }
}

}  // namespace detail

template <class DstData, class DstLayout, class DstSpace, class SrcData, class SrcLayout, class SrcSpace>
void deep_copy(const View<DstData, DstLayout, DstSpace>& dst, const View<SrcData, SrcLayout, SrcSpace>& src) {
  using Dst = View<DstData, DstLayout, DstSpace>;
  using Src = View<SrcData, SrcLayout, SrcSpace>;
  using T = typename Dst::non_const_value_type;
  detail::check_copy_shapes(dst, src);
  const detail::StridedShape<Dst::rank> to = detail::strided_shape_of(dst);
  const detail::StridedShape<Src::rank> from = detail::strided_shape_of(src);
  if (dst.size() == 0) return;
  const bool one_block =
      dst.span_is_contiguous() && src.span_is_contiguous() && detail::same_strides(dst, src);
  constexpr bool dst_host = DstSpace::host_accessible;
  constexpr bool src_host = SrcSpace::host_accessible;
  if constexpr (dst_host && src_host) {
    if (static_cast<const void*>(dst.data()) == static_cast<const void*>(src.data()) &&
        to.strides == from.strides) {
      return;  // a View onto itself
    }
  }
  const std::size_t block_bytes = dst.size() * sizeof(T);

  if constexpr (dst_host && src_host) {
    if (one_block) {
      std::memmove(dst.data(), src.data(), block_bytes);
    } else {
      detail::copy_strided(dst.data(), to.strides, src.data(), from.strides, to.extents);
    }
  } else if constexpr (!dst_host && src_host) {
    if (one_block) {
      dst.space().copy_from_host(dst.data(), src.data(), block_bytes);
    } else {
      detail::update_device_span(dst, [&](T* host) {
        detail::copy_strided(host, to.strides, src.data(), from.strides, to.extents);
      });
    }
  } else {
    // The source is in device memory: bring its span to the host first.
    detail::StagingBuffer<T> source(src.span());
    src.space().copy_to_host(source.data(), src.data(), source.bytes());
    if constexpr (dst_host) {
      detail::copy_strided(dst.data(), to.strides, static_cast<const T*>(source.data()), from.strides,
                           to.extents);
    } else if (one_block) {
      dst.space().copy_from_host(dst.data(), source.data(), block_bytes);
    } else {
      detail::update_device_span(dst, [&](T* host) {
        detail::copy_strided(host, to.strides, static_cast<const T*>(source.data()), from.strides,
                             to.extents);
      });
    }
  }
}

template <class DstData, class DstLayout, class DstSpace, class SrcData, class SrcLayout, class SrcSpace>
void deep_copy(const GpuStream& stream, const View<DstData, DstLayout, DstSpace>& dst,
               const View<SrcData, SrcLayout, SrcSpace>& src) {
  using T = typename View<DstData, DstLayout, DstSpace>::non_const_value_type;
  detail::check_copy_shapes(dst, src);
  if (!(dst.span_is_contiguous() && src.span_is_contiguous() && detail::same_strides(dst, src))) {
    throw std::invalid_argument("deep_copy(stream, ...): " + detail::view_name(dst.label()) + " and " +
                                detail::view_name(src.label()) +
                                " are not both contiguous with the same strides; an asynchronous copy is one "
                                "block (deep_copy(dst, src) copies any layouts, synchronously)");
  }
  if (dst.size() == 0) return;
  stream_ops::copy(dst.data(), src.data(), dst.size() * sizeof(T), stream.stream, stream.device);
}

// Sets every element of dst to value.
template <class DstData, class DstLayout, class DstSpace, class Value>
requires detail::FillValue<Value, typename View<DstData, DstLayout, DstSpace>::non_const_value_type>
void deep_copy(const View<DstData, DstLayout, DstSpace>& dst, const Value& value) {
  using Dst = View<DstData, DstLayout, DstSpace>;
  using T = typename Dst::non_const_value_type;
  static_assert(!std::is_const_v<typename Dst::value_type>,
                "deep_copy: the destination View has const elements");
  if (dst.size() == 0) return;
  const T element = static_cast<T>(value);
  const detail::StridedShape<Dst::rank> to = detail::strided_shape_of(dst);
  const auto fill = [&](T* host) {
    if (dst.span_is_contiguous()) {
      std::fill_n(host, dst.span(), element);
    } else {
      detail::for_each_offset_pair(to.extents, to.strides, to.strides,
                                   [&](std::size_t d, std::size_t) { host[d] = element; });
    }
  };
  if constexpr (DstSpace::host_accessible) {
    fill(dst.data());
  } else {
    detail::update_device_span(dst, fill);
  }
}

}  // namespace weft

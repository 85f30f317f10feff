// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// element_storage<T>: how a container of `count` elements of T lays them out
// in one byte buffer. The Tensor and ElementArray hold raw bytes and go
// through this, so a plain T and a polymorphic-layout T share one container.
//
//   using S = weft::element_storage<State<double, 3, weft::StridedView>>;
//   void* buffer = ::operator new(S::bytes(n), std::align_val_t{S::alignment});
//   S::at(buffer, i, n).density() = 1.0;            // element i's density
//   S::copy(other, 0, m, buffer, 10, n, 5);         // elements [10, 15) to [0, 5) of `other`
//
// - Plain T (anything else, trivially copyable): an array of T; reference is
//   T&, and at() is pointer arithmetic.
// - T with a StridedView or ContiguousView layout (`polymorphic`): the
//   layout of storage_buffer_layout.hpp; reference is T itself, a handle on
//   the element (see polymorphic_layout.hpp). at() computes one pointer per
//   component with no loop, so in a loop over i the per-component bases are
//   invariant and the compiler hoists them.
// - A polymorphic-layout type with the ContiguousOwned layout is an ordinary
//   trivially copyable struct and is stored as a plain T.
//
// `count` is the number of elements the buffer was sized for (bytes(count));
// strided buffers need it to find the component arrays. bytes(count) is
// device-side arithmetic that assumes the size fits; containers size their
// buffers with checked_bytes(count), which says when it does not.
#pragma once

#include <weft/backends/detail/checked_size.hpp>
#include <weft/backends/host_device.hpp>
#include <weft/views/polymorphic_layout.hpp>
#include <weft/views/storage_buffer_layout.hpp>

#include <cassert>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace weft {

namespace detail {

[[noreturn]] inline void throw_element_range_error(const char* which, std::size_t index, std::size_t n,
                                                   std::size_t count) {
  throw std::out_of_range("element_storage::copy: " + std::to_string(n) + " elements from " + which +
                          " index " + std::to_string(index) + " do not fit the " + which + "'s " +
                          std::to_string(count) + " elements");
}

// Throws std::out_of_range unless [index, index + n) lies in [0, count). The
// test stays inline so the compiler sees it guard the copies that follow.
inline void check_element_range(const char* which, std::size_t index, std::size_t n, std::size_t count) {
  if (index > count || n > count - index) throw_element_range_error(which, index, n, count);
}

// How element_storage::copy moves bytes by default: host memory, the ranges
// may overlap. Tensors in GPU memory pass a mover that queues the copy on a
// stream instead.
struct HostMove {
  void operator()(void* dst, const void* src, std::size_t bytes) const { std::memmove(dst, src, bytes); }
};

// How element_storage::copy_rows moves bytes by default: `rows` rows of
// `width` bytes, row r at dst + r * dst_pitch and src + r * src_pitch, one
// memmove each. Tensors in GPU memory pass one 2D copy on a stream instead.
struct HostMove2D {
  void operator()(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                  std::size_t rows) const {
    for (std::size_t r = 0; r < rows; ++r)
      std::memmove(static_cast<std::byte*>(dst) + r * dst_pitch,
                   static_cast<const std::byte*>(src) + r * src_pitch, width);
  }
};

// Throws unless `rows` rows of n elements, the first at `index` and the
// next each `pitch` further, lie in [0, count) and do not overlap.
inline void check_row_range(const char* which, std::size_t index, std::size_t pitch, std::size_t n,
                            std::size_t rows, std::size_t count) {
  check_element_range(which, index, n, count);
  if (rows <= 1) return;
  if (pitch < n) {
    throw std::invalid_argument(std::string("element_storage::copy_rows: the ") + which + "'s rows of " +
                                std::to_string(n) + " elements are " + std::to_string(pitch) +
                                " apart, so they overlap");
  }
  if (rows - 1 > (count - index) / pitch)
    throw_element_range_error(which, index, (rows - 1) * pitch + n, count);
  check_element_range(which, index + (rows - 1) * pitch, n, count);
}

}  // namespace detail

template <class T>
struct element_storage {
  static_assert(std::is_trivially_copyable_v<T>,
                "element_storage<T>: containers copy elements as bytes, so T must be trivially copyable "
                "(or a polymorphic-layout type instantiated with StridedView or ContiguousView)");

  static constexpr bool polymorphic = false;
  using reference = T&;
  using const_reference = const T&;
  static constexpr std::size_t alignment = alignof(T);
  // Bytes of one element's values.
  static constexpr std::size_t element_bytes = sizeof(T);

  WEFT_HOST_DEVICE static constexpr std::size_t bytes(std::size_t count) noexcept {
    return count * sizeof(T);
  }
  // bytes(count), not fits() when it does not fit in size_t (host side).
  static constexpr detail::CheckedSize checked_bytes(std::size_t count) noexcept {
    return detail::CheckedSize(count) * sizeof(T);
  }

  WEFT_HOST_DEVICE static reference at(void* base, std::size_t index,
                                       [[maybe_unused]] std::size_t count) noexcept {
    assert(index < count && "element index out of range");
    return static_cast<T*>(base)[index];
  }
  WEFT_HOST_DEVICE static const_reference at(const void* base, std::size_t index,
                                             [[maybe_unused]] std::size_t count) noexcept {
    assert(index < count && "element index out of range");
    return static_cast<const T*>(base)[index];
  }

  // Copies elements [src_index, src_index + n) of a buffer of src_count
  // elements to [dst_index, dst_index + n) of a buffer of dst_count elements.
  // The buffers may be the same; the ranges may even overlap.
  // `move` does the byte copies (detail::HostMove: memmove).
  template <class Move = detail::HostMove>
  static void copy(void* dst, std::size_t dst_index, std::size_t dst_count, const void* src,
                   std::size_t src_index, std::size_t src_count, std::size_t n, const Move& move = {}) {
    detail::check_element_range("source", src_index, n, src_count);
    detail::check_element_range("destination", dst_index, n, dst_count);
    if (n == 0) return;
    move(static_cast<std::byte*>(dst) + dst_index * sizeof(T),
         static_cast<const std::byte*>(src) + src_index * sizeof(T), n * sizeof(T));
  }
  // Copies `rows` rows of n elements: row r from src index src_index + r *
  // src_pitch to dst index dst_index + r * dst_pitch (pitches in elements,
  // at least n). `move` takes the whole 2D copy (detail::HostMove2D: a
  // memmove per row); a strided type makes one call per component array.
  template <class Move2D = detail::HostMove2D>
  static void copy_rows(void* dst, std::size_t dst_index, std::size_t dst_pitch, std::size_t dst_count,
                        const void* src, std::size_t src_index, std::size_t src_pitch, std::size_t src_count,
                        std::size_t n, std::size_t rows, const Move2D& move = {}) {
    if (n == 0 || rows == 0) return;
    detail::check_row_range("source", src_index, src_pitch, n, rows, src_count);
    detail::check_row_range("destination", dst_index, dst_pitch, n, rows, dst_count);
    move(static_cast<std::byte*>(dst) + dst_index * sizeof(T), dst_pitch * sizeof(T),
         static_cast<const std::byte*>(src) + src_index * sizeof(T), src_pitch * sizeof(T), n * sizeof(T),
         rows);
  }
};

template <class T>
requires polymorphic_view_type<T>
struct element_storage<T> {
  static constexpr bool polymorphic = true;
  using reference = T;
  using const_reference = const T;
  using storage_type = storage_of_t<T>;
  using layout = typename storage_type::layout;

 private:
  using components = typename storage_type::components;
  static constexpr bool strided = std::is_same_v<layout, StridedView>;
  using buffer =
      std::conditional_t<strided, detail::strided_buffer<components>, detail::contiguous_buffer<components>>;

  template <std::size_t... I>
  WEFT_HOST_DEVICE static T bind(std::byte* base, std::size_t index, std::size_t count,
                                 std::index_sequence<I...>) noexcept {
    if constexpr (strided) {
      const std::size_t stride = buffer::padded_count(count);
      return detail::make_bound<T>(storage_type(
          stride, (base + stride * buffer::prefix_bytes[I] + index * components::value_sizes[I])...));
    } else {
      std::byte* record = base + index * buffer::record_bytes;
      return detail::make_bound<T>(storage_type(1, (record + buffer::offsets[I])...));
    }
  }

 public:
  static constexpr std::size_t alignment = buffer::alignment;
  // Bytes of one element's values, over all components (padding aside).
  static constexpr std::size_t element_bytes = [] {
    if constexpr (strided) {
      return buffer::element_bytes;
    } else {
      return buffer::record_bytes;
    }
  }();

  WEFT_HOST_DEVICE static constexpr std::size_t bytes(std::size_t count) noexcept {
    return buffer::bytes(count);
  }
  // bytes(count), not fits() when it does not fit in size_t (host side).
  static constexpr detail::CheckedSize checked_bytes(std::size_t count) noexcept {
    if constexpr (strided) {
      // padded_count(count) rounds up to a whole granule first.
      const detail::CheckedSize rounded_up = detail::CheckedSize(count) + (buffer::granule - 1);
      if (!rounded_up.fits()) return rounded_up;
      return detail::CheckedSize(buffer::padded_count(count)) * buffer::element_bytes;
    } else {
      return detail::CheckedSize(count) * buffer::record_bytes;
    }
  }

  WEFT_HOST_DEVICE static reference at(void* base, std::size_t index, std::size_t count) noexcept {
    assert(index < count && "element index out of range");
    return bind(static_cast<std::byte*>(base), index, count, std::make_index_sequence<components::count>{});
  }
  // A handle that only reads (its accessors are const).
  WEFT_HOST_DEVICE static const_reference at(const void* base, std::size_t index,
                                             std::size_t count) noexcept {
    return at(const_cast<void*>(base), index, count);
  }

  // As for plain T: memmove per component array for strided, one memmove for
  // contiguous.
  template <class Move = detail::HostMove>
  static void copy(void* dst, std::size_t dst_index, std::size_t dst_count, const void* src,
                   std::size_t src_index, std::size_t src_count, std::size_t n, const Move& move = {}) {
    detail::check_element_range("source", src_index, n, src_count);
    detail::check_element_range("destination", dst_index, n, dst_count);
    if (n == 0) return;
    auto* dst_bytes = static_cast<std::byte*>(dst);
    const auto* src_bytes = static_cast<const std::byte*>(src);
    if constexpr (strided) {
      const std::size_t dst_stride = buffer::padded_count(dst_count);
      const std::size_t src_stride = buffer::padded_count(src_count);
      for (const auto& array : buffer::arrays) {
        move(dst_bytes + dst_stride * array.prefix_bytes + dst_index * array.value_size,
             src_bytes + src_stride * array.prefix_bytes + src_index * array.value_size,
             n * array.value_size);
      }
    } else {
      move(dst_bytes + dst_index * buffer::record_bytes, src_bytes + src_index * buffer::record_bytes,
           n * buffer::record_bytes);
    }
  }
  // As for plain T: one 2D copy per component array for strided, one for
  // contiguous.
  template <class Move2D = detail::HostMove2D>
  static void copy_rows(void* dst, std::size_t dst_index, std::size_t dst_pitch, std::size_t dst_count,
                        const void* src, std::size_t src_index, std::size_t src_pitch, std::size_t src_count,
                        std::size_t n, std::size_t rows, const Move2D& move = {}) {
    if (n == 0 || rows == 0) return;
    detail::check_row_range("source", src_index, src_pitch, n, rows, src_count);
    detail::check_row_range("destination", dst_index, dst_pitch, n, rows, dst_count);
    auto* dst_bytes = static_cast<std::byte*>(dst);
    const auto* src_bytes = static_cast<const std::byte*>(src);
    if constexpr (strided) {
      const std::size_t dst_stride = buffer::padded_count(dst_count);
      const std::size_t src_stride = buffer::padded_count(src_count);
      for (const auto& array : buffer::arrays) {
        move(dst_bytes + dst_stride * array.prefix_bytes + dst_index * array.value_size,
             dst_pitch * array.value_size,
             src_bytes + src_stride * array.prefix_bytes + src_index * array.value_size,
             src_pitch * array.value_size, n * array.value_size, rows);
      }
    } else {
      move(dst_bytes + dst_index * buffer::record_bytes, dst_pitch * buffer::record_bytes,
           src_bytes + src_index * buffer::record_bytes, src_pitch * buffer::record_bytes,
           n * buffer::record_bytes, rows);
    }
  }
};

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// View<DataType, Layout, Space>: a reference-counted handle to a
// multidimensional array in one memory space (Kokkos tutorial, "Views to
// Arrays"; Kokkos array paper).
//
//   weft::View<double**[3]> a("a", n, m);     // n x m x 3, C order, host memory, zero-filled
//   a(i, j, k) = 1.0;                         // a multiply-add chain; the 3 is folded in
//   weft::View<double**[3]> b = a;            // shallow: b and a share the data, use_count() == 2
//   weft::View<const double**[3]> c = a;      // read-only handle to the same data
//   weft::View<double**, weft::LayoutLeft> f("f", 4, 8);   // Fortran order
//   weft::View<double**> u(pointer, 4, 8);    // unmanaged: wraps user memory, never frees it
//
// Data type: runtime extents (`*`) first, then compile-time extents (`[N]`),
// up to 8 in all (see view_extents.hpp). The constructor takes one extent per
// `*`, or one per dimension (the compile-time ones must then agree).
//
// Ownership: copies are shallow and share a count; the last View that refers
// to an allocation frees it. Allocations come from:
//   View(label, extents...)              the Space (Space{}), or
//   View(label, space, extents...)       a given space object (CudaSpace(1)),
//   View(label, pool, extents...)        a MemoryPool<Space> block, given back when the last View goes
//                                        (the pool must outlive its Views); AllocationError when the pool
//                                        cannot serve the request,
//   View(label, arena, extents...)       a LinearArena (MultiarchAllocator); arena memory is released by
//                                        arena.reset(), so such a View never frees; ArenaExhausted
//                                        (an AllocationError) when it is full.
// Managed Views value-initialise their elements (zero for arithmetic types)
// in host-accessible spaces; in other spaces their bytes are zeroed through
// the space's copy_from_host. Arena Views in device arenas are zeroed too.
// Unmanaged Views, View(pointer, extents...) or View(label, pointer,
// extents...), wrap memory the caller owns: use_count() is 0 and nothing is
// freed. A default-constructed View is empty (data() == nullptr).
// Extents whose element count or bytes overflow std::size_t throw
// AllocationError naming them ("View 'u': extents 2305843009213693952 x 8 of
// 8-byte elements overflow std::size_t") before anything is allocated, for
// unmanaged Views too, so size(), span() and strides are always exact.
//
// Element types must be trivially copyable: deep_copy moves bytes between
// spaces. Copying a View is thread safe (the count is atomic); writing the
// same elements from several threads is the caller's business.
//
// Bounds checks: when NDEBUG is not defined, or WEFT_VIEW_BOUNDS_CHECK is,
// operator() throws std::out_of_range naming the label, the index and the
// extents ("View 'u' index (5, 3) out of bounds (4, 8)"), and std::logic_error
// when the host touches a View whose space it cannot access; device code
// traps instead. Otherwise operator() is only the index arithmetic and the
// load.
#pragma once

#include <weft/backends/detail/checked_size.hpp>
#include <weft/backends/host_device.hpp>
#include <weft/backends/memory_space.hpp>
#include <weft/memory/linear_arena.hpp>
#include <weft/memory/memory_pool.hpp>
#include <weft/views/layout.hpp>
#include <weft/views/view_allocation.hpp>
#include <weft/views/view_errors.hpp>
#include <weft/views/view_extents.hpp>
#include <weft/views/view_mapping.hpp>

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace weft {

#if !defined(NDEBUG) || defined(WEFT_VIEW_BOUNDS_CHECK)
inline constexpr bool view_bounds_checking = true;
#else
inline constexpr bool view_bounds_checking = false;
#endif

template <class DataType, class Layout = LayoutRight, class Space = HostSpace>
class View;

namespace detail {

struct ViewAccess;

template <class T>
struct IsView : std::false_type {};
template <class DataType, class Layout, class Space>
struct IsView<View<DataType, Layout, Space>> : std::true_type {};

// The shape a constructor takes after its label and memory source: one
// integer per runtime extent or one per dimension, or, for LayoutStride
// Views, one LayoutStride. Any other count does not compile.
template <class Layout, std::size_t Rank, std::size_t RankDynamic, class... Shape>
concept ViewShapeArgs = ((std::integral<Shape> && ...) &&
                         (sizeof...(Shape) == RankDynamic || sizeof...(Shape) == Rank)) ||
                        (std::same_as<Layout, LayoutStride> && sizeof...(Shape) == 1 &&
                         (std::same_as<Shape, LayoutStride> && ...));

// Whether a View<...> of type From may be copied into one of type To: the
// same space and rank, elements that only gain const, a layout To can
// express, and every compile-time extent of To known and equal in From.
template <class From, class To>
constexpr bool view_convertible() {
  using FromValue = typename From::value_type;
  using ToValue = typename To::value_type;
  if constexpr (!std::is_same_v<typename From::memory_space, typename To::memory_space> ||
                From::rank != To::rank ||
                !std::is_same_v<std::remove_const_t<FromValue>, std::remove_const_t<ToValue>> ||
                (std::is_const_v<FromValue> && !std::is_const_v<ToValue>)) {
    return false;
  } else {
    using FromLayout = typename From::array_layout;
    using ToLayout = typename To::array_layout;
    // Left and Right agree when at most one dimension exists; any layout fits LayoutStride.
    const bool layouts_fit = std::is_same_v<FromLayout, ToLayout> || std::is_same_v<ToLayout, LayoutStride> ||
                             (To::rank <= 1 && !std::is_same_v<FromLayout, LayoutStride>);
    bool extents_fit = true;
    for (std::size_t i = 0; i < To::rank; ++i) {
      const std::size_t wanted = To::extents_type::static_extent(i);
      if (wanted != 0 && wanted != From::extents_type::static_extent(i)) extents_fit = false;
    }
    return layouts_fit && extents_fit;
  }
}

template <class From, class To>
concept ConvertibleViewTo = IsView<From>::value && !std::is_same_v<From, To> && view_convertible<From, To>();

// Zeroes device memory by copying a block of zeros from the host, one piece at a time.
template <MemorySpace Space>
void zero_fill_through_host(const Space& space, void* data, std::size_t bytes) {
  static constexpr std::size_t piece = std::size_t{64} << 10;
  static const std::array<std::byte, piece> zeros{};
  auto* out = static_cast<std::byte*>(data);
  for (std::size_t done = 0; done < bytes; done += piece) {
    space.copy_from_host(out + done, zeros.data(), std::min(piece, bytes - done));
  }
}

}  // namespace detail

template <class T>
concept AnyView = detail::IsView<std::remove_cvref_t<T>>::value;

template <class DataType, class Layout, class Space>
class View {
  using traits = ViewDataTraits<DataType>;

 public:
  using data_type = DataType;
  using value_type = typename traits::value_type;
  using non_const_value_type = std::remove_const_t<value_type>;
  using const_value_type = const non_const_value_type;
  using extents_type = typename traits::extents_type;
  using non_const_data_type = typename extents_type::template data_type_for<non_const_value_type>;
  using const_data_type = typename extents_type::template data_type_for<const_value_type>;
  using array_layout = Layout;
  using memory_space = Space;
  using mapping_type = ViewMapping<extents_type, Layout>;
  using pointer_type = value_type*;
  using reference_type = value_type&;
  // What create_mirror returns: a host copy with the same shape and layout.
  using host_mirror_type = View<non_const_data_type, Layout, HostSpace>;

  static constexpr std::size_t rank = traits::rank;
  static constexpr std::size_t rank_dynamic = traits::rank_dynamic;

  static_assert(ViewLayout<Layout>, "View layout must be LayoutLeft, LayoutRight or LayoutStride");
  static_assert(MemorySpace<Space>,
                "View space must be a memory space (HostSpace, HostPinnedSpace, CudaSpace)");
  static_assert(std::is_trivially_copyable_v<value_type>,
                "View elements must be trivially copyable: deep_copy moves them as bytes between spaces");
  static_assert(alignof(value_type) <= Space::alignment,
                "View element alignment exceeds what the memory space guarantees");

 private:
  template <class... Shape>
  static constexpr bool shape_args = detail::ViewShapeArgs<Layout, rank, rank_dynamic, Shape...>;

 public:
  // An empty View: no data, runtime extents 0.
  View() = default;

  // A new allocation from Space{}, value-initialised.
  template <class... Shape>
  requires shape_args<Shape...>
  explicit View(const std::string& label, const Shape&... shape) : View(label, Space{}, shape...) {}

  // A new allocation from `space` (for example CudaSpace(1)), value-initialised.
  template <class... Shape>
  requires shape_args<Shape...>
  explicit View(const std::string& label, const Space& space, const Shape&... shape) : space_(space) {
    map_ = shape_mapping(label, shape...);
    const std::size_t bytes = allocation_bytes(label);
    std::unique_ptr<detail::SpaceAllocation<Space>> record;
    try {
      record = std::make_unique<detail::SpaceAllocation<Space>>(label, space, bytes);
    } catch (const AllocationError& e) {
      throw AllocationError(detail::view_name(label) + ": " + e.what());
    }
    data_ = static_cast<pointer_type>(record->data());
    initialise(bytes);
    record_ = record.release();
  }

  // A block from `pool`, given back when the last View referring to it goes.
  // Host-accessible spaces only (device pools hand out blocks in kernels).
  template <class... Shape>
  requires shape_args<Shape...>
  explicit View(const std::string& label, const MemoryPool<Space>& pool, const Shape&... shape)
      : space_(pool.space()) {
    static_assert(Space::host_accessible, "View(label, pool, ...): the pool's space must be host accessible");
    map_ = shape_mapping(label, shape...);
    const std::size_t bytes = allocation_bytes(label);
    auto record = std::make_unique<detail::PoolAllocation<Space>>(label, pool, bytes);
    data_ = static_cast<pointer_type>(record->data());
    initialise(bytes);
    record_ = record.release();
  }

  // Memory from `arena`, which reset() reclaims; the View never frees it.
  template <class... Shape>
  requires shape_args<Shape...>
  explicit View(const std::string& label, LinearArena& arena, const Shape&... shape)
      : View(label, arena, Space{}, shape...) {}

  // The same, naming the space the arena's memory lives in (CudaSpace(d) for device d's arena).
  template <class... Shape>
  requires shape_args<Shape...>
  explicit View(const std::string& label, LinearArena& arena, const Space& space, const Shape&... shape)
      : space_(space) {
    if (arena.device_memory() == Space::host_accessible) {
      throw std::invalid_argument(detail::view_name(label) + ": arena '" + arena.name() + "' holds " +
                                  (arena.device_memory() ? "device" : "host") + " memory, but the View's " +
                                  Space::name() + " is " + (Space::host_accessible ? "host" : "device") +
                                  " memory");
    }
    map_ = shape_mapping(label, shape...);
    const std::size_t bytes = allocation_bytes(label);
    auto record = std::make_unique<detail::ViewRecord>(label, true);
    void* memory = arena.try_allocate(bytes, alignof(value_type));
    if (memory == nullptr && bytes != 0) {
      throw ArenaExhausted(detail::view_name(label) + ": arena '" + arena.name() + "' cannot provide " +
                           std::to_string(bytes) + " bytes (" + std::to_string(arena.remaining()) + " of " +
                           std::to_string(arena.capacity()) + " bytes left)");
    }
    data_ = static_cast<pointer_type>(memory);
    initialise(bytes);
    record_ = record.release();
  }

  // Unmanaged: a View of memory the caller owns and keeps alive. No label,
  // use_count() 0, never frees.
  template <class... Shape>
  requires shape_args<Shape...>
  explicit View(pointer_type data, const Shape&... shape) : data_(data), map_(shape_mapping("", shape...)) {
    (void)allocation_bytes("");  // the same shapes as managed Views: sizes must fit in size_t
  }

  // Unmanaged with a label for error messages; still use_count() 0 and never frees.
  template <class... Shape>
  requires shape_args<Shape...>
  explicit View(const std::string& label, pointer_type data, const Shape&... shape)
      : data_(data), map_(shape_mapping(label, shape...)) {
    (void)allocation_bytes(label);
    record_ = std::make_unique<detail::ViewRecord>(label, false).release();
  }

  WEFT_HOST_DEVICE View(const View& other) noexcept
      : data_(other.data_), record_(other.record_), map_(other.map_), space_(other.space_) {
    retain();
  }

  WEFT_HOST_DEVICE View(View&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        record_(std::exchange(other.record_, nullptr)),
        map_(other.map_),
        space_(other.space_) {}

  // From a compatible View: View<const T*> from View<T*>, LayoutStride from
  // LayoutLeft/Right, a runtime extent from a compile-time one. Implicit, like
  // double* to const double*.
  template <detail::ConvertibleViewTo<View> Other>
  View(const Other& other) noexcept
      : data_(other.data_),
        record_(other.record_),
        map_(detail::make_mapping<mapping_type>(other.map_.extents().to_array(),
                                                detail::strides_of(other.map_))),
        space_(other.space_) {
    retain();
  }

  View& operator=(const View& other) noexcept {
    View copy(other);
    swap(copy);
    return *this;
  }

  View& operator=(View&& other) noexcept {
    View taken(std::move(other));
    swap(taken);
    return *this;
  }

  WEFT_HOST_DEVICE ~View() { release(); }

  // The element at (i0, i1, ...): one index per dimension.
  template <std::integral... Indices>
  WEFT_HOST_DEVICE reference_type operator()(Indices... indices) const {
    static_assert(sizeof...(Indices) == rank, "View::operator(): pass exactly one index per dimension");
    if constexpr (view_bounds_checking) check_access(indices...);
    return data_[map_.offset(indices...)];
  }

  // Extent of dimension i; 1 for i >= rank (as in Kokkos).
  WEFT_HOST_DEVICE constexpr std::size_t extent(std::size_t i) const noexcept {
    return i < rank ? map_.extents().extent(i) : 1;
  }
  // Elements between consecutive indices of dimension i; 0 for i >= rank.
  constexpr std::size_t stride(std::size_t i) const noexcept { return i < rank ? map_.stride(i) : 0; }
  // Number of elements: the product of the extents.
  WEFT_HOST_DEVICE constexpr std::size_t size() const noexcept { return map_.extents().product(); }
  // Elements the memory covers, holes between strided elements included.
  constexpr std::size_t span() const noexcept { return map_.span(); }
  // True when the elements fill their span with no holes.
  constexpr bool span_is_contiguous() const noexcept { return span() == size(); }

  WEFT_HOST_DEVICE pointer_type data() const noexcept { return data_; }
  bool is_allocated() const noexcept { return data_ != nullptr; }
  const std::string& label() const noexcept { return record_ != nullptr ? record_->label() : no_label(); }
  // Views sharing this allocation; 0 for empty and unmanaged Views.
  std::size_t use_count() const noexcept { return record_ != nullptr ? record_->use_count() : 0; }
  const Space& space() const noexcept { return space_; }

  // The shape as a LayoutStride: (extent, stride) per dimension.
  LayoutStride layout_stride() const noexcept {
    LayoutStride layout;
    layout.rank = rank;
    for (std::size_t i = 0; i < rank; ++i) {
      layout.extent[i] = extent(i);
      layout.stride[i] = stride(i);
    }
    return layout;
  }

 private:
  template <class, class, class>
  friend class View;
  friend struct detail::ViewAccess;

  struct SharedTag {};

  // A View of `data` that shares `record` (subviews).
  View(SharedTag, pointer_type data, const mapping_type& map, detail::ViewRecord* record, const Space& space)
      : data_(data), record_(record), map_(map), space_(space) {
    retain();
  }

  static const std::string& no_label() noexcept {
    static const std::string empty;
    return empty;
  }

  WEFT_HOST_DEVICE void retain() const noexcept {
#if !defined(__CUDA_ARCH__)  // device code copies Views without counting them
    if (record_ != nullptr) record_->retain();
#endif
  }

  WEFT_HOST_DEVICE void release() noexcept {
#if !defined(__CUDA_ARCH__)
    if (record_ != nullptr) record_->release();
#endif
    record_ = nullptr;
  }

  void swap(View& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(record_, other.record_);
    std::swap(map_, other.map_);
    std::swap(space_, other.space_);
  }

  // The mapping for constructor arguments `shape`, checked.
  template <class... Shape>
  static mapping_type shape_mapping(const std::string& label, const Shape&... shape) {
    std::array<std::size_t, rank> extents{};
    std::array<std::size_t, rank> strides{};
    if constexpr ((std::same_as<Shape, LayoutStride> && ...) && sizeof...(Shape) == 1) {
      const LayoutStride& layout = (shape, ...);
      if (layout.rank != rank) {
        throw std::invalid_argument(detail::view_name(label) + ": the LayoutStride has " +
                                    std::to_string(layout.rank) +
                                    " (extent, stride) pairs, the View has rank " + std::to_string(rank));
      }
      std::copy_n(layout.extent.begin(), rank, extents.begin());
      std::copy_n(layout.stride.begin(), rank, strides.begin());
      check_compile_time_extents(label, extents);
    } else {
      if ((detail::is_negative(shape) || ...)) {
        throw std::invalid_argument(detail::view_name(label) + ": extents " +
                                    detail::format_index_list(detail::index_array(shape...)) +
                                    " must not be negative");
      }
      const std::array<std::size_t, sizeof...(Shape)> given{static_cast<std::size_t>(shape)...};
      for (std::size_t i = 0; i < rank; ++i) {
        extents[i] = i < given.size() ? given[i] : extents_type::static_extent(i);
      }
      if constexpr (sizeof...(Shape) == rank && rank != rank_dynamic)
        check_compile_time_extents(label, extents);
      detail::CheckedSize stride(1);  // a LayoutStride View given only extents is laid out in C order
      for (std::size_t i = rank; i-- > 0;) {
        strides[i] = stride.value();
        stride *= extents[i];
      }
      if (!stride.fits()) throw_shape_overflow(label, extents);
    }
    return detail::make_mapping<mapping_type>(extents, strides);
  }

  static void check_compile_time_extents(const std::string& label,
                                         const std::array<std::size_t, rank>& extents) {
    for (std::size_t i = rank_dynamic; i < rank; ++i) {
      if (extents[i] != extents_type::static_extent(i)) {
        throw std::invalid_argument(detail::view_name(label) + ": extent " + std::to_string(i) + " is " +
                                    std::to_string(extents[i]) + ", but the data type fixes it at " +
                                    std::to_string(extents_type::static_extent(i)));
      }
    }
  }

  // Bytes of the span. Throws AllocationError, before anything is
  // allocated, when they or the number of elements (size()) do not fit in
  // size_t: every size a View computes from its shape is then exact.
  std::size_t allocation_bytes(const std::string& label) const {
    const std::array<std::size_t, rank> extents = map_.extents().to_array();
    if (std::find(extents.begin(), extents.end(), std::size_t{0}) != extents.end()) return 0;
    detail::CheckedSize elements(1);
    for (std::size_t extent : extents) elements *= extent;
    detail::CheckedSize span = elements;
    if constexpr (std::is_same_v<Layout, LayoutStride>) {
      span = detail::CheckedSize(1);  // one past the last element reached
      for (std::size_t i = 0; i < rank; ++i) span += detail::CheckedSize(extents[i] - 1) * map_.stride(i);
    }
    const detail::CheckedSize bytes = span * sizeof(value_type);
    if (!elements.fits() || !bytes.fits()) {
      if constexpr (std::is_same_v<Layout, LayoutStride>) {
        throw_shape_overflow(label, extents,
                             " with strides " + detail::format_index_list(detail::strides_of(map_)));
      } else {
        throw_shape_overflow(label, extents);
      }
    }
    return bytes.value();
  }

  [[noreturn]] static void throw_shape_overflow(const std::string& label,
                                                const std::array<std::size_t, rank>& extents,
                                                const std::string& strides = "") {
    const std::string message =
        detail::view_name(label) + ": extents " + detail::format_size_product(extents) + strides;
    detail::throw_size_overflow(message + " of " + std::to_string(sizeof(value_type)) +
                                "-byte elements overflow std::size_t");
  }

  // Value-initialises a fresh allocation of `bytes`.
  void initialise(std::size_t bytes) {
    if (bytes == 0) return;
    auto* elements = const_cast<non_const_value_type*>(data_);
    if constexpr (Space::host_accessible) {
      std::uninitialized_value_construct_n(elements, span());
    } else {
      detail::zero_fill_through_host(space_, elements, bytes);
    }
  }

  template <class... Indices>
  WEFT_HOST_DEVICE void check_access(Indices... indices) const {
#if defined(__CUDA_ARCH__)
    if (!in_bounds(std::make_index_sequence<rank>{}, indices...)) __trap();
#else
    if constexpr (!Space::host_accessible) fail_inaccessible();
    if (!in_bounds(std::make_index_sequence<rank>{}, indices...)) [[unlikely]] {
      fail_out_of_bounds(indices...);
    }
#endif
  }

  template <std::size_t... K, class... Indices>
  WEFT_HOST_DEVICE bool in_bounds(std::index_sequence<K...>, Indices... indices) const noexcept {
    return (index_in_extent(indices, map_.extents().template extent<K>()) && ...);
  }

  template <class Index>
  WEFT_HOST_DEVICE static constexpr bool index_in_extent(Index index, std::size_t extent) noexcept {
    if constexpr (std::is_signed_v<Index>) {
      if (index < 0) return false;
    }
    return static_cast<std::size_t>(index) < extent;
  }

  template <class... Indices>
  [[noreturn]] void fail_out_of_bounds(Indices... indices) const {
    throw std::out_of_range(detail::view_name(label()) + " index " +
                            detail::format_index_list(detail::index_array(indices...)) + " out of bounds " +
                            detail::format_index_list(map_.extents().to_array()));
  }

  [[noreturn]] void fail_inaccessible() const {
    throw std::logic_error(detail::view_name(label()) + " lives in " + Space::name() +
                           ", which the host cannot access: read it through a host mirror "
                           "(create_mirror_view, then deep_copy)");
  }

  pointer_type data_ = nullptr;
  detail::ViewRecord* record_ = nullptr;
  [[no_unique_address]] mapping_type map_{};
  [[no_unique_address]] Space space_{};
};

namespace detail {

// The views layer's own access to a View's insides (subview, deep_copy, mirrors).
struct ViewAccess {
  template <class V>
  static const typename V::mapping_type& mapping(const V& view) noexcept {
    return view.map_;
  }

  template <class V>
  static ViewRecord* record(const V& view) noexcept {
    return view.record_;
  }

  // A View of `data` with mapping `map` that shares `source`'s allocation.
  template <class Result, class Source>
  static Result share(const Source& source, typename Result::pointer_type data,
                      const typename Result::mapping_type& map) {
    return Result(typename Result::SharedTag{}, data, map, source.record_, source.space_);
  }
};

}  // namespace detail

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// View: shapes, layouts, shared ownership, subviews, deep_copy, mirrors,
// unmanaged Views, bounds checks and Views over pools and arenas.
#include <weft/views/deep_copy.hpp>
#include <weft/views/layout.hpp>
#include <weft/views/mirror.hpp>
#include <weft/views/subview.hpp>
#include <weft/views/view.hpp>

#include <weft/backends/cuda_devices.hpp>
#include <weft/backends/memory_space.hpp>
#include <weft/memory/linear_arena.hpp>
#include <weft/memory/memory_pool.hpp>
#include <weft/memory/multiarch_allocator.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "../test_support.hpp"

namespace {

// Host memory that counts what is live, to see when the last View frees.
struct CountingSpace {
  static constexpr bool host_accessible = true;
  static constexpr std::size_t alignment = weft::HostSpace::alignment;
  static constexpr const char* name() noexcept { return "CountingSpace"; }

  static inline int live_allocations = 0;
  static inline std::size_t live_bytes = 0;

  void* allocate(std::size_t bytes) const {
    ++live_allocations;
    live_bytes += bytes;
    return weft::HostSpace{}.allocate(bytes);
  }
  void deallocate(void* ptr, std::size_t bytes) const noexcept {
    --live_allocations;
    live_bytes -= bytes;
    weft::HostSpace{}.deallocate(ptr, bytes);
  }
  void copy_from_host(void* dst, const void* src, std::size_t bytes) const { std::memcpy(dst, src, bytes); }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) const { std::memcpy(dst, src, bytes); }
};

// A space the host may not touch directly (like CudaSpace), backed by host
// memory so that the staging paths of deep_copy and mirrors run on any machine.
struct StagedSpace {
  static constexpr bool host_accessible = false;
  static constexpr std::size_t alignment = 256;
  static constexpr const char* name() noexcept { return "StagedSpace"; }

  static inline int copies_in = 0;   // copy_from_host calls
  static inline int copies_out = 0;  // copy_to_host calls

  void* allocate(std::size_t bytes) const { return weft::HostSpace{}.allocate(bytes); }
  void deallocate(void* ptr, std::size_t bytes) const noexcept { weft::HostSpace{}.deallocate(ptr, bytes); }
  void copy_from_host(void* dst, const void* src, std::size_t bytes) const {
    ++copies_in;
    std::memcpy(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) const {
    ++copies_out;
    std::memcpy(dst, src, bytes);
  }
};

static_assert(weft::MemorySpace<CountingSpace> && weft::MemorySpace<StagedSpace>);

template <class F>
std::string out_of_range_message(F&& f) {
  return weft::test::thrown_message<std::out_of_range>(f);
}

template <class F>
std::string allocation_error_message(F&& f) {
  return weft::test::thrown_message<weft::AllocationError>(f);
}

// Element offset of a(i...) from a's first element.
template <class V, class... I>
std::ptrdiff_t offset_of(const V& a, I... i) {
  return &a(i...) - a.data();
}

}  // namespace

// ---- shapes and layouts -----------------------------------------------------

TEST_CASE("View.extents_runtime_then_compile_time") {
  weft::View<double** [3]> a("a", 4, 5);
  static_assert(decltype(a)::rank == 3 && decltype(a)::rank_dynamic == 2);
  static_assert(std::is_same_v<decltype(a)::value_type, double>);
  static_assert(std::is_same_v<decltype(a)::array_layout, weft::LayoutRight>);
  static_assert(std::is_same_v<decltype(a)::memory_space, weft::HostSpace>);
  CHECK(a.extent(0) == 4);
  CHECK(a.extent(1) == 5);
  CHECK(a.extent(2) == 3);
  CHECK(a.extent(3) == 1);  // beyond the rank, as in Kokkos
  CHECK(a.size() == 60);
  CHECK(a.span() == 60);
  CHECK(a.label() == "a");
  CHECK(a.is_allocated());
  CHECK(a.use_count() == 1);

  // Compile-time extents may be repeated if they agree; a wrong one is refused.
  weft::View<double** [3]> b("b", 4, 5, 3);
  CHECK(b.size() == 60);
  CHECK(weft::test::invalid_argument_message([] { weft::View<double** [3]>("c", 4, 5, 2); }) ==
        "View 'c': extent 2 is 2, but the data type fixes it at 3");
  CHECK(weft::test::invalid_argument_message([] { weft::View<double**>("d", 4, -1); }) ==
        "View 'd': extents (4, -1) must not be negative");

  // The wrong number of extents does not compile.
  static_assert(!std::is_constructible_v<weft::View<double** [3]>, std::string, int>);
  static_assert(!std::is_constructible_v<weft::View<double** [3]>, std::string, int, int, int, int>);
  static_assert(std::is_constructible_v<weft::View<double** [3]>, std::string, int, int>);
}

TEST_CASE("View.compile_time_only_rank1_rank0_and_rank8") {
  weft::View<float[5]> f("f");
  static_assert(decltype(f)::rank == 1 && decltype(f)::rank_dynamic == 0);
  CHECK(f.extent(0) == 5);
  CHECK(f.stride(0) == 1);

  weft::View<int*> line("line", 7);
  CHECK(line.size() == 7);
  line(6) = 42;
  CHECK(line.data()[6] == 42);

  weft::View<double> scalar("scalar");
  static_assert(decltype(scalar)::rank == 0);
  CHECK(scalar.size() == 1);
  CHECK(scalar() == 0.0);
  scalar() = 2.5;
  CHECK(*scalar.data() == 2.5);

  weft::View<std::int16_t*** [2][3][2][2][2]> deep("deep", 2, 3, 4);
  static_assert(decltype(deep)::rank == 8 && decltype(deep)::rank_dynamic == 3);
  const std::size_t extents[8] = {2, 3, 4, 2, 3, 2, 2, 2};
  std::size_t stride = 1;
  for (std::size_t i = 8; i-- > 0;) {
    CAPTURE(i);
    CHECK(deep.extent(i) == extents[i]);
    CHECK(deep.stride(i) == stride);
    stride *= extents[i];
  }
  CHECK(deep.size() == stride);
  deep(1, 2, 3, 1, 2, 1, 1, 1) = 9;
  CHECK(offset_of(deep, 1, 2, 3, 1, 2, 1, 1, 1) == static_cast<std::ptrdiff_t>(deep.span() - 1));
  CHECK(deep.data()[deep.span() - 1] == 9);
}

TEST_CASE("View.managed_host_views_are_value_initialised") {
  weft::View<double**> a("a", 16, 16);
  for (std::size_t i = 0; i < a.span(); ++i) REQUIRE(a.data()[i] == 0.0);
  struct Particle {
    double mass = 1.0;
    int id = -1;
  };
  weft::View<Particle*> particles("particles", 3);
  CHECK(particles(2).mass == 1.0);
  CHECK(particles(2).id == -1);
}

TEST_CASE("View.layout_right_and_left_address_order") {
  weft::View<double** [3], weft::LayoutRight> c("c", 4, 5);
  CHECK(c.stride(0) == 15);
  CHECK(c.stride(1) == 3);
  CHECK(c.stride(2) == 1);
  CHECK(offset_of(c, 0, 0, 1) == 1);  // last index fastest
  CHECK(offset_of(c, 0, 1, 0) == 3);
  CHECK(offset_of(c, 1, 0, 0) == 15);
  CHECK(offset_of(c, 3, 4, 2) == 59);

  weft::View<double** [3], weft::LayoutLeft> f("f", 4, 5);
  CHECK(f.stride(0) == 1);
  CHECK(f.stride(1) == 4);
  CHECK(f.stride(2) == 20);
  CHECK(offset_of(f, 1, 0, 0) == 1);  // first index fastest
  CHECK(offset_of(f, 0, 1, 0) == 4);
  CHECK(offset_of(f, 0, 0, 1) == 20);
  CHECK(offset_of(f, 3, 4, 2) == 59);

  // Same indices, same values, whatever the layout.
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 5; ++j) {
      for (int k = 0; k < 3; ++k) f(i, j, k) = c(i, j, k) = 100 * i + 10 * j + k;
    }
  }
  CHECK(f.data()[1] == 100);  // f(1, 0, 0)
  CHECK(c.data()[1] == 1);    // c(0, 0, 1)
}

TEST_CASE("View.layout_stride_explicit_strides") {
  // A 4 x 3 matrix stored with a leading dimension of 8 (padded rows).
  weft::View<double**, weft::LayoutStride> s("s", weft::LayoutStride(4, 8, 3, 1));
  CHECK(s.extent(0) == 4);
  CHECK(s.extent(1) == 3);
  CHECK(s.stride(0) == 8);
  CHECK(s.stride(1) == 1);
  CHECK(s.size() == 12);
  CHECK(s.span() == 27);  // 3 * 8 + 2 + 1
  CHECK_FALSE(s.span_is_contiguous());
  CHECK(offset_of(s, 2, 1) == 17);

  // Given only extents, a LayoutStride View is laid out in C order.
  weft::View<double**, weft::LayoutStride> c("c", 2, 3);
  CHECK(c.stride(0) == 3);
  CHECK(c.stride(1) == 1);

  // Compile-time extents still have to agree with the layout object.
  CHECK(weft::test::invalid_argument_message([] {
          weft::View<double* [3], weft::LayoutStride>("t", weft::LayoutStride(2, 1, 4, 2));
        }) == "View 't': extent 1 is 4, but the data type fixes it at 3");
  CHECK(weft::test::invalid_argument_message([] { (void)weft::LayoutStride(2, -1); }) ==
        "LayoutStride: extents and strides must be >= 0");
  CHECK(weft::test::invalid_argument_message([] {
          weft::View<double**, weft::LayoutStride>("r", weft::LayoutStride(4, 1));
        }) == "View 'r': the LayoutStride has 1 (extent, stride) pairs, the View has rank 2");
}

TEST_CASE("View.is_small") {
  // A data pointer, a record pointer and the runtime extents; compile-time extents and an empty space cost
  // nothing.
  CHECK(sizeof(weft::View<double** [3]>) == 2 * sizeof(void*) + 2 * sizeof(std::size_t));
  CHECK(sizeof(weft::View<double[3][4]>) == 2 * sizeof(void*));
  CHECK(sizeof(weft::View<double**, weft::LayoutStride>) == 2 * sizeof(void*) + 4 * sizeof(std::size_t));
}

// ---- ownership ----------------------------------------------------------------

TEST_CASE("View.default_constructed_is_empty") {
  weft::View<double* [3]> empty;
  CHECK(empty.data() == nullptr);
  CHECK_FALSE(empty.is_allocated());
  CHECK(empty.use_count() == 0);
  CHECK(empty.label().empty());
  CHECK(empty.extent(0) == 0);
  CHECK(empty.extent(1) == 3);
  CHECK(empty.size() == 0);

  // Zero elements: a labelled, counted View with no memory behind it.
  weft::View<double*> none("none", 0);
  CHECK_FALSE(none.is_allocated());
  CHECK(none.label() == "none");
  CHECK(none.use_count() == 1);

  // Constructors that allocate or wrap are explicit: no View from a bare pointer or label by accident.
  static_assert(!std::is_convertible_v<double*, weft::View<double>>);
  static_assert(!std::is_convertible_v<std::string, weft::View<double[3]>>);
}

TEST_CASE("View.copies_share_and_the_last_frees") {
  REQUIRE(CountingSpace::live_allocations == 0);
  {
    weft::View<double*, weft::LayoutRight, CountingSpace> a("a", 100);
    CHECK(CountingSpace::live_allocations == 1);
    CHECK(CountingSpace::live_bytes == 800);
    CHECK(a.use_count() == 1);
    {
      auto b = a;  // shallow
      CHECK(a.use_count() == 2);
      CHECK(b.data() == a.data());
      b(3) = 1.5;
      CHECK(a(3) == 1.5);
      weft::View<double*, weft::LayoutRight, CountingSpace> c;
      c = b;
      CHECK(a.use_count() == 3);
    }
    CHECK(a.use_count() == 1);
    CHECK(CountingSpace::live_allocations == 1);

    weft::View<double*, weft::LayoutRight, CountingSpace> survivor = a;
    a = weft::View<double*, weft::LayoutRight, CountingSpace>("replacement", 10);  // a lets go of the first
    CHECK(CountingSpace::live_allocations == 2);
    CHECK(survivor.use_count() == 1);
    CHECK(survivor(3) == 1.5);
    survivor = {};  // the last reference to "a": freed now
    CHECK(CountingSpace::live_allocations == 1);
    CHECK(CountingSpace::live_bytes == 80);
  }
  CHECK(CountingSpace::live_allocations == 0);
  CHECK(CountingSpace::live_bytes == 0);
}

TEST_CASE("View.move_transfers_the_reference") {
  weft::View<int*> a("a", 4);
  int* const data = a.data();
  weft::View<int*> b = std::move(a);
  CHECK(b.data() == data);
  CHECK(b.use_count() == 1);
  CHECK(a.data() == nullptr);  // NOLINT: moved-from Views are empty
  CHECK(a.use_count() == 0);
  a = std::move(b);
  CHECK(a.use_count() == 1);
  CHECK(a.label() == "a");
}

TEST_CASE("View.copies_from_many_threads_keep_the_count") {
  weft::View<long*> shared("shared", 64);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([shared, t] {
      for (int n = 0; n < 2000; ++n) {
        weft::View<long*> copy = shared;
        weft::View<const long*> reader = copy;
        (void)reader(t);
      }
      shared(t) = t + 1;  // a distinct element per thread
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(shared.use_count() == 1);
  CHECK(shared(0) == 1);
  CHECK(shared(3) == 4);
}

TEST_CASE("View.const_views") {
  weft::View<double**> a("a", 2, 3);
  a(1, 2) = 4.0;
  weft::View<const double**> c = a;
  static_assert(std::is_same_v<decltype(c(0, 0)), const double&>);
  CHECK(c(1, 2) == 4.0);
  CHECK(c.data() == a.data());
  CHECK(a.use_count() == 2);
  // const -> non-const is refused at compile time, like const double* -> double*.
  static_assert(std::is_convertible_v<weft::View<double**>, weft::View<const double**>>);
  static_assert(!std::is_convertible_v<weft::View<const double**>, weft::View<double**>>);
  static_assert(!std::is_constructible_v<weft::View<double**>, weft::View<const double**>>);

  // The data type may mix const with compile-time extents.
  weft::View<int* [4][2]> grid("grid", 3);
  grid(2, 3, 1) = 7;
  weft::View<const int* [4][2]> frozen = grid;
  CHECK(frozen(2, 3, 1) == 7);
}

TEST_CASE("View.compatible_conversions") {
  weft::View<double* [3]> a("a", 2);
  // A compile-time extent may become a runtime one, and any layout a LayoutStride.
  weft::View<double**> dynamic = a;
  CHECK(dynamic.extent(1) == 3);
  weft::View<double**, weft::LayoutStride> strided = a;
  CHECK(strided.stride(0) == 3);
  CHECK(strided.stride(1) == 1);
  CHECK(&strided(1, 2) == &a(1, 2));
  CHECK(a.use_count() == 3);
  // Not the other way, and not between Left and Right at rank 2 or across spaces.
  static_assert(!std::is_constructible_v<weft::View<double* [3]>, weft::View<double**>>);
  static_assert(!std::is_constructible_v<weft::View<double**, weft::LayoutLeft>, weft::View<double**>>);
  static_assert(!std::is_constructible_v<weft::View<double**>, weft::View<double**, weft::LayoutStride>>);
  static_assert(
      !std::is_constructible_v<weft::View<double*, weft::LayoutRight, weft::CudaSpace>, weft::View<double*>>);
  // At rank 1 Left and Right are the same thing.
  weft::View<double*, weft::LayoutLeft> line = weft::View<double*>("line", 5);
  CHECK(line.size() == 5);
}

// ---- unmanaged ----------------------------------------------------------------

TEST_CASE("View.unmanaged_over_user_memory") {
  std::vector<double> buffer(12, 0.0);
  {
    weft::View<double**, weft::LayoutRight, weft::HostSpace> u(buffer.data(), 3, 4);
    CHECK(u.data() == buffer.data());
    CHECK(u.use_count() == 0);
    CHECK(u.label().empty());
    u(2, 1) = 5.0;
    auto copy = u;
    CHECK(copy.use_count() == 0);
    weft::View<double**, weft::LayoutLeft> f(buffer.data(), 3, 4);
    f(2, 1) = 6.0;  // Fortran order: element 2 + 1 * 3
  }
  CHECK(buffer[2 * 4 + 1] == 5.0);
  CHECK(buffer[2 + 1 * 3] == 6.0);
  buffer[0] = 1.0;  // still ours: no View freed it (ASan would object)

  // A label makes error messages readable; it is still unmanaged.
  weft::View<double**> labelled("u", buffer.data(), 3, 4);
  CHECK(labelled.label() == "u");
  CHECK(labelled.use_count() == 0);
  CHECK(labelled(0, 0) == 1.0);
}

TEST_CASE("View.shapes_whose_sizes_overflow_are_refused") {
  // Extents whose element count or bytes do not fit in size_t are refused
  // before anything is allocated, whatever the memory: a space, a pool, an
  // arena, or the caller's own (an unmanaged View's size() must be exact too).
  constexpr std::size_t huge = std::size_t{1} << 61;
  CHECK(allocation_error_message([&] { weft::View<double**> v("big", huge, 8); }) ==
        "View 'big': extents 2305843009213693952 x 8 of 8-byte elements overflow std::size_t");
  CHECK(allocation_error_message([&] { weft::View<double* [8]> v("fixed", huge); }) ==
        "View 'fixed': extents 2305843009213693952 x 8 of 8-byte elements overflow std::size_t");
  weft::MemoryPool<weft::HostSpace> pool(weft::HostSpace{}, 1 << 16);
  CHECK(allocation_error_message([&] { weft::View<double**> v("pooled", pool, huge, 8); }) ==
        "View 'pooled': extents 2305843009213693952 x 8 of 8-byte elements overflow std::size_t");
  CHECK(pool.get_usage_statistics().consumed_blocks == 0);
  std::vector<std::byte> memory(1024);
  weft::LinearArena arena("scratch", memory.data(), memory.size(), false);
  CHECK_THROWS_AS((weft::View<double**>("arena", arena, huge, 8)), weft::AllocationError);
  CHECK(arena.used() == 0);

  double element = 0.0;
  CHECK(allocation_error_message([&] { weft::View<double**> v("mine", &element, huge, 8); }) ==
        "View 'mine': extents 2305843009213693952 x 8 of 8-byte elements overflow std::size_t");
  CHECK_THROWS_AS((weft::View<double**>(&element, huge, 8)), weft::AllocationError);

  // Zero strides may alias every element onto one, but size() still counts them all.
  CHECK(allocation_error_message([] {
          weft::View<double**, weft::LayoutStride> v(
              "aliased", weft::LayoutStride(std::size_t{1} << 40, 0, std::size_t{1} << 40, 0));
        }) ==
        "View 'aliased': extents 1099511627776 x 1099511627776 with strides (0, 0) of 8-byte elements "
        "overflow std::size_t");
  CHECK(allocation_error_message([] {
          weft::View<double**, weft::LayoutStride> v("c_order", std::size_t{1} << 40, std::size_t{1} << 40);
        }) ==
        "View 'c_order': extents 1099511627776 x 1099511627776 of 8-byte elements overflow std::size_t");

  // What fits in size_t but not in memory is the space's refusal, also an AllocationError.
  CHECK_THROWS_AS((weft::View<std::uint16_t*>("too_big", std::numeric_limits<std::size_t>::max() / 2)),
                  weft::AllocationError);
  // A View with no elements needs no memory, however large its other extents.
  weft::View<double**> empty("empty", 0, huge);
  CHECK(empty.size() == 0);
}

// ---- bounds checks ------------------------------------------------------------

TEST_CASE("View.out_of_bounds_message") {
  if (!weft::view_bounds_checking) {
    MESSAGE("bounds checks are off in this build (NDEBUG without WEFT_VIEW_BOUNDS_CHECK)");
    return;
  }
  weft::View<double**> u("u", 4, 8);
  CHECK(out_of_range_message([&] { (void)u(5, 3); }) == "View 'u' index (5, 3) out of bounds (4, 8)");
  CHECK(out_of_range_message([&] { (void)u(0, -1); }) == "View 'u' index (0, -1) out of bounds (4, 8)");
  CHECK(out_of_range_message([&] { (void)u(3, 7); }).empty());
  weft::View<int* [3]> fixed("fixed", 2);
  CHECK(out_of_range_message([&] { (void)fixed(1, 3u); }) ==
        "View 'fixed' index (1, 3) out of bounds (2, 3)");

  std::vector<double> memory(32);
  weft::View<double**> wrapped("w", memory.data(), 4, 8);
  CHECK(out_of_range_message([&] { (void)wrapped(4, 0); }) == "View 'w' index (4, 0) out of bounds (4, 8)");
}

TEST_CASE("View.host_cannot_touch_device_space") {
  if (!weft::view_bounds_checking) return;
  std::vector<double> memory(4);
  weft::View<double*, weft::LayoutRight, weft::CudaSpace> device("d", memory.data(), 4);
  std::string message;
  try {
    (void)device(0);
  } catch (const std::logic_error& e) {
    message = e.what();
  }
  CHECK(message.find("View 'd' lives in CudaSpace, which the host cannot access") == 0);
}

// ---- subviews -----------------------------------------------------------------

TEST_CASE("View.subview_index_range_pair_all") {
  weft::View<int***> a("a", 4, 5, 6);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 5; ++j) {
      for (int k = 0; k < 6; ++k) a(i, j, k) = 100 * i + 10 * j + k;
    }
  }

  // An index drops its dimension; C order survives: still LayoutRight.
  auto plane = weft::subview(a, 2, weft::ALL, weft::ALL);
  static_assert(std::is_same_v<decltype(plane), weft::View<int**, weft::LayoutRight>>);
  CHECK(plane.extent(0) == 5);
  CHECK(plane.extent(1) == 6);
  CHECK(plane(3, 4) == 234);
  CHECK(plane.label() == "a");
  CHECK(a.use_count() == 2);

  // A range renumbers from 0.
  auto rows = weft::subview(a, weft::Range{1, 3}, weft::ALL, weft::ALL);
  static_assert(std::is_same_v<decltype(rows)::array_layout, weft::LayoutRight>);
  CHECK(rows.extent(0) == 2);
  CHECK(rows(0, 0, 0) == 100);
  CHECK(rows(1, 4, 5) == 245);

  // A dimension kept after a dropped or partial one leaves holes: LayoutStride.
  auto block = weft::subview(a, weft::ALL, std::pair{1, 4}, 5);
  static_assert(std::is_same_v<decltype(block), weft::View<int**, weft::LayoutStride>>);
  CHECK(block.extent(0) == 4);
  CHECK(block.extent(1) == 3);
  CHECK(block.stride(0) == 30);
  CHECK(block.stride(1) == 6);
  CHECK(block(3, 2) == 335);

  // All indices: a rank-0 View of one element.
  auto one = weft::subview(a, 3, 4, 5);
  static_assert(decltype(one)::rank == 0);
  CHECK(one() == 345);

  // Writing through a subview writes the source.
  block(0, 0) = -1;
  CHECK(a(0, 1, 5) == -1);
  plane(0, 0) = -2;
  CHECK(a(2, 0, 0) == -2);
}

TEST_CASE("View.subview_of_layout_left_and_const") {
  weft::View<double**, weft::LayoutLeft> f("f", 4, 3);
  auto column = weft::subview(f, weft::ALL, 1);  // contiguous in Fortran order
  static_assert(std::is_same_v<decltype(column)::array_layout, weft::LayoutLeft>);
  CHECK(&column(2) == &f(2, 1));
  auto row = weft::subview(f, 2, weft::ALL);  // stride 4
  static_assert(std::is_same_v<decltype(row)::array_layout, weft::LayoutStride>);
  CHECK(row.stride(0) == 4);

  weft::View<const double**, weft::LayoutLeft> reader = f;
  auto const_column = weft::subview(reader, weft::ALL, 0);
  static_assert(std::is_same_v<decltype(const_column)::value_type, const double>);
}

TEST_CASE("View.nested_subviews_share_ownership") {
  REQUIRE(CountingSpace::live_allocations == 0);
  weft::View<int**, weft::LayoutStride, CountingSpace> inner;
  {
    weft::View<int***, weft::LayoutRight, CountingSpace> a("a", 3, 4, 5);
    a(2, 3, 4) = 7;
    auto slab = weft::subview(a, weft::Range{1, 3}, weft::ALL, weft::Range{2, 5});  // 2 x 4 x 3, strided
    inner = weft::subview(slab, 1, weft::ALL, weft::ALL);                           // a(2, :, 2:5)
    CHECK(a.use_count() == 3);
  }
  // The source is gone; the nested subview keeps the allocation.
  CHECK(CountingSpace::live_allocations == 1);
  CHECK(inner.use_count() == 1);
  CHECK(inner.extent(0) == 4);
  CHECK(inner.extent(1) == 3);
  CHECK(inner(3, 2) == 7);
  inner = {};
  CHECK(CountingSpace::live_allocations == 0);
}

TEST_CASE("View.subview_argument_errors") {
  weft::View<double**> a("a", 4, 3);
  CHECK(out_of_range_message([&] { (void)weft::subview(a, 4, weft::ALL); }) ==
        "subview of View 'a': dimension 0 index 4 is out of bounds (extent 4)");
  CHECK(out_of_range_message([&] {
          (void)weft::subview(a, weft::ALL, weft::Range{1, 4});
        }) == "subview of View 'a': dimension 1 range [1, 4) is out of bounds (extent 3)");
  CHECK(out_of_range_message([&] {
          (void)weft::subview(a, std::pair{-1, 2}, 0);
        }) == "subview of View 'a': dimension 0 range [-1, 2) is out of bounds (extent 4)");
  CHECK(weft::test::invalid_argument_message([&] {
          (void)weft::subview(a, weft::Range{3, 1}, 0);
        }) == "subview of View 'a': dimension 0 range [3, 1) has begin > end");
  // Empty ranges are fine and give empty Views.
  auto none = weft::subview(a, weft::Range{4, 4}, 2);
  CHECK(none.size() == 0);
}

// ---- deep_copy ----------------------------------------------------------------

TEST_CASE("View.deep_copy_across_layouts") {
  weft::View<double**, weft::LayoutLeft> left("left", 4, 3);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) left(i, j) = 10.0 * i + j;
  }
  weft::View<double**> right("right", 4, 3);
  weft::deep_copy(right, left);
  CHECK(right(3, 2) == 32.0);
  CHECK(right.data()[1] == 1.0);  // right(0, 1): C order in memory
  CHECK(left.data()[1] == 10.0);  // left(1, 0): Fortran order

  // Into every other row of a 8 x 3 array: a LayoutStride destination.
  weft::View<double**> tall("tall", 8, 3);
  auto even_rows = weft::subview(weft::View<double***>(tall.data(), 4, 2, 3), weft::ALL, 0, weft::ALL);
  static_assert(std::is_same_v<decltype(even_rows)::array_layout, weft::LayoutStride>);
  weft::deep_copy(even_rows, right);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) {
      CHECK(tall(2 * i, j) == 10.0 * i + j);
      CHECK(tall(2 * i + 1, j) == 0.0);  // the rows between are untouched
    }
  }

  // And back from strided to Left.
  weft::View<double**, weft::LayoutLeft> back("back", 4, 3);
  weft::deep_copy(back, even_rows);
  CHECK(back(2, 1) == 21.0);

  // Views of const data are valid sources.
  weft::View<const double**> source = right;
  weft::View<double**> copy("copy", 4, 3);
  weft::deep_copy(copy, source);
  CHECK(copy(1, 1) == 11.0);
}

TEST_CASE("View.deep_copy_fills_with_a_value") {
  weft::View<int**, weft::LayoutLeft> a("a", 5, 4);
  weft::deep_copy(a, 3);
  CHECK(a(0, 0) == 3);
  CHECK(a(4, 3) == 3);
  auto middle = weft::subview(a, weft::Range{1, 4}, 2);  // 3 elements of column 2
  weft::deep_copy(middle, -1);
  CHECK(a(0, 2) == 3);
  CHECK(a(1, 2) == -1);
  CHECK(a(3, 2) == -1);
  CHECK(a(4, 2) == 3);
  auto row = weft::subview(a, 0, weft::ALL);  // strided
  weft::deep_copy(row, 8);
  CHECK(a(0, 3) == 8);
  CHECK(a(1, 3) == 3);
}

TEST_CASE("View.deep_copy_extents_mismatch") {
  weft::View<double**> a("a", 4, 3);
  weft::View<double**> b("b", 3, 4);
  deep_copy(b, 5.0);
  CHECK(weft::test::invalid_argument_message([&] { weft::deep_copy(a, b); }) ==
        "deep_copy: View 'a' extents (4, 3) differ from View 'b' extents (3, 4)");
  CHECK(a(0, 0) == 0.0);  // nothing copied
}

// ---- mirrors and spaces the host cannot reach ------------------------------------

TEST_CASE("View.mirror_view_of_host_view_is_the_view") {
  weft::View<double**, weft::LayoutLeft> a("a", 4, 3);
  auto mirror = weft::create_mirror_view(a);
  static_assert(std::is_same_v<decltype(mirror), decltype(a)>);
  CHECK(mirror.data() == a.data());
  CHECK(a.use_count() == 2);
  weft::deep_copy(mirror, a);  // a copy onto itself: nothing to do

  auto copy = weft::create_mirror(a);  // always new memory
  static_assert(std::is_same_v<decltype(copy), weft::View<double**, weft::LayoutLeft, weft::HostSpace>>);
  CHECK(copy.data() != a.data());
  CHECK(copy.label() == "a_mirror");
  CHECK(copy.extent(0) == 4);
  CHECK(copy.stride(1) == 4);
  CHECK(a.use_count() == 2);
}

TEST_CASE("View.device_space_views_stage_through_host") {
  StagedSpace::copies_in = 0;
  StagedSpace::copies_out = 0;
  weft::View<double**, weft::LayoutLeft, StagedSpace> device("device", 4, 3);
  CHECK(StagedSpace::copies_in >= 1);  // zero-filled from the host

  auto host = weft::create_mirror_view(device);
  static_assert(std::is_same_v<decltype(host), weft::View<double**, weft::LayoutLeft, weft::HostSpace>>);
  CHECK(host.label() == "device_mirror");
  CHECK(static_cast<void*>(host.data()) != static_cast<void*>(device.data()));
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) host(i, j) = 10.0 * i + j;
  }

  // Same layout, both contiguous: one copy each way.
  StagedSpace::copies_in = 0;
  weft::deep_copy(device, host);
  CHECK(StagedSpace::copies_in == 1);
  weft::View<double**, weft::LayoutLeft> back("back", 4, 3);
  StagedSpace::copies_out = 0;
  weft::deep_copy(back, device);
  CHECK(StagedSpace::copies_out == 1);
  CHECK(back(3, 2) == 32.0);

  // Another layout: staged and permuted on the host.
  weft::View<double**> right("right", 4, 3);
  weft::deep_copy(right, device);
  CHECK(right(2, 1) == 21.0);

  // A strided device destination keeps the elements between its strides.
  weft::View<double**, weft::LayoutRight, StagedSpace> wide("wide", 4, 6);
  weft::deep_copy(wide, 7.0);
  auto left_half = weft::subview(wide, weft::ALL, weft::Range{0, 3});
  weft::deep_copy(left_half, right);
  auto wide_host = weft::create_mirror_view(wide);
  weft::deep_copy(wide_host, wide);
  CHECK(wide_host(2, 1) == 21.0);
  CHECK(wide_host(2, 3) == 7.0);
  CHECK(wide_host(3, 5) == 7.0);

  // Device to device goes through the host too.
  weft::View<double**, weft::LayoutLeft, StagedSpace> twin("twin", 4, 3);
  weft::deep_copy(twin, device);
  weft::deep_copy(back, 0.0);
  weft::deep_copy(back, twin);
  CHECK(back(1, 2) == 12.0);
}

TEST_CASE("View.cuda_space") {
  const weft::CudaDiscovery found = weft::discover_cuda_devices();
  if (found.devices.empty()) {
    MESSAGE("no GPU (" << found.note << "): a CudaSpace View must refuse to allocate, naming itself");
    const std::string message =
        allocation_error_message([] { weft::View<double*, weft::LayoutRight, weft::CudaSpace> d("d", 10); });
    CHECK(message.find("View 'd': CudaSpace: cannot allocate 80 bytes on device 0") == 0);
    return;
  }
  weft::View<double**, weft::LayoutRight, weft::CudaSpace> d("d", 64, 3);
  auto h = weft::create_mirror_view(d);
  CHECK(h(63, 2) == 0.0);  // zero-filled on the device
  for (int i = 0; i < 64; ++i) h(i, i % 3) = i;
  weft::deep_copy(d, h);
  weft::View<double**, weft::LayoutLeft> back("back", 64, 3);
  weft::deep_copy(back, d);
  CHECK(back(63, 0) == 63.0);
  CHECK(back(62, 1) == 0.0);
}

// ---- other allocation sources ---------------------------------------------------

TEST_CASE("View.from_a_memory_pool") {
  weft::MemoryPool<weft::HostSpace> pool(weft::HostSpace{}, 1 << 16, 64, 4096);
  {
    weft::View<double*> p("p", pool, 100);  // 800 bytes: a 1024-byte block
    CHECK(pool.owns(p.data()));
    CHECK(p(99) == 0.0);
    CHECK(pool.get_usage_statistics().consumed_blocks == 1);
    CHECK(pool.get_usage_statistics().consumed_bytes == 1024);
    auto copy = p;
    CHECK(p.use_count() == 2);
  }
  CHECK(pool.get_usage_statistics().consumed_blocks == 0);  // the last View gave the block back

  CHECK(allocation_error_message([&] { weft::View<double*> big("big", pool, 1000); }) ==
        "View 'big': MemoryPool<HostSpace> cannot provide 8000 bytes (largest block 4096 bytes, 0 of 65536 "
        "bytes in use)");

  std::vector<weft::View<double*>> held;
  std::string exhausted;
  for (int n = 0; n < 17 && exhausted.empty(); ++n) {
    exhausted = allocation_error_message([&] { held.emplace_back("chunk", pool, 512); });  // 4096 bytes each
  }
  CHECK(held.size() == 16);
  CHECK(exhausted ==
        "View 'chunk': MemoryPool<HostSpace> cannot provide 4096 bytes (largest block 4096 bytes, "
        "65536 of 65536 bytes in use)");
  held.pop_back();
  weft::View<double*> again("again", pool, 512);  // room again once a View goes
  CHECK(again.is_allocated());
}

TEST_CASE("View.from_an_arena") {
  std::vector<std::byte> memory(1024);
  weft::LinearArena arena("scratch", memory.data(), memory.size(), false);
  weft::View<double*> a("a", arena, 10);
  CHECK(arena.contains(a.data()));
  CHECK(a.use_count() == 1);
  CHECK(arena.used() >= 80);
  CHECK(a(9) == 0.0);
  {
    auto copy = a;
    CHECK(a.use_count() == 2);
  }
  const std::size_t remaining = arena.remaining();
  std::string message;
  try {
    weft::View<double*> big("big", arena, 200);
  } catch (const weft::ArenaExhausted& e) {
    message = e.what();
  }
  CHECK(message == "View 'big': arena 'scratch' cannot provide 1600 bytes (" + std::to_string(remaining) +
                       " of 1024 bytes left)");

  std::vector<std::byte> device_like(256);
  weft::LinearArena device_arena("gpu 0", device_like.data(), device_like.size(), true);
  CHECK(weft::test::invalid_argument_message([&] { weft::View<double*> d("d", device_arena, 4); }) ==
        "View 'd': arena 'gpu 0' holds device memory, but the View's HostSpace is host memory");

  // The same through a MultiarchAllocator's per-thread CPU arena.
  weft::MultiarchAllocator allocator({.cpu_arenas = 1, .cpu_arena_bytes = 4096, .use_cuda = false});
  weft::View<float**> scratch("scratch", allocator.cpu_allocator(), 8, 8);
  CHECK(allocator.cpu_allocator().contains(scratch.data()));
  scratch(7, 7) = 1.0f;
  scratch = {};
  allocator.reset();  // arena memory goes here, not with the View
}

TEST_CASE("View.deep_copy_on_a_stream_needs_one_contiguous_block") {
  weft::View<double**, weft::LayoutRight> a("a", 4, 6), b("b", 4, 6), c("c", 6, 4);
  const auto column = weft::subview(a, weft::ALL, 1);
  weft::View<double*> d("d", 4);
  const weft::GpuStream no_stream{0, nullptr};  // never reached: the checks come first
  CHECK(weft::test::invalid_argument_message([&] { weft::deep_copy(no_stream, c, b); }) ==
        "deep_copy: View 'c' extents (6, 4) differ from View 'b' extents (4, 6)");
  CHECK(weft::test::invalid_argument_message([&] { weft::deep_copy(no_stream, d, column); }) ==
        "deep_copy(stream, ...): View 'd' and View 'a' are not both contiguous with the same strides; an "
        "asynchronous copy is one block (deep_copy(dst, src) copies any layouts, synchronously)");
}

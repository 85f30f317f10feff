// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Polymorphic struct layouts (Ripple section 4.2-4.3): one user struct used as
// a plain object and as the element of strided (struct of arrays) and
// contiguous (array of structs) containers.
#include <weft/backends/memory_space.hpp>
#include <weft/views/accessor.hpp>
#include <weft/views/element_array.hpp>
#include <weft/views/element_storage.hpp>
#include <weft/views/polymorphic_layout.hpp>
#include <weft/views/read_only.hpp>
#include <weft/views/storage_descriptor.hpp>
#include <weft/views/vector.hpp>

#include <doctest/doctest.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using std::size_t;
using weft::Accessor;
using weft::ContiguousOwned;
using weft::ContiguousView;
using weft::element_storage;
using weft::ElementArray;
using weft::PolymorphicLayout;
using weft::StorageDescriptor;
using weft::StridedView;
using weft::Vector;

// Ripple Listing 2. Adaptation: `storage.template get`, since the storage
// type depends on the template parameters here.
template <typename T, size_t D, typename Layout>
struct State : public PolymorphicLayout<State<T, D, Layout>> {
  // Declare storage for D elements of type T and a bool.
  using Desc = StorageDescriptor<Layout, Vector<T, D>, bool>;
  using Storage = typename Desc::Storage;

  // Normal access for vector: gets the ith component from the vector.
  auto operator[](size_t i) -> T& { return storage.template get<0>(i); }

  // Density is element 0 of type 0 from storage:
  auto density() -> T& { return storage.template get<0, 0>(); }
  // Pressure is element 1 of type 0 from storage:
  auto pressure() -> T& { return storage.template get<0, 1>(); }
  auto is_valid() const -> bool { return storage.template get<1>(); }

  Storage storage;
};

// Specialization of the type for strided:
using State3d = State<double, 3, StridedView>;

// Ripple Listing 3. Adaptations: `public:` so that v.x is reachable from
// outside, and the assignment a type with accessors declares (accessor.hpp).
template <typename T, size_t D, typename L>
class Vec : public PolymorphicLayout<Vec<T, D, L>> {
  using Desc = StorageDescriptor<L, Vector<T, D>>;
  using Storage = typename Desc::Storage;

  // Accessors types:
  using X = Accessor<T, Storage, 0>;
  using Y = Accessor<T, Storage, 1>;
  using Z = Accessor<T, Storage, 2>;
  using W = Accessor<T, Storage, 3>;

 public:
  union {
    Storage storage;
    X x;
    Y y;
    Z z;
    W w;
  };

  Vec() = default;
  Vec(const Vec&) = default;
  Vec& operator=(const Vec& other) {
    storage = other.storage;
    return *this;
  }
};

// Components of several sizes, so the strided granule and the contiguous
// record padding both matter.
template <typename Layout>
struct Mixed : PolymorphicLayout<Mixed<Layout>> {
  using Storage =
      typename StorageDescriptor<Layout, float, Vector<std::int16_t, 3>, double, Vector<char, 2>>::Storage;
  Storage storage;
};

template <typename Layout>
struct Particle : PolymorphicLayout<Particle<Layout>> {
  using Storage = typename StorageDescriptor<Layout, Vector<double, 3>, Vector<double, 3>>::Storage;
  auto position(size_t d) -> double& { return storage.template get<0>(d); }
  auto velocity(size_t d) -> double& { return storage.template get<1>(d); }
  Storage storage;
};

struct PlainParticle {
  double position[3];
  double velocity[3];
};

State<double, 3, ContiguousOwned> make_state(double density, double pressure, double third, bool valid) {
  State<double, 3, ContiguousOwned> s{};
  s.density() = density;
  s.pressure() = pressure;
  s[2] = third;
  s.storage.get<1>() = valid;
  return s;
}

template <class Handle>
void check_state(Handle&& s, double density, double pressure, double third, bool valid) {
  CHECK(s.density() == density);
  CHECK(s.pressure() == pressure);
  CHECK(s[2] == third);
  CHECK(s.is_valid() == valid);
}

const std::byte* byte_address(const void* p) { return static_cast<const std::byte*>(p); }

bool aligned_to(const void* p, size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

}  // namespace

TEST_CASE("PolymorphicLayout.listing2.owned_state_is_a_plain_struct") {
  State<double, 3, ContiguousOwned> s{};
  s.density() = 1.5;
  s.pressure() = 2.5;
  s[2] = 3.5;
  s.storage.get<1>() = true;

  CHECK(s[0] == 1.5);
  CHECK(s[1] == 2.5);
  CHECK(s.storage.get<0, 2>() == 3.5);
  CHECK(s.is_valid());

  struct PlainState {
    double values[3];
    bool valid;
  };
  static_assert(sizeof(State<double, 3, ContiguousOwned>) == sizeof(PlainState));
  static_assert(std::is_trivially_copyable_v<State<double, 3, ContiguousOwned>>);

  auto copy = s;  // an owned object copies its values
  copy.density() = 9.0;
  CHECK(s.density() == 1.5);
  CHECK(copy.pressure() == 2.5);
}

TEST_CASE("PolymorphicLayout.listing2.strided_states_in_an_array") {
  ElementArray<State3d> states(10);
  for (size_t i = 0; i < states.size(); ++i) {
    states[i].density() = static_cast<double>(i);
    states[i].pressure() = 10.0 * static_cast<double>(i);
    states[i][2] = -static_cast<double>(i);
    states[i].storage.get<1>() = i % 2 == 0;
  }
  for (size_t i = 0; i < states.size(); ++i) {
    const double d = static_cast<double>(i);
    check_state(states[i], d, 10.0 * d, -d, i % 2 == 0);
  }

  const ElementArray<State3d>& read_only = states;
  static_assert(std::is_same_v<decltype(read_only[3].storage.get<0, 1>()), const double&>);
  CHECK(read_only[4].is_valid());
  CHECK(read_only[3].storage.get<0, 1>() == 30.0);
}

TEST_CASE("PolymorphicLayout.listing3.vec_accessors") {
  Vec<int, 3, ContiguousOwned> v;
  v.x = 10, v.y = 20;
  v.z = v.x + v.y;
  CHECK(v.x == 10);
  CHECK(v.y == 20);
  CHECK(v.z == 30);
  CHECK(v.storage.get<0, 1>() == 20);  // an accessor and the storage are the same values
  static_assert(sizeof(Vec<int, 3, ContiguousOwned>) == 3 * sizeof(int));

  v.x += 5;
  v.y -= 5;
  v.z *= 2;
  CHECK(v.x == 15);
  CHECK(v.y == 15);
  CHECK(v.z == 60);
  v.z /= 4;
  CHECK(v.z == 15);

  Vec<int, 3, ContiguousOwned> w;
  w.x = 1, w.y = 2, w.z = 3;
  v.x = w.y;  // one element, through the conversion to int
  v.y = w.y;  // same accessor type: still copies only element 1
  CHECK(v.x == 2);
  CHECK(v.y == 2);
  CHECK(v.z == 15);

  Vec<int, 3, ContiguousOwned> copy = v;
  copy.x = 100;
  CHECK(v.x == 2);
  copy = w;
  CHECK(copy.x == 1);
  CHECK(copy.z == 3);

  auto x_alone = w.x;  // an accessor copied out of the union holds the values
  CHECK(x_alone == 1);
}

TEST_CASE("PolymorphicLayout.listing3.vec_in_strided_and_contiguous_arrays") {
  ElementArray<Vec<int, 3, StridedView>> strided(5);
  ElementArray<Vec<int, 3, ContiguousView>> contiguous(5);
  for (int i = 0; i < 5; ++i) {
    const auto n = static_cast<size_t>(i);
    strided[n].x = i, strided[n].y = 2 * i, strided[n].z = 3 * i;
    contiguous[n] = strided[n];  // across layouts: copies values
  }
  for (int i = 0; i < 5; ++i) {
    const auto n = static_cast<size_t>(i);
    CHECK(contiguous[n].x == i);
    CHECK(contiguous[n].y == 2 * i);
    CHECK(contiguous[n].z == 3 * i);
  }
  CHECK(&strided[1].x.value() == &strided[0].x.value() + 1);
  CHECK(&contiguous[1].y.value() == &contiguous[1].x.value() + 1);

  auto handle = strided[2];  // a view: refers to element 2
  handle.z += 100;
  CHECK(strided[2].z == 106);

  Vec<int, 3, ContiguousOwned> owned = contiguous[3];  // to an owned object: copies values
  owned.x = -1;
  CHECK(contiguous[3].x == 3);
  strided[4] = owned;
  CHECK(strided[4].x == -1);
  CHECK(strided[4].y == 6);
}

TEST_CASE("PolymorphicLayout.get_indices") {
  Mixed<ContiguousOwned> owned{};
  auto& s = owned.storage;
  static_assert(std::is_same_v<decltype(s.get<0>()), float&>);
  static_assert(std::is_same_v<decltype(s.get<1, 2>()), std::int16_t&>);
  static_assert(std::is_same_v<decltype(s.get<1>(size_t{0})), std::int16_t&>);
  static_assert(std::is_same_v<decltype(s.get<2>()), double&>);
  static_assert(std::is_same_v<decltype(std::as_const(s).get<3, 1>()), const char&>);

  s.get<0>() = 0.5f;
  s.get<1, 0>() = 10;
  s.get<1, 1>() = 11;
  s.get<1, 2>() = 12;
  s.get<2>() = 2.25;
  s.get<3, 0>() = 'a';
  s.get<3, 1>() = 'b';

  // The same values through views of both layouts and through the owner.
  ElementArray<Mixed<StridedView>> strided(3);
  ElementArray<Mixed<ContiguousView>> contiguous(3);
  strided[1] = owned;
  contiguous[2] = owned;
  auto check_values = [](auto element) {
    CHECK(element.storage.template get<0>() == 0.5f);
    CHECK(element.storage.template get<2>() == 2.25);
    CHECK(element.storage.template get<3, 0>() == 'a');
    CHECK(element.storage.template get<3, 1>() == 'b');
    for (size_t k = 0; k < 3; ++k) {
      CHECK(element.storage.template get<1>(k) == static_cast<std::int16_t>(10 + k));
    }
  };
  check_values(owned);
  check_values(strided[1]);
  check_values(contiguous[2]);

  // Run-time and compile-time element indices name the same value.
  CHECK(&s.get<1>(2) == &s.get<1, 2>());
  auto v = strided[1];
  CHECK(&v.storage.get<1>(2) == &v.storage.get<1, 2>());
  auto c = contiguous[2];
  CHECK(&c.storage.get<3>(1) == &c.storage.get<3, 1>());
}

TEST_CASE("PolymorphicLayout.byte_placement.owned") {
  State<double, 3, ContiguousOwned> s{};
  const std::byte* begin = byte_address(&s);
  CHECK(byte_address(&s.density()) == begin);
  CHECK(&s.pressure() == &s.density() + 1);
  CHECK(&s[2] == &s.density() + 2);
  CHECK(byte_address(&s.storage.get<1>()) == begin + 3 * sizeof(double));
}

TEST_CASE("PolymorphicLayout.byte_placement.strided") {
  constexpr size_t n = 10;
  ElementArray<State3d> states(n);
  CHECK(byte_address(&states[0].density()) == byte_address(states.data()));
  for (size_t i = 0; i + 1 < n; ++i) {
    CHECK(&states[i + 1].density() == &states[i].density() + 1);  // densities are one array
    CHECK(&states[i + 1].storage.get<1>() == &states[i].storage.get<1>() + 1);
  }
  // The pressure array follows the density array; 10 elements are padded to
  // 64 (the bool array's granule) so that every array starts 64-byte aligned.
  CHECK(&states[0].pressure() == &states[0].density() + 64);
  CHECK(&states[3].pressure() == &states[0].pressure() + 3);
  CHECK(&states[0][2] == &states[0].pressure() + 64);
  CHECK(byte_address(&states[0].storage.get<1>()) == byte_address(&states[0][2] + 64));
  CHECK(states.bytes() == 64 * (3 * sizeof(double) + sizeof(bool)));
}

TEST_CASE("PolymorphicLayout.byte_placement.contiguous") {
  constexpr size_t n = 10;
  ElementArray<State<double, 3, ContiguousView>> states(n);
  CHECK(byte_address(&states[0].density()) == byte_address(states.data()));
  for (size_t i = 0; i < n; ++i) {
    CHECK(&states[i].pressure() == &states[i].density() + 1);  // an element's components are together
    CHECK(&states[i][2] == &states[i].density() + 2);
    CHECK(byte_address(&states[i].storage.get<1>()) ==
          byte_address(&states[i].density()) + 3 * sizeof(double));
  }
  // Records are the size of the equivalent struct: 3 doubles, a bool, padding.
  CHECK(byte_address(&states[1].density()) == byte_address(&states[0].density()) + 32);
  CHECK(states.bytes() == n * 32);
}

TEST_CASE("PolymorphicLayout.semantics.copy_constructing_a_view_rebinds") {
  ElementArray<State3d> states(4);
  State3d first = states[1];
  State3d alias = first;  // refers to element 1 as well
  alias.density() = 7.0;
  CHECK(states[1].density() == 7.0);
  CHECK(first.density() == 7.0);
  CHECK(&alias.density() == &states[1].density());
}

TEST_CASE("PolymorphicLayout.semantics.assigning_a_view_copies_values") {
  ElementArray<State3d> states(4);
  states[2].density() = 3.0;
  states[0] = states[2];
  CHECK(states[0].density() == 3.0);
  states[2].density() = 4.0;
  CHECK(states[0].density() == 3.0);  // values were copied, nothing was rebound

  State3d handle = states[0];
  states[3].pressure() = 8.0;
  handle = states[3];  // copies element 3 into element 0; handle still refers to element 0
  CHECK(states[0].pressure() == 8.0);
  handle.pressure() = 9.0;
  CHECK(states[0].pressure() == 9.0);
  CHECK(states[3].pressure() == 8.0);
}

TEST_CASE("PolymorphicLayout.semantics.across_layouts") {
  const auto owned = make_state(1.0, 2.0, 3.0, true);
  ElementArray<State<double, 3, StridedView>> strided(3);
  ElementArray<State<double, 3, ContiguousView>> contiguous(3);

  strided[1] = owned;  // view = owned
  check_state(strided[1], 1.0, 2.0, 3.0, true);
  strided[2] = make_state(4.0, 5.0, 6.0, false);  // from a temporary
  check_state(strided[2], 4.0, 5.0, 6.0, false);

  State<double, 3, ContiguousOwned> copied = strided[1];  // owned from a view: a copy
  copied.density() = 9.0;
  CHECK(strided[1].density() == 1.0);
  State<double, 3, ContiguousOwned> assigned{};
  assigned = strided[2];  // owned = view
  check_state(assigned, 4.0, 5.0, 6.0, false);

  contiguous[0] = strided[1];  // contiguous = strided
  check_state(contiguous[0], 1.0, 2.0, 3.0, true);
  contiguous[0].pressure() = -2.0;
  strided[0] = contiguous[0];  // strided = contiguous
  check_state(strided[0], 1.0, -2.0, 3.0, true);

  // A view constructed from an owned object is bound to that object's values.
  State<double, 3, ContiguousOwned> target{};
  State3d view_of_target = target;
  view_of_target.density() = 42.0;
  CHECK(target.density() == 42.0);
}

TEST_CASE("PolymorphicLayout.particle_update_is_layout_independent") {
  constexpr size_t n = 1000;
  constexpr double dt = 0.01;
  constexpr int steps = 10;
  auto initial_position = [](size_t i, size_t d) {
    return 0.37 * static_cast<double>(i) - 1.5 * static_cast<double>(d);
  };
  auto initial_velocity = [](size_t i, size_t d) {
    return static_cast<double>(i % 17) * 0.125 + 0.3 * static_cast<double>(d) - 1.0;
  };

  std::vector<PlainParticle> reference(n);
  ElementArray<Particle<StridedView>> strided(n);
  ElementArray<Particle<ContiguousView>> contiguous(n);
  for (size_t i = 0; i < n; ++i) {
    for (size_t d = 0; d < 3; ++d) {
      reference[i].position[d] = initial_position(i, d);
      reference[i].velocity[d] = initial_velocity(i, d);
      strided[i].position(d) = initial_position(i, d);
      strided[i].velocity(d) = initial_velocity(i, d);
      contiguous[i].position(d) = initial_position(i, d);
      contiguous[i].velocity(d) = initial_velocity(i, d);
    }
  }

  auto advance = [&](auto& particles) {
    for (size_t i = 0; i < n; ++i) {
      auto p = particles[i];  // a handle on element i
      for (size_t d = 0; d < 3; ++d) p.position(d) += p.velocity(d) * dt;
    }
  };
  for (int step = 0; step < steps; ++step) {
    advance(strided);
    advance(contiguous);
    for (auto& p : reference) {
      for (size_t d = 0; d < 3; ++d) p.position[d] += p.velocity[d] * dt;
    }
  }

  size_t mismatches = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t d = 0; d < 3; ++d) {
      const auto expected = std::bit_cast<std::uint64_t>(reference[i].position[d]);
      mismatches += std::bit_cast<std::uint64_t>(strided[i].position(d)) != expected;
      mismatches += std::bit_cast<std::uint64_t>(contiguous[i].position(d)) != expected;
    }
  }
  CHECK(mismatches == 0);
  CHECK(strided[999].position(2) != initial_position(999, 2));  // the update did move them
}

TEST_CASE("PolymorphicLayout.element_storage.plain_double") {
  using S = element_storage<double>;
  static_assert(!S::polymorphic);
  static_assert(std::is_same_v<S::reference, double&>);
  static_assert(std::is_same_v<S::const_reference, const double&>);
  static_assert(S::alignment == alignof(double));
  CHECK(S::bytes(10) == 80);

  std::vector<double> source(10);
  for (size_t i = 0; i < source.size(); ++i) S::at(source.data(), i, source.size()) = static_cast<double>(i);
  CHECK(source[3] == 3.0);
  CHECK(&S::at(source.data(), 3, 10) == &source[3]);

  std::vector<double> destination(20, -1.0);
  S::copy(destination.data(), 12, 20, source.data(), 2, 10, 5);
  for (size_t j = 0; j < destination.size(); ++j) {
    CHECK(destination[j] == (j >= 12 && j < 17 ? static_cast<double>(j - 10) : -1.0));
  }

  S::copy(source.data(), 0, 10, source.data(), 5, 10, 5);  // within one buffer
  CHECK(source[0] == 5.0);
  CHECK(source[4] == 9.0);
  CHECK(source[5] == 5.0);

  CHECK_THROWS_WITH_AS(S::copy(destination.data(), 18, 20, source.data(), 0, 10, 5),
                       "element_storage::copy: 5 elements from destination index 18 do not fit the "
                       "destination's 20 elements",
                       std::out_of_range);
  CHECK_THROWS_AS(S::copy(destination.data(), 0, 20, source.data(), 8, 10, 3), std::out_of_range);
  CHECK(destination[0] == -1.0);  // a rejected copy writes nothing
}

TEST_CASE("PolymorphicLayout.element_storage.contract") {
  using T = State<double, 3, StridedView>;
  using S = element_storage<T>;
  static_assert(S::polymorphic);
  static_assert(std::is_same_v<S::reference, T>);
  static_assert(S::alignment == 64);

  constexpr size_t n = 5;
  void* buffer = ::operator new (S::bytes(n), std::align_val_t{S::alignment});
  for (size_t i = 0; i < n; ++i) {
    S::at(buffer, i, n).density() = 1.0 + static_cast<double>(i);
    S::at(buffer, i, n).storage.get<1>() = false;
  }
  CHECK(S::at(buffer, 3, n).density() == 4.0);
  CHECK(static_cast<const double*>(buffer)[3] == 4.0);  // element 3 of the density array
  ::operator delete (buffer, std::align_val_t{S::alignment});

  // An owned polymorphic type is an ordinary struct to a container.
  using Owned = element_storage<State<double, 3, ContiguousOwned>>;
  static_assert(!Owned::polymorphic);
  static_assert(std::is_same_v<Owned::reference, State<double, 3, ContiguousOwned>&>);

  ElementArray<T> states(n);
  CHECK_THROWS_WITH_AS(states.at(n), "ElementArray index 5 out of bounds (5)", std::out_of_range);
}

TEST_CASE_TEMPLATE("PolymorphicLayout.element_storage.sizes_that_overflow_are_refused", Layout, StridedView,
                   ContiguousView) {
  // checked_bytes is bytes() with the overflow it cannot show: containers
  // size their buffers with it, and ElementArray refuses what does not fit.
  using T = State<double, 3, Layout>;
  using S = element_storage<T>;
  constexpr size_t max = std::numeric_limits<size_t>::max();
  CHECK(S::checked_bytes(5).fits());
  CHECK(S::checked_bytes(5).value() == S::bytes(5));
  CHECK_FALSE(S::checked_bytes(max).fits());  // strided: rounding up to a whole granule wraps
  CHECK_FALSE(S::checked_bytes(max / S::element_bytes + 1).fits());
  CHECK(element_storage<double>::checked_bytes(max / 8).value() == max / 8 * 8);
  CHECK_FALSE(element_storage<double>::checked_bytes(max / 8 + 1).fits());

  std::string message;
  try {
    ElementArray<T> huge(max / S::element_bytes + 1);
  } catch (const weft::AllocationError& e) {
    message = e.what();
  }
  CHECK(message == "ElementArray: " + std::to_string(max / S::element_bytes + 1) + " elements of " +
                       std::to_string(S::element_bytes) + " bytes overflow std::size_t");
  CHECK_THROWS_AS(ElementArray<double>(max / 4), weft::AllocationError);
}

TEST_CASE_TEMPLATE("PolymorphicLayout.element_storage.copy_with_different_counts", Layout, StridedView,
                   ContiguousView) {
  using T = State<double, 3, Layout>;
  using S = element_storage<T>;
  ElementArray<T> source(37);
  ElementArray<T> destination(100);
  for (size_t i = 0; i < source.size(); ++i) {
    const double d = static_cast<double>(i);
    source[i] = make_state(d, 100.0 + d, 200.0 + d, i % 3 == 0);
  }
  for (size_t j = 0; j < destination.size(); ++j) destination[j] = make_state(-1.0, -1.0, -1.0, false);

  S::copy(destination.data(), 70, destination.size(), source.data(), 10, source.size(), 20);
  for (size_t j = 0; j < destination.size(); ++j) {
    if (j >= 70 && j < 90) {
      const size_t i = j - 60;
      const double d = static_cast<double>(i);
      check_state(destination[j], d, 100.0 + d, 200.0 + d, i % 3 == 0);
    } else {
      check_state(destination[j], -1.0, -1.0, -1.0, false);
    }
  }

  S::copy(source.data(), 0, source.size(), source.data(), 30, source.size(), 5);  // within one buffer
  check_state(source[0], 30.0, 130.0, 230.0, true);
  check_state(source[4], 34.0, 134.0, 234.0, false);
  check_state(source[5], 5.0, 105.0, 205.0, false);

  CHECK_THROWS_AS(S::copy(destination.data(), 90, destination.size(), source.data(), 0, source.size(), 20),
                  std::out_of_range);
}

TEST_CASE("PolymorphicLayout.element_storage.strided_component_arrays_are_aligned") {
  using S = element_storage<Mixed<StridedView>>;
  static_assert(S::alignment == 64);
  for (size_t count : {size_t{1}, size_t{7}, size_t{63}, size_t{64}, size_t{65}, size_t{1000}}) {
    CAPTURE(count);
    ElementArray<Mixed<StridedView>> mixed(count);
    auto first = mixed[0];
    CHECK(aligned_to(mixed.data(), 64));
    CHECK(aligned_to(&first.storage.get<0>(), 64));
    CHECK(aligned_to(&first.storage.get<1, 0>(), 64));
    CHECK(aligned_to(&first.storage.get<1, 1>(), 64));
    CHECK(aligned_to(&first.storage.get<1, 2>(), 64));
    CHECK(aligned_to(&first.storage.get<2>(), 64));
    CHECK(aligned_to(&first.storage.get<3, 0>(), 64));
    CHECK(aligned_to(&first.storage.get<3, 1>(), 64));
    // The last array ends inside the buffer.
    CHECK(byte_address(&mixed[count - 1].storage.get<3, 1>() + 1) <=
          byte_address(mixed.data()) + mixed.bytes());
  }

  // With doubles only, a granule of 8 elements keeps every array aligned.
  for (size_t count : {size_t{1}, size_t{1001}}) {
    CAPTURE(count);
    ElementArray<Particle<StridedView>> particles(count);
    auto first = particles[0];
    for (size_t d = 0; d < 3; ++d) {
      CHECK(aligned_to(&first.position(d), 64));
      CHECK(aligned_to(&first.velocity(d), 64));
    }
    CHECK(particles.bytes() == (count + 7) / 8 * 8 * 6 * sizeof(double));
  }
}

TEST_CASE("PolymorphicLayout.element_storage.contiguous_records_follow_struct_rules") {
  ElementArray<Mixed<ContiguousView>> mixed(4);
  auto e = mixed[1];
  // 32-byte records: float at 0, 3 int16 at 4, double at 16, 2 chars at 24, padding.
  const std::byte* record = byte_address(mixed.data()) + 32;
  CHECK(byte_address(&e.storage.get<0>()) == record);
  CHECK(byte_address(&e.storage.get<1, 0>()) == record + 4);
  CHECK(byte_address(&e.storage.get<1, 2>()) == record + 8);
  CHECK(byte_address(&e.storage.get<2>()) == record + 16);
  CHECK(byte_address(&e.storage.get<3, 1>()) == record + 25);
  CHECK(element_storage<Mixed<ContiguousView>>::alignment == alignof(double));
}

// weft::read_only: an owned copy of an element a kernel only reads. On the
// host it is a plain copy; tests/cuda/parallel_for_cuda_test.cu runs it on a
// GPU, where it loads through the read-only path.
TEST_CASE_TEMPLATE("PolymorphicLayout.read_only_copies_an_element_into_an_owned_object", Layout, StridedView,
                   ContiguousView) {
  ElementArray<State<double, 3, Layout>> states(5);
  states[3][0] = 1.5;
  states[3][1] = -2.0;
  states[3][2] = 4.25;
  states[3].storage.template get<1>() = true;

  using Owned = State<double, 3, ContiguousOwned>;
  static_assert(std::is_same_v<decltype(weft::read_only<Owned>(states[3])), Owned>);
  const Owned copy = weft::read_only<Owned>(states[3]);
  CHECK(copy.storage.get<0, 0>() == 1.5);
  CHECK(copy.storage.get<0, 1>() == -2.0);
  CHECK(copy.storage.get<0, 2>() == 4.25);
  CHECK(copy.is_valid());

  // A copy, not a handle: later writes to the element do not reach it.
  states[3][0] = 0.0;
  CHECK(copy.storage.get<0, 0>() == 1.5);
}

TEST_CASE("PolymorphicLayout.read_only_of_plain_values_and_owned_objects") {
  const float value = 2.5f;
  CHECK(weft::read_only<float>(value) == 2.5f);
  State<float, 2, ContiguousOwned> owned{};
  owned[1] = 7.0f;
  CHECK(weft::read_only<State<float, 2, ContiguousOwned>>(owned)[1] == 7.0f);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Accessor<T, Storage, I> names element I of the first Vector in a storage,
// so a polymorphic-layout type can offer public-member syntax (v.x, v.y)
// while its data stays strided or contiguous (Ripple section 4.3, Listing 3).
// Accessors share a union with the storage:
//
//   template <typename T, size_t D, typename L>
//   class Vec : public weft::PolymorphicLayout<Vec<T, D, L>> {
//     using Storage = typename weft::StorageDescriptor<L, weft::Vector<T, D>>::Storage;
//     using X = weft::Accessor<T, Storage, 0>;
//     using Y = weft::Accessor<T, Storage, 1>;
//    public:
//     union {
//       Storage storage;
//       X x;
//       Y y;
//     };
//     Vec() = default;
//     Vec(const Vec&) = default;
//     Vec& operator=(const Vec& other) { storage = other.storage; return *this; }
//   };
//
//   Vec<int, 2, weft::ContiguousOwned> v;
//   v.x = 10, v.y = 20;
//   v.x += v.y;          // 30
//   int sum = v.x + v.y; // accessors convert to T
//
// Each accessor is a copy of the storage (an owned copy, or a handle on the
// same element), laid over the union's storage, so reading an accessor reads
// the storage's values. That is union type punning: ISO C++ leaves it
// undefined, GCC documents it as supported, Clang follows, and Ripple
// relies on it under nvcc too. A copy of an accessor taken out of the union
// keeps working: it holds values, or refers to the same element.
//
// Assigning one accessor to another copies element I only. That makes the
// union's implicit assignment unusable, so a type with accessors declares its
// own (as above), assigning `storage`; its copy constructor can stay the
// default. Cross-layout assignment (Vec<..., StridedView> = Vec<...,
// ContiguousOwned>) then works through PolymorphicLayout's conversions.
#pragma once

#include <weft/backends/host_device.hpp>

#include <cstddef>
#include <type_traits>

namespace weft {

template <class T, class Storage, std::size_t I>
class Accessor {
  // Checked when used, not here: Ripple's Vec declares accessors x, y, z and
  // w whatever its size, and only the used ones must be in range.
  static constexpr std::size_t vector_component = Storage::components::first_vector;

  template <class Self>
  WEFT_HOST_DEVICE static auto& element(Self& self) noexcept {
    static_assert(vector_component < Storage::components::count,
                  "Accessor needs a storage with a Vector component");
    static_assert(I < Storage::components::extents[vector_component],
                  "Accessor index is past the end of the storage's first Vector");
    static_assert(std::is_same_v<T, typename Storage::components::template value_type<vector_component>>,
                  "Accessor's value type must be the value type of the storage's first Vector");
    return self.storage_.template get<vector_component, I>();
  }

 public:
  Accessor() = default;
  Accessor(const Accessor&) = default;

  WEFT_HOST_DEVICE Accessor& operator=(const Accessor& other) noexcept {
    value() = other.value();
    return *this;
  }
  WEFT_HOST_DEVICE Accessor& operator=(const T& new_value) noexcept {
    value() = new_value;
    return *this;
  }

  WEFT_HOST_DEVICE T& value() noexcept { return element(*this); }
  WEFT_HOST_DEVICE const T& value() const noexcept { return element(*this); }

  WEFT_HOST_DEVICE operator T&() noexcept { return value(); }
  WEFT_HOST_DEVICE operator const T&() const noexcept { return value(); }

  WEFT_HOST_DEVICE Accessor& operator+=(const T& rhs) noexcept {
    value() += rhs;
    return *this;
  }
  WEFT_HOST_DEVICE Accessor& operator-=(const T& rhs) noexcept {
    value() -= rhs;
    return *this;
  }
  WEFT_HOST_DEVICE Accessor& operator*=(const T& rhs) noexcept {
    value() *= rhs;
    return *this;
  }
  WEFT_HOST_DEVICE Accessor& operator/=(const T& rhs) noexcept {
    value() /= rhs;
    return *this;
  }

 private:
  Storage storage_;
};

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Size arithmetic that never wraps. Every size computed from counts a user
// gives (extents, partitions, padding, element sizes, arena and buffer sizes)
// goes through this before anything is allocated, so an impossible size is an
// AllocationError naming the sizes, not a small block that kernels then write
// past. Internal to weft (views/ and memory/ use it).
//
//   weft::detail::CheckedSize bytes = weft::detail::CheckedSize(rows) * cols * sizeof(double);
//   if (!bytes.fits()) weft::detail::throw_size_overflow("Grid: " + ... + " overflow std::size_t");
//   allocate(bytes.value());
//
// Host code only (sizes are computed before kernels run).
#pragma once

#include <weft/backends/memory_space.hpp>

#include <cstddef>
#include <string>

namespace weft::detail {

// a * b in `result`; false (result unspecified) when it does not fit in size_t.
[[nodiscard]] constexpr bool checked_multiply(std::size_t a, std::size_t b, std::size_t& result) noexcept {
  return !__builtin_mul_overflow(a, b, &result);
}

// a + b in `result`; false (result unspecified) when it does not fit in size_t.
[[nodiscard]] constexpr bool checked_add(std::size_t a, std::size_t b, std::size_t& result) noexcept {
  return !__builtin_add_overflow(a, b, &result);
}

// A size built by multiplying and adding that remembers whether any step
// overflowed; value() is meaningful only while fits().
class CheckedSize {
 public:
  constexpr CheckedSize() noexcept = default;
  constexpr explicit CheckedSize(std::size_t value) noexcept : value_(value) {}

  constexpr CheckedSize& operator*=(std::size_t factor) noexcept {
    overflowed_ = !checked_multiply(value_, factor, value_) || overflowed_;
    return *this;
  }
  constexpr CheckedSize& operator+=(std::size_t term) noexcept {
    overflowed_ = !checked_add(value_, term, value_) || overflowed_;
    return *this;
  }
  constexpr CheckedSize& operator*=(const CheckedSize& factor) noexcept {
    overflowed_ = factor.overflowed_ || overflowed_;
    return *this *= factor.value_;
  }
  constexpr CheckedSize& operator+=(const CheckedSize& term) noexcept {
    overflowed_ = term.overflowed_ || overflowed_;
    return *this += term.value_;
  }
  friend constexpr CheckedSize operator*(CheckedSize a, std::size_t b) noexcept { return a *= b; }
  friend constexpr CheckedSize operator+(CheckedSize a, std::size_t b) noexcept { return a += b; }
  friend constexpr CheckedSize operator*(CheckedSize a, const CheckedSize& b) noexcept { return a *= b; }
  friend constexpr CheckedSize operator+(CheckedSize a, const CheckedSize& b) noexcept { return a += b; }

  constexpr bool fits() const noexcept { return !overflowed_; }
  constexpr std::size_t value() const noexcept { return value_; }

 private:
  std::size_t value_ = 0;
  bool overflowed_ = false;
};

// "2305843009213693952 x 8": sizes joined the way messages about products
// quote them.
template <class Sizes>
std::string format_size_product(const Sizes& sizes) {
  std::string text;
  for (const auto size : sizes) {
    if (!text.empty()) text += " x ";
    text += std::to_string(size);
  }
  return text;
}

// What every size that does not fit in size_t throws: AllocationError (the
// request can never be served), with `message` naming the sizes.
[[noreturn]] inline void throw_size_overflow(const std::string& message) { throw AllocationError(message); }

}  // namespace weft::detail

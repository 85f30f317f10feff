// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/memory/linear_arena.hpp>

#include <weft/backends/detail/checked_size.hpp>

#include <cstdint>
#include <stdexcept>
#include <utility>

namespace weft {
namespace {

bool is_power_of_two(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }

}  // namespace

LinearArena::LinearArena(std::string name, void* base, std::size_t capacity, bool device_memory) noexcept
    : name_(std::move(name)),
      base_(static_cast<std::byte*>(base)),
      capacity_(base != nullptr ? capacity : 0),
      device_memory_(device_memory) {}

void* LinearArena::try_allocate(std::size_t bytes, std::size_t alignment) noexcept {
  if (bytes == 0 || !is_power_of_two(alignment)) return nullptr;
  const auto base = reinterpret_cast<std::uintptr_t>(base_);
  // relaxed: the CAS below only has to hand out disjoint ranges, which the
  // atomicity of the RMW guarantees; no data is published through the offset.
  std::size_t used = used_.load(std::memory_order_relaxed);
  for (;;) {
    // base + used + alignment - 1 may wrap for a huge alignment: no room then.
    std::size_t rounded_up = 0;
    if (!detail::checked_add(base + used, alignment - 1, rounded_up)) return nullptr;
    const std::uintptr_t aligned = rounded_up & ~(static_cast<std::uintptr_t>(alignment) - 1);
    const std::size_t start = aligned - base;
    if (start > capacity_ || bytes > capacity_ - start) return nullptr;
    // relaxed: see above; on failure `used` receives the current offset.
    if (used_.compare_exchange_weak(used, start + bytes, std::memory_order_relaxed,
                                    std::memory_order_relaxed)) {
      return base_ + start;
    }
  }
}

void* LinearArena::allocate(std::size_t bytes, std::size_t alignment) {
  if (!is_power_of_two(alignment)) {
    throw std::invalid_argument("LinearArena '" + name_ + "': alignment " + std::to_string(alignment) +
                                " is not a power of two");
  }
  if (bytes == 0) return nullptr;
  if (void* ptr = try_allocate(bytes, alignment)) return ptr;
  throw ArenaExhausted("LinearArena '" + name_ + "': cannot allocate " + std::to_string(bytes) +
                       " bytes (alignment " + std::to_string(alignment) +
                       "): " + std::to_string(remaining()) + " of " + std::to_string(capacity_) +
                       " bytes remain; give the arena more memory or reset() it between runs");
}

void LinearArena::reset() noexcept {
  // relaxed: reset() is ordered against allocations by the caller (see header).
  used_.store(0, std::memory_order_relaxed);
}

std::size_t LinearArena::used() const noexcept {
  // relaxed: a reading for reports; it may be stale while threads allocate.
  return used_.load(std::memory_order_relaxed);
}

bool LinearArena::contains(const void* ptr) const noexcept {
  const auto p = reinterpret_cast<std::uintptr_t>(ptr);
  const auto b = reinterpret_cast<std::uintptr_t>(base_);
  return base_ != nullptr && p >= b && p - b < capacity_;
}

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Copies of short strings (the names a trace keeps) in large blocks that
// never move, so each copy's pointer stays valid until clear() or the
// arena's end. One owner thread; no locks. Internal to the tracer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

namespace weft::detail {

class NameArena {
 public:
  // A copy of `text` (up to its '\0'), valid while the arena keeps it.
  const char* keep(const char* text) {
    const std::size_t bytes = std::strlen(text) + 1;
    if (blocks_.empty() || capacity_ - used_ < bytes) grow(bytes);
    char* copy = blocks_.back().get() + used_;
    std::memcpy(copy, text, bytes);
    used_ += bytes;
    return copy;
  }
  // Forgets every copy; keeps the first block for the next ones.
  void clear() noexcept {
    if (blocks_.size() > 1) blocks_.erase(blocks_.begin() + 1, blocks_.end());
    if (!blocks_.empty()) capacity_ = first_capacity_;
    used_ = 0;
  }

 private:
  static constexpr std::size_t kBlockBytes = 64 * 1024;

  void grow(std::size_t bytes) {
    const std::size_t capacity = std::max(kBlockBytes, bytes);
    blocks_.push_back(std::make_unique<char[]>(capacity));
    if (blocks_.size() == 1) first_capacity_ = capacity;
    capacity_ = capacity;
    used_ = 0;
  }

  std::vector<std::unique_ptr<char[]>> blocks_;
  std::size_t capacity_ = 0;        // of the last block
  std::size_t used_ = 0;            // of the last block
  std::size_t first_capacity_ = 0;  // what clear() goes back to
};

}  // namespace weft::detail

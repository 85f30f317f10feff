// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/memory/memory_pool_geometry.hpp>

#include <weft/memory/memory_pool_handle.hpp>
#include <weft/memory/portable_atomic.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace weft::detail {
namespace {

constexpr std::size_t kDefaultMinBlock = 64;
constexpr std::size_t kDefaultMaxBlock = 4096;
constexpr unsigned kMaxSuperblockLg2 = 40;
constexpr std::size_t kMaxSuperblocks = std::size_t{1} << 31;
constexpr unsigned kMaxHintRowsLg2 = 6;  // 64 rows: threads beyond that share rows

[[noreturn]] void broken(const std::string& requirement, const std::string& detail) {
  throw std::invalid_argument("MemoryPool: requires " + requirement + " (" + detail + ")");
}

std::string named(const char* name, std::size_t value, bool defaulted) {
  return std::string(name) + " = " + std::to_string(value) + (defaulted ? " by default" : "");
}

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// The superblock hint row `row` starts with for size class `size_class`.
std::uint32_t initial_hint(const PoolGeometry& g, std::uint32_t row, std::uint32_t size_class) {
  std::uint32_t reversed = 0;
  for (unsigned i = 0; i < g.hint_rows_lg2; ++i) reversed = (reversed << 1) | ((row >> i) & 1u);
  const std::uint64_t position = static_cast<std::uint64_t>(reversed) * g.size_classes() + size_class;
  return static_cast<std::uint32_t>(((position * g.superblock_count) >> g.hint_rows_lg2) / g.size_classes());
}

}  // namespace

PoolGeometry make_pool_geometry(std::size_t min_total_alloc_size, std::size_t min_block_alloc_size,
                                std::size_t max_block_alloc_size, std::size_t min_superblock_size) {
  const std::size_t total = min_total_alloc_size;
  if (total == 0) broken("0 < min_total_alloc_size", "got 0");

  // Defaults never break the requirement by themselves: each is capped by the
  // parameters above it that were given.
  const bool min_defaulted = min_block_alloc_size == 0;
  const bool max_defaulted = max_block_alloc_size == 0;
  const bool superblock_defaulted = min_superblock_size == 0;
  std::size_t upper = total;
  if (!superblock_defaulted) upper = std::min(upper, min_superblock_size);
  const std::size_t max_cap = upper;
  if (!max_defaulted) upper = std::min(upper, max_block_alloc_size);
  const std::size_t min_block = min_defaulted ? std::min(kDefaultMinBlock, upper) : min_block_alloc_size;
  const std::size_t max_block =
      max_defaulted ? std::max(min_block, std::min(kDefaultMaxBlock, max_cap)) : max_block_alloc_size;
  const std::size_t superblock = superblock_defaulted ? max_block : min_superblock_size;

  if (min_block > max_block) {
    broken("min_block_alloc_size <= max_block_alloc_size",
           named("min_block_alloc_size", min_block, min_defaulted) + " > " +
               named("max_block_alloc_size", max_block, max_defaulted));
  }
  if (max_block > superblock) {
    broken("max_block_alloc_size <= min_superblock_size",
           named("max_block_alloc_size", max_block, max_defaulted) + " > " +
               named("min_superblock_size", superblock, superblock_defaulted));
  }
  if (superblock > total) {
    broken("min_superblock_size <= min_total_alloc_size",
           named("min_superblock_size", superblock, superblock_defaulted) + " > " +
               named("min_total_alloc_size", total, false));
  }
  if (superblock > (std::size_t{1} << kMaxSuperblockLg2)) {
    broken("min_superblock_size <= 2^" + std::to_string(kMaxSuperblockLg2),
           "got " + std::to_string(superblock));
  }

  PoolGeometry g;
  g.min_lg2 = static_cast<std::uint8_t>(ceil_log2(min_block));
  g.max_lg2 = static_cast<std::uint8_t>(ceil_log2(max_block));
  g.superblock_lg2 = static_cast<std::uint8_t>(ceil_log2(superblock));
  const std::size_t superblock_bytes = std::size_t{1} << g.superblock_lg2;
  const std::size_t blocks_per_superblock = std::size_t{1} << (g.superblock_lg2 - g.min_lg2);
  if (blocks_per_superblock > kMaxBlocksPerSuperblock) {
    broken("superblock size / smallest block <= " + std::to_string(kMaxBlocksPerSuperblock),
           std::to_string(superblock_bytes) + " / " + std::to_string(std::size_t{1} << g.min_lg2) +
               " after rounding to powers of two; raise min_block_alloc_size or lower min_superblock_size");
  }
  if (total > std::numeric_limits<std::size_t>::max() - superblock_bytes) {
    broken("min_total_alloc_size to fit the address space", "got " + std::to_string(total));
  }
  const std::size_t count = round_up(total, superblock_bytes) / superblock_bytes;
  if (count > kMaxSuperblocks) {
    broken("at most 2^31 superblocks", std::to_string(count) + " superblocks of " +
                                           std::to_string(superblock_bytes) +
                                           " bytes; raise min_superblock_size");
  }
  g.superblock_count = static_cast<std::uint32_t>(count);
  g.capacity = count * superblock_bytes;
  g.max_block_bytes = std::size_t{1} << g.max_lg2;
  g.bitset_words = static_cast<std::uint32_t>(std::max<std::size_t>(1, blocks_per_superblock / 64));
  g.state_words = static_cast<std::uint32_t>(round_up(1 + g.bitset_words, 8));
  unsigned rows_lg2 = 0;
  while (rows_lg2 < kMaxHintRowsLg2 && (std::size_t{2} << rows_lg2) <= count) ++rows_lg2;
  g.hint_rows_lg2 = static_cast<std::uint8_t>(rows_lg2);
  g.hint_stride = static_cast<std::uint32_t>(round_up(2 * g.size_classes(), 16));
  return g;
}

std::vector<std::byte> initial_pool_metadata(const PoolGeometry& g) {
  std::vector<std::byte> image(g.metadata_bytes(), std::byte{0});
  if (image.empty()) return image;
  std::byte* hints = image.data() + g.state_bytes();
  for (std::uint32_t row = 0; row < g.hint_rows(); ++row) {
    for (std::uint32_t size_class = 0; size_class < g.size_classes(); ++size_class) {
      // (superblock, word): a spread-out superblock, and a first word that
      // differs between rows so warps sharing a superblock start apart.
      const std::uint32_t pair[2] = {initial_hint(g, row, size_class), row};
      std::memcpy(
          hints + (static_cast<std::size_t>(row) * g.hint_stride + 2 * size_class) * sizeof(std::uint32_t),
          pair, sizeof pair);
    }
  }
  return image;
}

MemoryPoolStatistics summarize_pool_metadata(const PoolGeometry& g, const void* metadata) {
  MemoryPoolStatistics s;
  s.capacity_bytes = g.capacity;
  if (g.capacity == 0 || metadata == nullptr) return s;
  s.metadata_bytes = g.metadata_bytes();
  s.superblock_bytes = std::size_t{1} << g.superblock_lg2;
  s.min_block_bytes = std::size_t{1} << g.min_lg2;
  s.max_block_bytes = g.max_block_bytes;
  s.superblocks = g.superblock_count;
  const auto* states = static_cast<const std::uint64_t*>(metadata);
  for (std::uint32_t sb = 0; sb < g.superblock_count; ++sb) {
    const std::uint64_t* state = states + static_cast<std::size_t>(sb) * g.state_words;
    // relaxed: a snapshot; exact once the threads using the pool are joined
    // (joining orders their last frees before this read).
    const unsigned assigned =
        static_cast<unsigned>(atomic_load(state, MemoryOrder::relaxed) & kHeaderSizeMask);
    std::size_t claimed = 0;
    std::size_t blocks = 1;
    unsigned lg2 = 0;
    if (assigned != 0) {
      lg2 = assigned - 1;
      blocks = std::size_t{1} << (g.superblock_lg2 - lg2);
      const BlockBits bits = block_bits(g, lg2);
      for (std::uint32_t w = 0; w < bits.words; ++w) {
        claimed += population_count(atomic_load(state + 1 + w, MemoryOrder::relaxed) & bits.valid);
      }
    }
    if (claimed == 0) {
      ++s.empty_superblocks;
    } else {
      if (claimed == blocks) {
        ++s.full_superblocks;
      } else {
        ++s.partly_full_superblocks;
      }
      s.consumed_blocks += claimed;
      s.consumed_bytes += claimed << lg2;
      s.reserved_bytes += s.superblock_bytes;
    }
  }
  return s;
}

}  // namespace weft::detail

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How a MemoryPool's construction parameters become its shape: block and
// superblock sizes, the number of superblocks, and the layout of the state
// words. Internal to the pool; exposed so tests can check the rules.
//
//   weft::detail::PoolGeometry g = weft::detail::make_pool_geometry(1 << 20, 0, 0, 0);
//   // g.min_lg2 == 6 (64-byte blocks), g.max_lg2 == 12, g.superblock_count == 256
//
// Metadata layout, all in the pool's memory space:
//   superblock_count states of state_words 64-bit words each (a multiple of
//   8, so no two superblocks share a cache line): word 0 is the header (the
//   assigned block size and a "closed" flag), then bitset_words words of
//   claimed-block bits, sized for the smallest block;
//   then hint_rows() rows of hint_stride 32-bit entries (each row padded to
//   64 bytes): for each block size a pair (superblock to try first, bitset
//   word there to try first), the per-thread, per-size hints.
#pragma once

#include <weft/backends/host_device.hpp>
#include <weft/memory/memory_pool_statistics.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace weft::detail {

struct PoolGeometry {
  std::size_t capacity = 0;         // bytes in superblocks
  std::size_t max_block_bytes = 0;  // 0 for an empty (default or moved-from) pool
  std::uint32_t superblock_count = 0;
  std::uint32_t bitset_words = 0;   // claimed-block words per superblock
  std::uint32_t state_words = 0;    // header + bitset, padded to 8 words
  std::uint32_t hint_stride = 0;    // 32-bit entries per hint row (two per size class)
  std::uint8_t min_lg2 = 0;         // log2 of the smallest block
  std::uint8_t max_lg2 = 0;         // log2 of the largest block
  std::uint8_t superblock_lg2 = 0;  // log2 of the superblock size
  std::uint8_t hint_rows_lg2 = 0;   // log2 of the number of hint rows

  WEFT_HOST_DEVICE std::uint32_t size_classes() const noexcept { return max_lg2 - min_lg2 + 1u; }
  WEFT_HOST_DEVICE std::uint32_t hint_rows() const noexcept { return 1u << hint_rows_lg2; }
  std::size_t state_bytes() const noexcept {
    return static_cast<std::size_t>(superblock_count) * state_words * sizeof(std::uint64_t);
  }
  std::size_t hint_bytes() const noexcept {
    return static_cast<std::size_t>(hint_rows()) * hint_stride * sizeof(std::uint32_t);
  }
  std::size_t metadata_bytes() const noexcept { return capacity == 0 ? 0 : state_bytes() + hint_bytes(); }
};

// The most blocks one superblock may hold (superblock size / smallest block):
// it bounds the bitset a claim may have to scan.
inline constexpr std::size_t kMaxBlocksPerSuperblock = std::size_t{1} << 15;

// Applies the defaults (64-byte smallest block, 4096-byte largest, superblock
// = largest block) and the rounding rules (block and superblock sizes up to a
// power of two, the total up to a whole number of superblocks). Throws
// std::invalid_argument naming the broken requirement
// 0 < min_block <= max_block <= superblock <= total.
PoolGeometry make_pool_geometry(std::size_t min_total_alloc_size, std::size_t min_block_alloc_size,
                                std::size_t max_block_alloc_size, std::size_t min_superblock_size);

// The metadata of a fresh pool: every superblock unassigned and empty; the
// superblock hints spread out (rows are bit-reversed so the first few rows,
// that is threads, start far apart, and each size class starts at its own
// offset inside a row's stretch). Copied into the pool's space as is.
std::vector<std::byte> initial_pool_metadata(const PoolGeometry& g);

// Counts blocks and superblocks from metadata laid out as above (the live
// metadata of a host-accessible pool, read atomically, or a host copy).
MemoryPoolStatistics summarize_pool_metadata(const PoolGeometry& g, const void* metadata);

}  // namespace weft::detail

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a MemoryPool holds at one moment.
//
//   weft::MemoryPoolStatistics s = pool.get_usage_statistics();
//   std::printf("%zu of %zu bytes in use, %zu superblocks empty\n",
//               s.consumed_bytes, s.capacity_bytes, s.empty_superblocks);
//
// The figures are read without stopping other threads: while allocations are
// in flight they are a snapshot that may be off by those allocations; once
// every thread (or kernel) using the pool is done they are exact.
#pragma once

#include <cstddef>

namespace weft {

struct MemoryPoolStatistics {
  std::size_t capacity_bytes = 0;    // bytes in superblocks: all the pool can hand out
  std::size_t metadata_bytes = 0;    // superblock states and hints, beside the capacity
  std::size_t superblock_bytes = 0;  // size of one superblock
  std::size_t min_block_bytes = 0;   // smallest block
  std::size_t max_block_bytes = 0;   // largest block, the largest request served

  std::size_t superblocks = 0;              // in total
  std::size_t empty_superblocks = 0;        // no block claimed (these may be reassigned)
  std::size_t partly_full_superblocks = 0;  // some blocks claimed
  std::size_t full_superblocks = 0;         // every block claimed

  std::size_t consumed_blocks = 0;  // blocks handed out and not yet freed
  std::size_t consumed_bytes = 0;   // the sizes of those blocks (block sizes, not requested sizes)
  // Bytes of the superblocks that hold at least one consumed block: memory no
  // other block size can use until they empty. reserved - consumed is the free
  // room inside them.
  std::size_t reserved_bytes = 0;
};

}  // namespace weft

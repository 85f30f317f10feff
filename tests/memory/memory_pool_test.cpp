// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MemoryPool: construction rules, block sizes, exhaustion, reassignment, the
// larger-block fallback, statistics and bad deallocations, on one thread.
#include <weft/memory/memory_pool.hpp>

#include <doctest/doctest.h>

#include "../test_support.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Pool = weft::MemoryPool<weft::HostSpace>;

using weft::test::invalid_argument_message;

}  // namespace

TEST_CASE("MemoryPool.defaults") {
  Pool pool(weft::HostSpace{}, 1 << 20);
  CHECK(pool.min_block_size() == 64);
  CHECK(pool.max_block_size() == 4096);
  CHECK(pool.superblock_size() == 4096);
  CHECK(pool.capacity() == (1u << 20));
  CHECK(pool.superblock_count() == 256);
  const weft::MemoryPoolStatistics s = pool.get_usage_statistics();
  CHECK(s.capacity_bytes == (1u << 20));
  CHECK(s.superblocks == 256);
  CHECK(s.empty_superblocks == 256);
  CHECK(s.consumed_blocks == 0);
  CHECK(s.reserved_bytes == 0);
}

TEST_CASE("MemoryPool.rounding") {
  // Sizes round up to powers of two, the total up to whole superblocks.
  Pool pool(weft::HostSpace{}, 1000000, 100, 3000, 5000);
  CHECK(pool.min_block_size() == 128);
  CHECK(pool.max_block_size() == 4096);
  CHECK(pool.superblock_size() == 8192);
  CHECK(pool.capacity() == 123 * 8192);  // ceil(1000000 / 8192) superblocks
  CHECK(pool.capacity() >= 1000000);

  // Defaults adapt to what was given instead of breaking the requirement.
  Pool small(weft::HostSpace{}, 1000);
  CHECK(small.min_block_size() == 64);
  CHECK(small.max_block_size() == 1024);
  CHECK(small.capacity() == 1024);
  Pool big_blocks(weft::HostSpace{}, 1 << 20, 8192);
  CHECK(big_blocks.min_block_size() == 8192);
  CHECK(big_blocks.max_block_size() == 8192);
}

TEST_CASE("MemoryPool.invalid_arguments") {
  const weft::HostSpace host;
  CHECK(invalid_argument_message([&] { Pool(host, 0); }).find("0 < min_total_alloc_size") !=
        std::string::npos);
  CHECK(invalid_argument_message([&] { Pool(host, 1 << 20, 512, 256); })
            .find("min_block_alloc_size <= max_block_alloc_size (min_block_alloc_size = 512 > "
                  "max_block_alloc_size = 256)") != std::string::npos);
  CHECK(invalid_argument_message([&] {
          Pool(host, 1 << 20, 64, 8192, 4096);
        }).find("max_block_alloc_size <= min_superblock_size") != std::string::npos);
  CHECK(invalid_argument_message([&] {
          Pool(host, 4096, 64, 1024, 8192);
        }).find("min_superblock_size <= min_total_alloc_size") != std::string::npos);
  CHECK(invalid_argument_message([&] {
          Pool(host, 1000, 64, 2048);
        }).find("min_superblock_size = 2048 by default") != std::string::npos);
  CHECK(invalid_argument_message([&] {
          Pool(host, 1 << 24, 8, 64, 1 << 20);
        }).find("superblock size / smallest block <= 32768") != std::string::npos);
}

TEST_CASE("MemoryPool.allocate_block_size") {
  Pool pool(weft::HostSpace{}, 1 << 20);
  CHECK(pool.allocate_block_size(0) == 0);
  CHECK(pool.allocate_block_size(1) == 64);
  CHECK(pool.allocate_block_size(64) == 64);
  CHECK(pool.allocate_block_size(65) == 128);
  CHECK(pool.allocate_block_size(1000) == 1024);
  CHECK(pool.allocate_block_size(4096) == 4096);
  CHECK(pool.allocate_block_size(4097) == 0);
}

TEST_CASE("MemoryPool.requests_it_cannot_serve") {
  Pool pool(weft::HostSpace{}, 1 << 20);
  CHECK(pool.allocate(0) == nullptr);
  CHECK(pool.allocate(4097) == nullptr);  // over the largest block: never served
  CHECK(pool.allocate(std::size_t{1} << 40) == nullptr);
  CHECK(pool.get_usage_statistics().consumed_blocks == 0);

  Pool empty;  // default constructed: nothing to hand out
  CHECK(empty.capacity() == 0);
  CHECK(empty.allocate(8) == nullptr);
  CHECK(empty.get_usage_statistics().superblocks == 0);
}

TEST_CASE("MemoryPool.sizes_near_the_top_of_size_t_fail_cleanly") {
  // Huge requests are never served, never wrap into a small block, and leave
  // the pool as it was.
  Pool pool(weft::HostSpace{}, 1 << 20);
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  for (const std::size_t size : {max, max - 1, max - 63, max / 2 + 1, std::size_t{1} << 63}) {
    CHECK(pool.allocate(size) == nullptr);
    CHECK(pool.allocate(size, 1000) == nullptr);
    CHECK(pool.allocate_block_size(size) == 0);
  }
  CHECK(pool.get_usage_statistics().consumed_blocks == 0);
  void* block = pool.allocate(100);
  REQUIRE(block != nullptr);
  CHECK(invalid_argument_message([&] { pool.deallocate(block, max); }).find("the size does not fit") !=
        std::string::npos);
  pool.deallocate(block, 100);  // the refused free changed nothing
  CHECK(pool.get_usage_statistics().consumed_blocks == 0);

  // A pool whose own sizes cannot be is refused when it is made.
  const weft::HostSpace host;
  CHECK(invalid_argument_message([&] {
          Pool(host, max);
        }).find("min_total_alloc_size to fit the address space") != std::string::npos);
  CHECK(invalid_argument_message([&] {
          Pool(host, max, 64, 4096, max);
        }).find("min_superblock_size <= 2^40") != std::string::npos);
}

TEST_CASE("MemoryPool.blocks_are_aligned_and_disjoint") {
  Pool pool(weft::HostSpace{}, 1 << 20);
  std::vector<std::pair<std::byte*, std::size_t>> blocks;
  for (std::size_t size : {1, 8, 63, 64, 65, 200, 256, 1000, 2048, 3000, 4096}) {
    for (int i = 0; i < 5; ++i) {
      auto* p = static_cast<std::byte*>(pool.allocate(size));
      REQUIRE(p != nullptr);
      const std::size_t block = pool.allocate_block_size(size);
      CHECK(reinterpret_cast<std::uintptr_t>(p) % block == 0);
      CHECK(pool.owns(p));
      blocks.emplace_back(p, block);
    }
  }
  std::sort(blocks.begin(), blocks.end());
  for (std::size_t i = 1; i < blocks.size(); ++i)
    CHECK(blocks[i - 1].first + blocks[i - 1].second <= blocks[i].first);
}

TEST_CASE("MemoryPool.exhaustion_and_full_recovery") {
  // 16 superblocks of 4096 bytes: 1024 blocks of 64 bytes in all.
  Pool pool(weft::HostSpace{}, 16 * 4096);
  std::vector<void*> blocks;
  while (void* p = pool.allocate(64)) blocks.push_back(p);
  CHECK(blocks.size() == 1024);
  CHECK(pool.allocate(64) == nullptr);
  CHECK(pool.allocate(64, 10) == nullptr);  // more attempts do not conjure memory
  CHECK(pool.allocate(4096) == nullptr);
  weft::MemoryPoolStatistics s = pool.get_usage_statistics();
  CHECK(s.full_superblocks == 16);
  CHECK(s.consumed_blocks == 1024);
  CHECK(s.consumed_bytes == 16 * 4096);
  CHECK(s.reserved_bytes == 16 * 4096);

  for (void* p : blocks) pool.deallocate(p, 64);
  s = pool.get_usage_statistics();
  CHECK(s.empty_superblocks == 16);
  CHECK(s.consumed_blocks == 0);
  CHECK(s.reserved_bytes == 0);

  // Fully usable again, and for another size: every superblock gets reassigned.
  std::vector<void*> big;
  while (void* p = pool.allocate(4096)) big.push_back(p);
  CHECK(big.size() == 16);
  CHECK(pool.get_usage_statistics().full_superblocks == 16);
  for (void* p : big) pool.deallocate(p, 4096);
  CHECK(pool.get_usage_statistics().empty_superblocks == 16);
}

TEST_CASE("MemoryPool.empty_superblocks_are_reassigned") {
  Pool pool(weft::HostSpace{}, 4 * 4096);
  std::vector<void*> small;
  while (void* p = pool.allocate(64)) small.push_back(p);
  REQUIRE(small.size() == 4 * 64);
  CHECK(pool.allocate(1024) == nullptr);  // no empty superblock, none larger

  // Empty exactly one superblock: the 64 blocks that share one.
  auto* first = static_cast<std::byte*>(small.front());
  std::vector<void*> same_superblock, rest;
  const std::uintptr_t target = reinterpret_cast<std::uintptr_t>(first) / 4096;
  for (void* p : small)
    (reinterpret_cast<std::uintptr_t>(p) / 4096 == target ? same_superblock : rest).push_back(p);
  REQUIRE(same_superblock.size() == 64);
  for (void* p : same_superblock) pool.deallocate(p, 64);
  CHECK(pool.get_usage_statistics().empty_superblocks == 1);

  // Now it serves another size: four 1024-byte blocks, all in that superblock.
  std::vector<void*> large;
  while (void* p = pool.allocate(1024)) large.push_back(p);
  CHECK(large.size() == 4);
  for (void* p : large) CHECK(reinterpret_cast<std::uintptr_t>(p) / 4096 == target);
  const weft::MemoryPoolStatistics s = pool.get_usage_statistics();
  CHECK(s.full_superblocks == 4);
  CHECK(s.consumed_blocks == 3 * 64 + 4);
  CHECK(s.consumed_bytes == 3 * 4096 + 4 * 1024);
  for (void* p : large) pool.deallocate(p, 1024);
  for (void* p : rest) pool.deallocate(p, 64);
  CHECK(pool.get_usage_statistics().empty_superblocks == 4);
}

TEST_CASE("MemoryPool.larger_block_fallback") {
  // Two superblocks: one gets 1024-byte blocks, the other fills with 64-byte
  // ones; the next 64-byte request can only be served by a 1024-byte block.
  Pool pool(weft::HostSpace{}, 2 * 4096, 64, 1024, 4096);
  void* big = pool.allocate(1024);
  REQUIRE(big != nullptr);
  std::vector<void*> small;
  for (int i = 0; i < 64; ++i) {
    void* p = pool.allocate(64);
    REQUIRE(p != nullptr);
    small.push_back(p);
  }
  void* fallback = pool.allocate(64);
  REQUIRE(fallback != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(fallback) / 4096 == reinterpret_cast<std::uintptr_t>(big) / 4096);
  CHECK(reinterpret_cast<std::uintptr_t>(fallback) % 1024 == 0);
  weft::MemoryPoolStatistics s = pool.get_usage_statistics();
  CHECK(s.consumed_blocks == 66);
  CHECK(s.consumed_bytes == 2 * 1024 + 64 * 64);
  CHECK(s.full_superblocks == 1);
  CHECK(s.partly_full_superblocks == 1);
  pool.deallocate(fallback, 64);  // freed with the size that was asked for
  pool.deallocate(big, 1024);
  for (void* p : small) pool.deallocate(p, 64);
  s = pool.get_usage_statistics();
  CHECK(s.consumed_blocks == 0);
  CHECK(s.empty_superblocks == 2);
}

TEST_CASE("MemoryPool.single_block_size_tuning") {
  // Report section 2.5.4: min = max block and total = superblock gives one
  // superblock with one bitset.
  Pool pool(weft::HostSpace{}, 4096, 256, 256, 4096);
  CHECK(pool.superblock_count() == 1);
  std::set<void*> blocks;
  while (void* p = pool.allocate(200)) blocks.insert(p);
  CHECK(blocks.size() == 16);
  CHECK(pool.allocate(100) == nullptr);
  for (void* p : blocks) pool.deallocate(p, 200);
  CHECK(pool.allocate(256) != nullptr);
}

TEST_CASE("MemoryPool.large_superblocks") {
  // 1 MiB superblocks of 64-byte blocks: 16384 blocks, a 256-word bitset.
  Pool pool(weft::HostSpace{}, 4 << 20, 64, 4096, 1 << 20);
  CHECK(pool.superblock_count() == 4);
  std::vector<void*> blocks;
  while (void* p = pool.allocate(64)) blocks.push_back(p);
  CHECK(blocks.size() == 4 * 16384);
  std::sort(blocks.begin(), blocks.end());
  CHECK(std::adjacent_find(blocks.begin(), blocks.end()) == blocks.end());
  for (void* p : blocks) pool.deallocate(p, 64);
  CHECK(pool.get_usage_statistics().empty_superblocks == 4);
  std::vector<void*> pages;
  while (void* p = pool.allocate(4096)) pages.push_back(p);
  CHECK(pages.size() == 4 * 256);
  for (void* p : pages) pool.deallocate(p, 4096);
}

TEST_CASE("MemoryPool.bad_deallocation_is_reported_and_changes_nothing") {
  Pool pool(weft::HostSpace{}, 64 * 1024);
  auto* block = static_cast<std::byte*>(pool.allocate(200));  // a 256-byte block
  REQUIRE(block != nullptr);
  const weft::MemoryPoolStatistics before = pool.get_usage_statistics();

  int on_stack = 0;
  CHECK(invalid_argument_message([&] {
          pool.deallocate(&on_stack, sizeof on_stack);
        }).find("not inside this pool") != std::string::npos);
  CHECK(invalid_argument_message([&] {
          pool.deallocate(block + 64, 64);
        }).find("not at the start of a block") != std::string::npos);
  CHECK(invalid_argument_message([&] {
          pool.deallocate(block, 300);
        }).find("does not fit the 256-byte block") != std::string::npos);
  CHECK(invalid_argument_message([&] { pool.deallocate(block, 0); }).find("does not fit") !=
        std::string::npos);
  // A neighbouring block in the same superblock, never handed out.
  std::byte* neighbour = reinterpret_cast<std::uintptr_t>(block) % 4096 == 0 ? block + 256 : block - 256;
  CHECK(invalid_argument_message([&] { pool.deallocate(neighbour, 200); }).find("is not allocated") !=
        std::string::npos);
  const weft::MemoryPoolStatistics after = pool.get_usage_statistics();
  CHECK(after.consumed_blocks == before.consumed_blocks);
  CHECK(after.consumed_bytes == before.consumed_bytes);

  pool.deallocate(nullptr, 10);  // ignored, as free(nullptr)
  pool.deallocate(block, 200);
  CHECK(invalid_argument_message([&] { pool.deallocate(block, 200); }).find("freed twice") !=
        std::string::npos);
  CHECK(pool.get_usage_statistics().consumed_blocks == 0);

  // The handle reports the same problems as values.
  const weft::MemoryPoolHandle handle = pool.handle();
  CHECK(handle.try_deallocate(block, 200) == weft::DeallocateStatus::not_allocated);
  CHECK(handle.try_deallocate(&on_stack, 4) == weft::DeallocateStatus::outside_pool);
}

TEST_CASE("MemoryPool.move_keeps_handles_valid") {
  Pool first(weft::HostSpace{}, 64 * 1024);
  const weft::MemoryPoolHandle handle = first.handle();
  void* p = handle.allocate(100);
  REQUIRE(p != nullptr);
  Pool second = std::move(first);
  CHECK(first.capacity() == 0);  // a moved-from pool is empty
  CHECK(first.allocate(8) == nullptr);
  CHECK(second.owns(p));
  CHECK(second.get_usage_statistics().consumed_blocks == 1);
  second.deallocate(p, 100);
  CHECK(second.get_usage_statistics().consumed_blocks == 0);
}

TEST_CASE("MemoryPool.host_pinned_space") {
  // Page-locked when a GPU is present, plain host memory otherwise: the pool
  // works the same either way.
  weft::MemoryPool<weft::HostPinnedSpace> pool(weft::HostPinnedSpace{}, 256 * 1024);
  MESSAGE(
      "HostPinnedSpace pins memory: " << std::string(weft::HostPinnedSpace::pins_memory() ? "yes" : "no"));
  void* p = pool.allocate(3000);
  REQUIRE(p != nullptr);
  CHECK(pool.allocate_block_size(3000) == 4096);
  pool.deallocate(p, 3000);
  CHECK(pool.get_usage_statistics().consumed_blocks == 0);
}

TEST_CASE("MemoryPool.statistics_are_exact") {
  Pool pool(weft::HostSpace{}, 4 << 20);
  std::vector<std::pair<void*, std::size_t>> live;
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < 500; ++i) {
    const std::size_t size = 8 + (i * 7919) % 4089;
    void* p = pool.allocate(size);
    REQUIRE(p != nullptr);
    live.emplace_back(p, size);
    bytes += pool.allocate_block_size(size);  // a roomy pool never needs the fallback
  }
  weft::MemoryPoolStatistics s = pool.get_usage_statistics();
  CHECK(s.consumed_blocks == 500);
  CHECK(s.consumed_bytes == bytes);
  CHECK(s.empty_superblocks + s.partly_full_superblocks + s.full_superblocks == s.superblocks);
  CHECK(s.reserved_bytes == (s.partly_full_superblocks + s.full_superblocks) * s.superblock_bytes);
  for (std::size_t i = 0; i < live.size(); i += 2) pool.deallocate(live[i].first, live[i].second);
  s = pool.get_usage_statistics();
  CHECK(s.consumed_blocks == 250);
  for (std::size_t i = 1; i < live.size(); i += 2) pool.deallocate(live[i].first, live[i].second);
  s = pool.get_usage_statistics();
  CHECK(s.consumed_blocks == 0);
  CHECK(s.consumed_bytes == 0);
  CHECK(s.empty_superblocks == s.superblocks);
}

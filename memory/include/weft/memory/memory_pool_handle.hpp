// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The lock-free heart of MemoryPool: a small, trivially copyable handle that
// allocates and frees blocks from host threads or, compiled by nvcc, from GPU
// threads. It does not own memory; the MemoryPool it came from does.
//
//   weft::MemoryPool<weft::CudaSpace> pool(weft::CudaSpace(0), 64 << 20);
//   weft::MemoryPoolHandle h = pool.handle();      // copy it into a kernel
//   // in device code:
//   void* p = h.allocate(200);                      // a 256-byte block, or nullptr
//   if (p != nullptr) h.deallocate(p, 200);
//
// The algorithm is the superblock pool of the Kokkos task-DAG report (section
// 2.5): power-of-two blocks in power-of-two superblocks, each superblock with
// an assigned block size and a bitset of claimed blocks.
//
// Claiming a block: one fetch_or sets a clear bit of the superblock the
// caller's hint names; a seq_cst re-read of the superblock's header then
// confirms that the superblock still holds blocks of that size. Hints are per
// thread (a host thread's slot, a GPU warp; at most 64 rows, beyond which
// threads share) and per size, and start at superblocks spread out over the
// pool. On a miss a search runs, in the report's order of preference:
//   1. once around the pool from the hinted superblock, a block in the first
//      superblock of the size that has one;
//   2. a fresh superblock: an empty one, reassigned to the size. The pass
//      takes the first empty one it met once it has met `plenty` of them
//      (the superblock's blocks of the size, at most 64): empties are
//      plentiful, and taking one ahead keeps threads in stretches of their
//      own. Otherwise, with no room of its size anywhere, every thread tries
//      the superblocks in one order, from superblock 0, and waits out a
//      reassignment in progress there (a bounded number of looks), so
//      threads that run out together meet in one superblock instead of
//      taking one each;
//   3. only if there is no empty one either, a larger block in a partly full
//      superblock.
//
// What a failure means (the guarantee): allocate() returns nullptr only if,
// in each of its `attempt_limit` searches, every superblock it looked at
// could serve it neither from its own size, nor fresh, nor by a larger block
// at the moment it looked. A block freed in a superblock the search had
// already passed is not seen; a search still sees every block that stays
// free while it runs (unless a reassignment attempt keeps that superblock
// closed for longer than the bounded wait). A size takes a fresh superblock
// while one of its own has a free block only if its pass met `plenty` empty
// superblocks first. So once fewer than that are empty, sizes fill the room
// they have before taking more, and requests that fill a pool exactly are
// all served (Kokkos' test_memory_pool_v2; tests/memory/
// memory_pool_exact_fit_test.cpp).
//
// Cost: a claim in the hinted superblock is one fetch_or and one load. A
// search that finds room or `plenty` empties on its way stops there, so a
// fresh superblock costs at most about one header read per block it holds.
// Only when few superblocks are empty does a search look at every header
// (twice, the second time in the common order), as the report's does.
//
// Reassigning an empty superblock: a CAS closes its header, a scan checks
// every claimed bit is clear, an exchange reopens it with the new size. The
// closed state is what makes this safe without a claimed-block counter: a
// claimer sets its bit (seq_cst) then re-reads the header (seq_cst); the
// reassigner closes the header (seq_cst) then reads the bits (seq_cst). In the
// single order of seq_cst operations one of the two comes second and sees the
// other: either the reassigner sees the bit and gives up, or the claimer sees
// the closed or changed header and gives its bit back. A claimer that finds
// the same open header it started from cannot have been overtaken by a
// completed reassignment, since that reassignment's scan would have seen its
// bit. So a pair allocate + deallocate is two atomic read-modify-writes.
//
// Progress: a claim retries only when another thread changed the word it
// looked at, a pass visits each superblock once, and allocate() gives up
// (nullptr) after attempt_limit searches. A superblock stays closed only for
// its reassigner's scan; the first pass skips it, the fresh pass waits for it
// a bounded number of looks (yielding on the host, sleeping briefly on a GPU),
// so a reassigner descheduled mid-scan delays others a little and blocks
// nobody.
//
// Deallocation is constant time: the pointer gives the superblock and the
// block, one fetch_and clears the bit. The pointer and size are checked first
// in every build type (a few compares): a pointer outside the pool, one that
// is not the start of a block, a size that does not fit the block, or a block
// that is not allocated (freed twice) is reported and changes nothing. On the
// host deallocate() throws std::invalid_argument; on the GPU it prints the
// reason and traps. A size smaller than the request but fitting the same block
// is not detected (the larger-block fallback makes it legitimate), nor is a
// double free of a block that someone else has been handed since.
#pragma once

#include <weft/backends/host_device.hpp>
#include <weft/memory/memory_pool_geometry.hpp>
#include <weft/memory/portable_atomic.hpp>
#include <weft/memory/thread_slot.hpp>

#include <cstddef>
#include <cstdint>
#if defined(__CUDA_ARCH__)
#include <cstdio>
#else
#include <thread>
#endif

namespace weft {

enum class DeallocateStatus {
  ok,             // freed (or a null pointer, which is ignored)
  outside_pool,   // the pointer is not inside this pool's superblocks
  not_a_block,    // inside the pool but not the start of a block
  wrong_size,     // zero, or larger than the block at that address
  not_allocated,  // the block is not allocated: freed twice, or never handed out
};

const char* to_string(DeallocateStatus status) noexcept;

namespace detail {

inline constexpr std::uint64_t kHeaderSizeMask = 0xff;  // log2(block size) + 1; 0: never assigned
inline constexpr std::uint64_t kHeaderClosed = 0x100;   // a reassignment is checking that it is empty
inline constexpr std::uint32_t kNoSuperblock = 0xffffffffu;

WEFT_HOST_DEVICE constexpr std::uint64_t open_header(unsigned lg2) noexcept { return lg2 + 1u; }

WEFT_HOST_DEVICE inline unsigned count_trailing_zeros(std::uint64_t x) noexcept {  // x != 0
#if defined(__CUDA_ARCH__)
  return static_cast<unsigned>(__ffsll(static_cast<long long>(x)) - 1);
#else
  return static_cast<unsigned>(__builtin_ctzll(x));
#endif
}

WEFT_HOST_DEVICE inline unsigned count_leading_zeros(std::uint64_t x) noexcept {  // x != 0
#if defined(__CUDA_ARCH__)
  return static_cast<unsigned>(__clzll(static_cast<long long>(x)));
#else
  return static_cast<unsigned>(__builtin_clzll(x));
#endif
}

WEFT_HOST_DEVICE inline unsigned population_count(std::uint64_t x) noexcept {
#if defined(__CUDA_ARCH__)
  return static_cast<unsigned>(__popcll(x));
#else
  return static_cast<unsigned>(__builtin_popcountll(x));
#endif
}

// Smallest n with 2^n >= x, for x >= 1.
WEFT_HOST_DEVICE inline unsigned ceil_log2(std::uint64_t x) noexcept {
  return x <= 1 ? 0u : 64u - count_leading_zeros(x - 1);
}

WEFT_HOST_DEVICE inline std::uint64_t rotate_right(std::uint64_t x, unsigned r) noexcept {  // r < 64
  return (x >> r) | (x << ((64u - r) & 63u));
}

// Which bitset words and bits a superblock of `lg2`-sized blocks uses.
struct BlockBits {
  std::uint32_t words;  // words in use (a power of two)
  std::uint64_t valid;  // bits in use in each of them
};

WEFT_HOST_DEVICE inline BlockBits block_bits(const PoolGeometry& g, unsigned lg2) noexcept {
  const unsigned blocks_lg2 = g.superblock_lg2 - lg2;
  if (blocks_lg2 >= 6) return {1u << (blocks_lg2 - 6), ~std::uint64_t{0}};
  return {1u, (std::uint64_t{1} << (1u << blocks_lg2)) - 1};
}

#if defined(__CUDACC__)
__device__ inline const char* describe_on_device(DeallocateStatus status) noexcept {
  switch (status) {
    case DeallocateStatus::ok:
      return "ok";
    case DeallocateStatus::outside_pool:
      return "the pointer is outside the pool";
    case DeallocateStatus::not_a_block:
      return "the pointer is not the start of a block";
    case DeallocateStatus::wrong_size:
      return "the size does not fit the block";
    case DeallocateStatus::not_allocated:
      return "the block is not allocated (freed twice?)";
  }
  return "unknown";
}
#endif

// Host side of deallocate()'s error report (out of line: it builds a message).
[[noreturn]] void throw_bad_deallocate(DeallocateStatus status, const void* ptr, std::size_t size,
                                       std::size_t block_size, const void* begin, const void* end);

}  // namespace detail

class MemoryPoolHandle {
 public:
  // An empty handle: every allocation returns nullptr.
  MemoryPoolHandle() = default;
  // Used by MemoryPool: `metadata` is laid out as detail::PoolGeometry says.
  MemoryPoolHandle(const detail::PoolGeometry& geometry, void* data, void* metadata) noexcept
      : g_(geometry),
        data_(static_cast<std::byte*>(data)),
        states_(static_cast<std::uint64_t*>(metadata)),
        hints_(reinterpret_cast<std::uint32_t*>(static_cast<std::byte*>(metadata) + geometry.state_bytes())) {
  }

  // A block of at least `size` bytes, or nullptr when size is 0, when size is
  // larger than max_block_size(), or when `attempt_limit` searches (at least
  // one) found no superblock able to serve it.
  WEFT_HOST_DEVICE void* allocate(std::size_t size, int attempt_limit = 1) const noexcept {
    using detail::MemoryOrder;
    if (size - 1 >= g_.max_block_bytes) return nullptr;  // also size == 0, which wraps around
    const unsigned lg2 = block_lg2(size);
    const Slot slot = current_slot();
    // This thread's hint pair for the size: a superblock, and the bitset word there to try first.
    std::uint32_t* hint =
        hints_ + static_cast<std::size_t>(slot.row) * g_.hint_stride + 2 * (lg2 - g_.min_lg2);
    // relaxed (all three): a hint is advice and the header a first look;
    // take() re-checks what it relies on with seq_cst.
    const std::uint32_t superblock = detail::atomic_load(hint, MemoryOrder::relaxed);
    const std::uint32_t word_index = detail::atomic_load(hint + 1, MemoryOrder::relaxed);
    std::uint64_t* state = state_of(superblock);
    const std::uint64_t header = detail::atomic_load(state, MemoryOrder::relaxed);
    if (header == detail::open_header(lg2)) {
      // The common case, kept short: one free bit in the hinted word.
      const detail::BlockBits bits = detail::block_bits(g_, lg2);
      const std::uint32_t w = word_index & (bits.words - 1);
      std::uint64_t* word = state + 1 + w;
      // relaxed: only picks a candidate bit; take() decides who gets it.
      const std::uint64_t free_bits = ~detail::atomic_load(word, MemoryOrder::relaxed) & bits.valid;
      if (free_bits != 0) {
        const unsigned bit = pick_bit(free_bits, slot);
        if (take(state, header, word, bit) == Take::taken) return block_address(superblock, w, bit, lg2);
      }
    }
    return allocate_slowly(lg2, slot, hint, attempt_limit);
  }

  // Frees a block from allocate(ptr's size). A null pointer is ignored. Bad
  // input is reported (see the header comment) and changes nothing.
  WEFT_HOST_DEVICE void deallocate(void* ptr, std::size_t size) const {
    const DeallocateStatus status = try_deallocate(ptr, size);
    if (status != DeallocateStatus::ok) report(status, ptr, size);
  }

  // As deallocate(), but returns what was wrong instead of reporting it.
  WEFT_HOST_DEVICE DeallocateStatus try_deallocate(void* ptr, std::size_t size) const noexcept {
    if (ptr == nullptr) return DeallocateStatus::ok;
    const std::size_t offset = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(ptr) -
                                                        reinterpret_cast<std::uintptr_t>(data_));
    if (data_ == nullptr || offset >= g_.capacity) return DeallocateStatus::outside_pool;
    std::uint64_t* state = state_of(static_cast<std::uint32_t>(offset >> g_.superblock_lg2));
    // relaxed: while the caller's block is claimed its superblock cannot be
    // reassigned, so the size read here is the one take() confirmed.
    const unsigned assigned = static_cast<unsigned>(detail::atomic_load(state, detail::MemoryOrder::relaxed) &
                                                    detail::kHeaderSizeMask);
    if (assigned == 0) return DeallocateStatus::not_a_block;
    const unsigned lg2 = assigned - 1;
    const std::size_t within = offset & ((std::size_t{1} << g_.superblock_lg2) - 1);
    if ((within & ((std::size_t{1} << lg2) - 1)) != 0) return DeallocateStatus::not_a_block;
    if (size == 0 || size > (std::size_t{1} << lg2)) return DeallocateStatus::wrong_size;
    const std::size_t index = within >> lg2;
    const std::uint64_t mask = std::uint64_t{1} << (index & 63);
    // release: pairs with the acquire half of the seq_cst fetch_or in take():
    // everything the caller did with the block happens before its next owner's use.
    const std::uint64_t before =
        detail::atomic_fetch_and(state + 1 + (index >> 6), ~mask, detail::MemoryOrder::release);
    return (before & mask) != 0 ? DeallocateStatus::ok : DeallocateStatus::not_allocated;
  }

  // The block size allocate(size) would claim (a larger one only through the
  // fallback), or 0 when allocate(size) returns nullptr for any pool state.
  WEFT_HOST_DEVICE std::size_t allocate_block_size(std::size_t size) const noexcept {
    if (size == 0 || size > g_.max_block_bytes) return 0;
    return std::size_t{1} << block_lg2(size);
  }

  WEFT_HOST_DEVICE std::size_t capacity() const noexcept { return g_.capacity; }
  WEFT_HOST_DEVICE std::size_t min_block_size() const noexcept {
    return g_.capacity == 0 ? 0 : std::size_t{1} << g_.min_lg2;
  }
  WEFT_HOST_DEVICE std::size_t max_block_size() const noexcept { return g_.max_block_bytes; }
  WEFT_HOST_DEVICE std::size_t superblock_size() const noexcept {
    return g_.capacity == 0 ? 0 : std::size_t{1} << g_.superblock_lg2;
  }
  WEFT_HOST_DEVICE std::uint32_t superblock_count() const noexcept { return g_.superblock_count; }
  WEFT_HOST_DEVICE bool owns(const void* ptr) const noexcept {
    return data_ != nullptr &&
           static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(ptr) -
                                    reinterpret_cast<std::uintptr_t>(data_)) < g_.capacity;
  }

  const detail::PoolGeometry& geometry() const noexcept { return g_; }
  const void* metadata() const noexcept { return states_; }

 private:
  struct Slot {
    std::uint32_t row;    // hint row and search start
    std::uint32_t probe;  // GPU: first bit tried in a word, so the lanes of a warp try different bits
  };

  WEFT_HOST_DEVICE Slot current_slot() const noexcept {
    const std::uint32_t row_mask = g_.hint_rows() - 1;
#if defined(__CUDA_ARCH__)
    // One row per warp; lanes start at different bits.
    const std::uint32_t block_threads = blockDim.x * blockDim.y * blockDim.z;
    const std::uint32_t thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const std::uint32_t block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const std::uint32_t warp = block * ((block_threads + 31) / 32) + thread / 32;
    return {warp & row_mask, (thread & 31u) * 2u};
#else
    return {detail::host_thread_slot() & row_mask, 0u};
#endif
  }

  WEFT_HOST_DEVICE unsigned block_lg2(std::size_t size) const noexcept {
    const unsigned lg2 = detail::ceil_log2(size);
    return lg2 < g_.min_lg2 ? g_.min_lg2 : lg2;
  }

  WEFT_HOST_DEVICE std::uint64_t* state_of(std::uint32_t superblock) const noexcept {
    return states_ + static_cast<std::size_t>(superblock) * g_.state_words;
  }

  WEFT_HOST_DEVICE void* block_address(std::uint32_t superblock, std::uint32_t word, unsigned bit,
                                       unsigned lg2) const noexcept {
    return data_ + (static_cast<std::size_t>(superblock) << g_.superblock_lg2) +
           ((static_cast<std::size_t>(word) * 64 + bit) << lg2);
  }

  // A free bit of `free_bits` (non-zero). GPU lanes start looking at
  // different bits, so the lanes of a warp rarely want the same one.
  WEFT_HOST_DEVICE static unsigned pick_bit(std::uint64_t free_bits, Slot slot) noexcept {
#if defined(__CUDA_ARCH__)
    return (detail::count_trailing_zeros(detail::rotate_right(free_bits, slot.probe)) + slot.probe) & 63u;
#else
    (void)slot;  // host threads rarely share a word (own hints and start points): lowest bit
    return detail::count_trailing_zeros(free_bits);
#endif
  }

  enum class Take { taken, bit_was_taken, superblock_changed };

  // Sets `bit` of `word` in the superblock whose header was `header`, and
  // confirms the header did not change meanwhile (see the header comment).
  WEFT_HOST_DEVICE Take take(std::uint64_t* state, std::uint64_t header, std::uint64_t* word,
                             unsigned bit) const noexcept {
    using detail::MemoryOrder;
    const std::uint64_t mask = std::uint64_t{1} << bit;
    // seq_cst: its acquire half pairs with the release fetch_and in
    // try_deallocate() (the block's previous owner is done with it); as a
    // seq_cst write it pairs with the seq_cst bitset scan in reassign().
    if ((detail::atomic_fetch_or(word, mask, MemoryOrder::seq_cst) & mask) != 0) return Take::bit_was_taken;
    // seq_cst: pairs with the seq_cst close CAS in reassign() (see the header
    // comment); its acquire half pairs with the release exchange that opened
    // the superblock for this size, so the frees that reassignment saw happen
    // before our use of the memory.
    if (detail::atomic_load(state, MemoryOrder::seq_cst) == header) return Take::taken;
    // Closed or reassigned meanwhile: give the bit back. relaxed: the block
    // was never used; the RMW keeps the word's release sequences intact.
    detail::atomic_fetch_and(word, ~mask, MemoryOrder::relaxed);
    return Take::superblock_changed;
  }

  // Claims a free block in `superblock` if it holds `lg2`-sized blocks,
  // trying bitset word `first_word` first; records in `word_hint` (when not
  // null) the word it succeeded in, if that was another one.
  WEFT_HOST_DEVICE void* claim(std::uint32_t superblock, unsigned lg2, Slot slot, std::uint32_t first_word,
                               std::uint32_t* word_hint) const noexcept {
    using detail::MemoryOrder;
    std::uint64_t* state = state_of(superblock);
    // relaxed: a first look; take() re-reads it with seq_cst.
    const std::uint64_t header = detail::atomic_load(state, MemoryOrder::relaxed);
    if (header != detail::open_header(lg2)) return nullptr;
    const detail::BlockBits bits = detail::block_bits(g_, lg2);
    for (std::uint32_t i = 0; i < bits.words; ++i) {
      const std::uint32_t w = (first_word + i) & (bits.words - 1);
      std::uint64_t* word = state + 1 + w;
      // relaxed (both loads): only pick candidate bits; take() decides.
      for (std::uint64_t free_bits = ~detail::atomic_load(word, MemoryOrder::relaxed) & bits.valid;
           free_bits != 0; free_bits = ~detail::atomic_load(word, MemoryOrder::relaxed) & bits.valid) {
        const unsigned bit = pick_bit(free_bits, slot);
        const Take result = take(state, header, word, bit);
        if (result == Take::superblock_changed) return nullptr;
        if (result == Take::taken) {
          // relaxed: advice for this thread's next claim.
          if (i != 0 && word_hint != nullptr) detail::atomic_store(word_hint, w, MemoryOrder::relaxed);
          return block_address(superblock, w, bit, lg2);
        }
      }
    }
    return nullptr;
  }

  // Reassigns `superblock`, last seen with header `seen`, to `lg2`-sized
  // blocks if it is empty. False if it was not, or if its header moved on.
  WEFT_HOST_DEVICE bool reassign(std::uint32_t superblock, std::uint64_t seen, unsigned lg2) const noexcept {
    using detail::MemoryOrder;
    std::uint64_t* state = state_of(superblock);
    std::uint64_t expected = seen;
    // seq_cst: pairs with the seq_cst fetch_or and header re-read in take().
    if (!detail::atomic_compare_exchange(state, expected, seen | detail::kHeaderClosed,
                                         MemoryOrder::seq_cst)) {
      return false;
    }
    for (std::uint32_t w = 0; w < g_.bitset_words; ++w) {
      // seq_cst: the other half of the pairing with take(); its acquire half
      // pairs with the release fetch_and of every earlier free in this word.
      if (detail::atomic_load(state + 1 + w, MemoryOrder::seq_cst) != 0) {
        // Not empty: reopen unchanged. relaxed: nothing changed; an RMW keeps
        // the header's release sequence unbroken for later acquirers.
        detail::atomic_exchange(state, seen, MemoryOrder::relaxed);
        return false;
      }
    }
    // release: pairs with the seq_cst (acquire) header re-read in take().
    detail::atomic_exchange(state, detail::open_header(lg2), MemoryOrder::release);
    return true;
  }

  // True if a superblock with header size field `assigned` shows no claimed bit.
  WEFT_HOST_DEVICE bool looks_empty(const std::uint64_t* state, unsigned assigned) const noexcept {
    const std::uint32_t words = assigned == 0 ? g_.bitset_words : detail::block_bits(g_, assigned - 1).words;
    for (std::uint32_t w = 0; w < words; ++w) {
      // relaxed: a snapshot; reassign() checks again with the header closed.
      if (detail::atomic_load(state + 1 + w, detail::MemoryOrder::relaxed) != 0) return false;
    }
    return true;
  }

  WEFT_HOST_DEVICE bool has_free_block(const std::uint64_t* state, unsigned lg2) const noexcept {
    const detail::BlockBits bits = detail::block_bits(g_, lg2);
    for (std::uint32_t w = 0; w < bits.words; ++w) {
      // relaxed: a snapshot; take() decides.
      if ((~detail::atomic_load(state + 1 + w, detail::MemoryOrder::relaxed) & bits.valid) != 0) return true;
    }
    return false;
  }

  // Everything allocate() does beyond its first try: `attempt_limit` searches
  // (at least one), the first of which starts with the rest of the hinted
  // superblock. Out of line, so the common path stays small enough to inline.
  [[gnu::noinline]] WEFT_HOST_DEVICE void* allocate_slowly(unsigned lg2, Slot slot, std::uint32_t* hint,
                                                           int attempt_limit) const noexcept {
    const int attempts = attempt_limit > 0 ? attempt_limit : 1;
    for (int attempt = 0; attempt < attempts; ++attempt) {
      if (void* block = search(lg2, slot, hint)) return block;
    }
    return nullptr;
  }

  // One search (see the header comment): a pass from the hinted superblock
  // for room among the superblocks of this size, then a fresh superblock,
  // then a larger block. `hint` is this thread's hint pair for lg2
  // (superblock, word).
  WEFT_HOST_DEVICE void* search(unsigned lg2, Slot slot, std::uint32_t* hint) const noexcept {
    const std::uint32_t count = g_.superblock_count;
    // relaxed (both): advice (see allocate()).
    std::uint32_t superblock = detail::atomic_load(hint, detail::MemoryOrder::relaxed);
    const std::uint32_t word = detail::atomic_load(hint + 1, detail::MemoryOrder::relaxed);
    const std::uint32_t plenty = plenty_of_empties(lg2);
    std::uint32_t first_empty = detail::kNoSuperblock;
    std::uint32_t empties = 0;
    std::uint32_t larger = detail::kNoSuperblock;
    unsigned larger_lg2 = 0;
    void* block = nullptr;
    for (std::uint32_t visited = 0; visited < count && block == nullptr && empties < plenty; ++visited) {
      const std::uint64_t* state = state_of(superblock);
      // relaxed: classifies the superblock; take() and reassign() re-check.
      const std::uint64_t header = detail::atomic_load(state, detail::MemoryOrder::relaxed);
      const unsigned assigned = static_cast<unsigned>(header & detail::kHeaderSizeMask);
      if ((header & detail::kHeaderClosed) == 0) {
        if (assigned == lg2 + 1) {
          block = claim(superblock, lg2, slot, word, hint + 1);
          // A reassignment attempt closed it under the claim: look again
          // once it settles rather than pass room by.
          if (block == nullptr && detail::atomic_load(state, detail::MemoryOrder::relaxed) != header) {
            block = claim_when_settled(superblock, lg2, slot, word, hint + 1);
          }
        } else if (looks_empty(state, assigned)) {
          if (first_empty == detail::kNoSuperblock) first_empty = superblock;
          ++empties;
        } else if (assigned > lg2 + 1 && larger == detail::kNoSuperblock &&
                   has_free_block(state, assigned - 1)) {
          larger = superblock;
          larger_lg2 = assigned - 1;
        }
      }
      if (block == nullptr) superblock = superblock + 1 == count ? 0 : superblock + 1;
    }
    if (block == nullptr && empties >= plenty) {
      // Empty superblocks are plentiful: take the first one met, which keeps
      // threads in their own stretches and the search short.
      superblock = first_empty;
      block = claim_when_settled(first_empty, lg2, slot, word, hint + 1);
    }
    // Few are empty (or the one met was taken meanwhile): try them in one
    // order for every thread, so threads that run out of a size together
    // meet in one superblock instead of taking one each.
    for (std::uint32_t s = 0; s < count && block == nullptr; ++s) {
      superblock = s;
      block = claim_when_settled(s, lg2, slot, word, hint + 1);
    }
    if (block != nullptr) {
      // relaxed: the hint is advice, read with relaxed loads.
      if (detail::atomic_load(hint, detail::MemoryOrder::relaxed) != superblock) {
        detail::atomic_store(hint, superblock, detail::MemoryOrder::relaxed);
      }
      return block;
    }
    // The hint stays: it names superblocks of lg2-sized blocks.
    return larger != detail::kNoSuperblock ? claim(larger, larger_lg2, slot, word, nullptr) : nullptr;
  }

  // How many empty superblocks a pass must meet before it takes the first of
  // them rather than look on for room of its size: the superblock's blocks
  // of that size, at most 64. So a fresh superblock costs at most about one
  // header read per block it holds, and a size whose block fills a superblock
  // takes the first empty one at once (it has no partly full ones).
  WEFT_HOST_DEVICE std::uint32_t plenty_of_empties(unsigned lg2) const noexcept {
    const unsigned blocks_lg2 = g_.superblock_lg2 - lg2;
    return std::uint32_t{1} << (blocks_lg2 < 6 ? blocks_lg2 : 6);
  }

  // A block of `superblock` if it holds lg2-sized blocks with room or is
  // empty (then reassigned to lg2 first), else nullptr. It waits out a
  // reassignment in progress there (a bounded number of looks), since that
  // reassignment may be opening the superblock for this very size.
  WEFT_HOST_DEVICE void* claim_when_settled(std::uint32_t superblock, unsigned lg2, Slot slot,
                                            std::uint32_t word, std::uint32_t* word_hint) const noexcept {
    const std::uint64_t* state = state_of(superblock);
    for (int look = 0; look < kLooksAtOneSuperblock; ++look) {
      const std::uint64_t header = settled_header(state);
      if ((header & detail::kHeaderClosed) != 0) return nullptr;
      const unsigned assigned = static_cast<unsigned>(header & detail::kHeaderSizeMask);
      if (assigned == lg2 + 1) {
        if (void* block = claim(superblock, lg2, slot, word, word_hint)) return block;
        if (!has_free_block(state, lg2)) return nullptr;
      } else if (!looks_empty(state, assigned)) {
        return nullptr;
      } else if (reassign(superblock, header, lg2)) {
        if (void* block = claim(superblock, lg2, slot, word, word_hint)) return block;
      }
      // The header moved under us (closed, reopened, reassigned): look again.
    }
    return nullptr;
  }

  static constexpr int kLooksAtOneSuperblock = 4;
  static constexpr int kWaitsForReassignment = 256;

  // The superblock's header once no reassignment holds it closed, or a closed
  // header after kWaitsForReassignment waits (its reassigner may be
  // descheduled: never wait on it for long).
  WEFT_HOST_DEVICE std::uint64_t settled_header(const std::uint64_t* state) const noexcept {
    // seq_cst: reads the header the way take() does, after any close or
    // reopen this thread has already seen.
    std::uint64_t header = detail::atomic_load(state, detail::MemoryOrder::seq_cst);
    for (int wait = 0; wait < kWaitsForReassignment && (header & detail::kHeaderClosed) != 0; ++wait) {
      pause();
      header = detail::atomic_load(state, detail::MemoryOrder::seq_cst);
    }
    return header;
  }

  WEFT_HOST_DEVICE static void pause() noexcept {
#if defined(__CUDA_ARCH__)
#if __CUDA_ARCH__ >= 700
    __nanosleep(100);
#endif
#else
    std::this_thread::yield();
#endif
  }

  [[gnu::noinline]] WEFT_HOST_DEVICE void report(DeallocateStatus status, const void* ptr,
                                                 std::size_t size) const {
    std::size_t block_size = 0;
    if (owns(ptr)) {
      const std::size_t offset = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(ptr) -
                                                          reinterpret_cast<std::uintptr_t>(data_));
      const unsigned assigned = static_cast<unsigned>(
          detail::atomic_load(state_of(static_cast<std::uint32_t>(offset >> g_.superblock_lg2)),
                              detail::MemoryOrder::relaxed) &
          detail::kHeaderSizeMask);
      block_size = assigned == 0 ? 0 : std::size_t{1} << (assigned - 1);
    }
#if defined(__CUDA_ARCH__)
    std::printf("weft::MemoryPoolHandle::deallocate(%p, %llu): %s (block size %llu); trapping\n", ptr,
                static_cast<unsigned long long>(size), detail::describe_on_device(status),
                static_cast<unsigned long long>(block_size));
    __trap();
#else
    detail::throw_bad_deallocate(status, ptr, size, block_size, data_, data_ + g_.capacity);
#endif
  }

  detail::PoolGeometry g_{};
  std::byte* data_ = nullptr;
  std::uint64_t* states_ = nullptr;
  std::uint32_t* hints_ = nullptr;
};

}  // namespace weft

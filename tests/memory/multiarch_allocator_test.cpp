// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MultiarchAllocator and LinearArena: per-thread CPU arenas, per-device
// arenas, exhaustion, reset, and concurrent use of one arena.
#include <weft/memory/multiarch_allocator.hpp>

#include <weft/backends/device_registry.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

weft::MultiarchAllocatorConfig small_config(std::size_t cpu_arenas) {
  weft::MultiarchAllocatorConfig config;
  config.cpu_arenas = cpu_arenas;
  config.cpu_arena_bytes = 64 * 1024;
  config.gpu_arena_bytes = 64 * 1024;
  config.virtual_devices = 2;
  return config;
}

}  // namespace

TEST_CASE("MultiarchAllocator.cpu_arena_per_thread.2threads") {
  weft::MultiarchAllocator alloc(small_config(2));
  REQUIRE(alloc.cpu_arena_count() == 2);
  MESSAGE("CPU arenas pinned: " << std::string(alloc.cpu_memory_pinned() ? "yes" : "no"));
  weft::LinearArena* mine[2] = {nullptr, nullptr};
  std::vector<void*> blocks[2];
  auto worker = [&](int t) {
    weft::LinearArena& arena = alloc.cpu_allocator();
    mine[t] = &arena;
    for (int i = 0; i < 100; ++i) {
      void* p = alloc.cpu_allocator().allocate(100, 16);
      std::memset(p, t, 100);  // host memory: each thread writes its own allocations
      blocks[t].push_back(p);
    }
  };
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  b.join();
  CHECK(mine[0] != mine[1]);  // each thread its own arena
  for (int t = 0; t < 2; ++t) {
    for (void* p : blocks[t]) {
      CHECK(mine[t]->contains(p));
      CHECK(reinterpret_cast<std::uintptr_t>(p) % 16 == 0);
      CHECK(*static_cast<unsigned char*>(p) == t);
    }
    CHECK(mine[t]->used() >= 100 * 100);
  }
}

TEST_CASE("MultiarchAllocator.same_thread_same_arena") {
  weft::MultiarchAllocator first(small_config(3));
  weft::MultiarchAllocator second(small_config(3));
  weft::LinearArena& a = first.cpu_allocator();
  weft::LinearArena& b = second.cpu_allocator();  // moves this thread's one-entry cache on
  CHECK(&first.cpu_allocator() == &a);            // found again through the owner words
  CHECK(&second.cpu_allocator() == &b);
  CHECK(&first.cpu_allocator(0) == &first.cpu_allocator(0));
  CHECK_THROWS_AS(first.cpu_allocator(3), std::out_of_range);
}

TEST_CASE("MultiarchAllocator.threads_beyond_arenas_share.4threads") {
  weft::MultiarchAllocator alloc(small_config(2));
  std::atomic<int> done{0};
  std::vector<weft::LinearArena*> used(4, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      used[static_cast<std::size_t>(t)] = &alloc.cpu_allocator();
      for (int i = 0; i < 50; ++i) (void)alloc.cpu_allocator().allocate(64);
      ++done;
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(done == 4);
  for (weft::LinearArena* arena : used)
    CHECK((arena == &alloc.cpu_allocator(0) || arena == &alloc.cpu_allocator(1)));
  CHECK(alloc.cpu_allocator(0).used() + alloc.cpu_allocator(1).used() >= 4 * 50 * 64);
}

TEST_CASE("MultiarchAllocator.exhaustion_is_clear") {
  weft::MultiarchAllocator alloc(small_config(1));
  weft::LinearArena& arena = alloc.cpu_allocator(0);
  REQUIRE(arena.capacity() == 64 * 1024);
  void* most = arena.allocate(60 * 1024);
  REQUIRE(most != nullptr);
  const std::size_t used = arena.used();
  std::string message;
  try {
    (void)arena.allocate(8 * 1024);
  } catch (const weft::ArenaExhausted& e) {
    message = e.what();
  }
  CHECK(message.find("'cpu-0'") != std::string::npos);
  CHECK(message.find("8192 bytes") != std::string::npos);
  CHECK(message.find(std::to_string(64 * 1024 - used) + " of 65536 bytes remain") != std::string::npos);
  CHECK(arena.used() == used);  // a refused request changes nothing
  CHECK(arena.try_allocate(8 * 1024) == nullptr);
  CHECK_THROWS_AS((void)arena.allocate(8 * 1024), std::bad_alloc);  // ArenaExhausted is a bad_alloc
  CHECK(arena.allocate(0) == nullptr);
  CHECK_THROWS_AS((void)arena.allocate(16, 3), std::invalid_argument);
  CHECK(arena.allocate(arena.remaining()) != nullptr);  // exactly what remains still fits
  CHECK(arena.remaining() == 0);
}

TEST_CASE("MultiarchAllocator.arena_sizes_that_overflow_are_refused") {
  // The CPU arenas share one buffer of cpu_arenas times cpu_arena_bytes (each
  // rounded up to whole cache lines): a size that wraps is refused, not
  // turned into empty arenas.
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  weft::MultiarchAllocatorConfig config = small_config(4);
  config.cpu_arena_bytes = max - 10;
  std::string message;
  try {
    weft::MultiarchAllocator alloc(config);
  } catch (const weft::AllocationError& e) {
    message = e.what();
  }
  CHECK(message ==
        "MultiarchAllocator: 4 CPU arenas of 18446744073709551605 bytes (each rounded up to whole 64-byte "
        "lines) overflow std::size_t");
  config.cpu_arenas = std::size_t{1} << 40;
  config.cpu_arena_bytes = std::size_t{1} << 30;
  CHECK_THROWS_AS(weft::MultiarchAllocator{config}, weft::AllocationError);
}

TEST_CASE("LinearArena.requests_beyond_any_arena_fail_cleanly") {
  std::vector<std::byte> buffer(4096);
  weft::LinearArena arena("small", buffer.data(), buffer.size(), false);
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  constexpr std::size_t huge_alignment = std::size_t{1} << 63;
  CHECK(arena.try_allocate(max) == nullptr);
  CHECK(arena.try_allocate(16, huge_alignment) == nullptr);
  CHECK_THROWS_AS((void)arena.allocate(max), weft::ArenaExhausted);
  CHECK_THROWS_AS((void)arena.allocate(16, huge_alignment), weft::ArenaExhausted);
  CHECK(arena.used() == 0);
  CHECK(arena.allocate(4096, 1) == buffer.data());  // a refused request changed nothing
}

TEST_CASE("MultiarchAllocator.reset_between_runs") {
  weft::MultiarchAllocator alloc(small_config(2));
  void* first_cpu = alloc.cpu_allocator(1).allocate(1000);
  void* first_gpu = alloc.gpu_allocator(0).allocate(1000);
  (void)alloc.cpu_allocator(1).allocate(5000);
  CHECK(alloc.cpu_allocator(1).used() > 0);
  alloc.reset();
  CHECK(alloc.cpu_allocator(1).used() == 0);
  CHECK(alloc.gpu_allocator(0).used() == 0);
  CHECK(alloc.cpu_allocator(1).allocate(1000) == first_cpu);
  CHECK(alloc.gpu_allocator(0).allocate(1000) == first_gpu);
}

TEST_CASE("MultiarchAllocator.arena_per_device") {
  const weft::DeviceRegistry registry(3);
  weft::MultiarchAllocator alloc(registry, small_config(1));
  REQUIRE(alloc.device_count() == registry.device_count());
  if (registry.gpu_count() == 0) {
    MESSAGE("no GPU: arenas for 3 host virtual devices (" << registry.cuda_note() << ")");
    CHECK(alloc.device_count() == 3);
  }
  std::vector<weft::LinearArena*> arenas;
  for (int d = 0; d < alloc.device_count(); ++d) {
    weft::LinearArena& arena = alloc.gpu_allocator(d);
    CHECK(std::find(arenas.begin(), arenas.end(), &arena) == arenas.end());
    arenas.push_back(&arena);
    CHECK(arena.name().find(std::to_string(d)) != std::string::npos);
    void* p = arena.allocate(4096, 256);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % 256 == 0);
    if (!arena.device_memory()) std::memset(p, 0xab, 4096);  // host virtual device: plain host memory
  }
  std::string message;
  try {
    (void)alloc.gpu_allocator(alloc.device_count());
  } catch (const std::out_of_range& e) {
    message = e.what();
  }
  CHECK(message.find("device " + std::to_string(alloc.device_count()) + " does not exist") !=
        std::string::npos);
  CHECK_THROWS_AS((void)alloc.gpu_allocator(-1), std::out_of_range);

  weft::MultiarchAllocatorConfig none = small_config(1);
  none.virtual_devices = 0;
  none.use_cuda = false;
  weft::MultiarchAllocator cpu_only(none);
  CHECK(cpu_only.device_count() == 0);
  CHECK_THROWS_AS((void)cpu_only.gpu_allocator(0), std::out_of_range);
}

TEST_CASE("LinearArena.concurrent_allocations_are_disjoint.4threads") {
  std::vector<std::byte> buffer(1 << 20);
  weft::LinearArena arena("shared", buffer.data(), buffer.size(), false);
  std::vector<std::vector<std::pair<std::byte*, std::size_t>>> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0;; ++i) {
        const std::size_t size = 1 + (i * 37 + static_cast<std::size_t>(t)) % 200;
        auto* p = static_cast<std::byte*>(arena.try_allocate(size, 8));
        if (p == nullptr) break;  // full
        std::memset(p, t, size);
        got[static_cast<std::size_t>(t)].emplace_back(p, size);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<std::pair<std::byte*, std::size_t>> all;
  for (int t = 0; t < 4; ++t) {
    for (auto [p, size] : got[static_cast<std::size_t>(t)]) {
      CHECK(std::all_of(p, p + size, [t](std::byte b) { return b == static_cast<std::byte>(t); }));
      all.emplace_back(p, size);
    }
  }
  std::sort(all.begin(), all.end());
  for (std::size_t i = 1; i < all.size(); ++i) CHECK(all[i - 1].first + all[i - 1].second <= all[i].first);
  CHECK(arena.remaining() < 200 + 8);  // they stopped only when the arena was full
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MultiarchAllocator: linear arenas for the CPU and for each device, as in
// Ripple section 5.1, so tasks get scratch memory without malloc or cudaMalloc
// while a graph runs.
//
//   weft::MultiarchAllocator alloc({.cpu_arenas = 4, .cpu_arena_bytes = 1 << 20});
//   // in any worker thread:
//   void* tmp = alloc.cpu_allocator().allocate(4096);       // this thread's arena
//   void* dev = alloc.gpu_allocator(0).allocate(1 << 16);   // device 0's arena
//   // after the graph run, with no task running:
//   alloc.reset();
//
// CPU: one buffer holds every CPU arena. It is page-locked (cudaMallocHost)
// when the CUDA backend is compiled in and a GPU is present, so asynchronous
// copies to the GPU can use it directly; otherwise it is ordinary host memory
// (cpu_memory_pinned() says which).
//
// Which arena is "mine": the first time a thread calls cpu_allocator() on an
// allocator, it claims the first unclaimed arena (a CAS on the arena's owner
// word) and keeps it for the allocator's life; later calls find it through a
// one-entry thread-local cache, or by looking up the owner words. A thread
// arriving after every arena is claimed shares one (chosen by its thread
// number): arenas are thread safe, so sharing costs contention, not
// correctness. A worker that knows its index may call cpu_allocator(index)
// instead. Claims are not given back when a thread ends; size cpu_arenas for
// the threads that allocate (by default, one per hardware thread).
//
// Devices: one arena per device of the DeviceRegistry: device memory for CUDA
// GPUs, host memory for host virtual devices (used when there is no GPU;
// config.virtual_devices of them).
//
// Exhaustion: LinearArena::allocate throws ArenaExhausted naming the arena,
// the request and what remains; try_allocate returns nullptr. Arena sizes
// whose total (cpu_arenas x cpu_arena_bytes, each rounded up to 64 bytes)
// overflows std::size_t throw AllocationError before anything is allocated.
#pragma once

#include <weft/backends/device.hpp>
#include <weft/backends/device_registry.hpp>
#include <weft/backends/memory_space.hpp>
#include <weft/memory/linear_arena.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace weft {

struct MultiarchAllocatorConfig {
  std::size_t cpu_arenas = 0;  // 0: one per hardware thread
  std::size_t cpu_arena_bytes = std::size_t{4} << 20;
  std::size_t gpu_arena_bytes = std::size_t{64} << 20;
  int virtual_devices = 1;  // host virtual devices to provide when no GPU is used
  bool use_cuda = true;     // false: ignore GPUs even when present
};

class MultiarchAllocator {
 public:
  explicit MultiarchAllocator(const MultiarchAllocatorConfig& config = {});
  // Arenas for the devices of `devices` (config.virtual_devices and use_cuda
  // are then not used).
  MultiarchAllocator(const DeviceRegistry& devices, const MultiarchAllocatorConfig& config);
  ~MultiarchAllocator();

  MultiarchAllocator(const MultiarchAllocator&) = delete;
  MultiarchAllocator& operator=(const MultiarchAllocator&) = delete;
  MultiarchAllocator(MultiarchAllocator&&) = delete;
  MultiarchAllocator& operator=(MultiarchAllocator&&) = delete;

  // The calling thread's CPU arena (see the header comment).
  LinearArena& cpu_allocator();
  // CPU arena `index` (< cpu_arena_count()), else std::out_of_range.
  LinearArena& cpu_allocator(std::size_t index);
  // The arena of device `device` (< device_count()), else std::out_of_range.
  LinearArena& gpu_allocator(int device);

  // Empties every arena. Only between graph runs: no thread may allocate from
  // this allocator, or use memory from it, while reset() runs.
  void reset() noexcept;

  std::size_t cpu_arena_count() const noexcept { return cpu_arenas_.size(); }
  int device_count() const noexcept { return static_cast<int>(gpu_arenas_.size()); }
  const std::vector<DeviceInfo>& devices() const noexcept { return devices_; }
  bool cpu_memory_pinned() const noexcept { return cpu_pinned_; }

 private:
  void build(const MultiarchAllocatorConfig& config);
  std::size_t claim_cpu_arena(std::uint64_t thread_token);

  std::uint64_t id_;  // unique per allocator ever made: keys the thread-local cache
  std::vector<DeviceInfo> devices_;
  std::string no_device_note_;
  bool cpu_pinned_ = false;
  SpaceBuffer<HostPinnedSpace> cpu_buffer_;
  std::vector<SpaceBuffer<CudaSpace>> cuda_buffers_;
  std::vector<SpaceBuffer<HostSpace>> host_buffers_;
  std::vector<std::unique_ptr<LinearArena>> cpu_arenas_;
  std::vector<std::unique_ptr<LinearArena>> gpu_arenas_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> cpu_owners_;  // thread token per CPU arena; 0: unclaimed
};

}  // namespace weft

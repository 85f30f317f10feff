// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/memory/multiarch_allocator.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include <weft/backends/detail/checked_size.hpp>
#include <weft/backends/initial_exec_tls.hpp>

namespace weft {
namespace {

std::atomic<std::uint64_t> next_allocator_id{1};
std::atomic<std::uint64_t> next_thread_token{1};

// Tells threads apart for arena claims; never 0 (0 marks an unclaimed arena).
WEFT_INITIAL_EXEC_TLS thread_local constinit std::uint64_t thread_token = 0;

// The last allocator this thread asked for its arena, and the answer.
struct CachedArena {
  std::uint64_t allocator_id = 0;
  std::size_t index = 0;
};
WEFT_INITIAL_EXEC_TLS thread_local constinit CachedArena cached_arena{};

std::uint64_t this_thread_token() noexcept {
  if (thread_token == 0) {
    // relaxed: only uniqueness matters; the RMW provides it.
    thread_token = next_thread_token.fetch_add(1, std::memory_order_relaxed);
  }
  return thread_token;
}

constexpr std::size_t kArenaAlignment = 64;  // arenas never share a cache line

}  // namespace

MultiarchAllocator::MultiarchAllocator(const MultiarchAllocatorConfig& config)
    // relaxed: the id only has to be unique.
    : id_(next_allocator_id.fetch_add(1, std::memory_order_relaxed)) {
  DeviceRegistry registry(config.virtual_devices, config.use_cuda);
  devices_ = registry.devices();
  no_device_note_ = registry.cuda_note();
  build(config);
}

MultiarchAllocator::MultiarchAllocator(const DeviceRegistry& devices, const MultiarchAllocatorConfig& config)
    // relaxed: the id only has to be unique.
    : id_(next_allocator_id.fetch_add(1, std::memory_order_relaxed)),
      devices_(devices.devices()),
      no_device_note_(devices.cuda_note()) {
  build(config);
}

MultiarchAllocator::~MultiarchAllocator() = default;

void MultiarchAllocator::build(const MultiarchAllocatorConfig& config) {
  std::size_t count = config.cpu_arenas;
  if (count == 0) count = std::max(1u, std::thread::hardware_concurrency());
  // Each arena rounded up to whole cache lines, all of them in one buffer.
  const detail::CheckedSize rounded_up = detail::CheckedSize(config.cpu_arena_bytes) + (kArenaAlignment - 1);
  const std::size_t stride = rounded_up.value() / kArenaAlignment * kArenaAlignment;
  const detail::CheckedSize cpu_bytes = detail::CheckedSize(stride) * count;
  if (!rounded_up.fits() || !cpu_bytes.fits()) {
    detail::throw_size_overflow("MultiarchAllocator: " + std::to_string(count) + " CPU arenas of " +
                                std::to_string(config.cpu_arena_bytes) +
                                " bytes (each rounded up to whole 64-byte lines) overflow std::size_t");
  }
  cpu_pinned_ = HostPinnedSpace::pins_memory();
  cpu_buffer_ = SpaceBuffer<HostPinnedSpace>(HostPinnedSpace{}, cpu_bytes.value());
  auto* base = static_cast<std::byte*>(cpu_buffer_.data());
  cpu_owners_ = std::make_unique<std::atomic<std::uint64_t>[]>(count);
  cpu_arenas_.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    cpu_arenas_.push_back(std::make_unique<LinearArena>("cpu-" + std::to_string(i),
                                                        base != nullptr ? base + i * stride : nullptr,
                                                        config.cpu_arena_bytes, false));
  }

  for (const DeviceInfo& device : devices_) {
    if (device.kind == DeviceKind::Cuda) {
      cuda_buffers_.emplace_back(CudaSpace(device.id), config.gpu_arena_bytes);
      gpu_arenas_.push_back(
          std::make_unique<LinearArena>("gpu-" + std::to_string(device.id) + " (" + device.name + ")",
                                        cuda_buffers_.back().data(), config.gpu_arena_bytes, true));
    } else {
      host_buffers_.emplace_back(HostSpace{}, config.gpu_arena_bytes);
      gpu_arenas_.push_back(std::make_unique<LinearArena>(device.name, host_buffers_.back().data(),
                                                          config.gpu_arena_bytes, false));
    }
  }
}

LinearArena& MultiarchAllocator::cpu_allocator() {
  if (cached_arena.allocator_id == id_) return *cpu_arenas_[cached_arena.index];
  const std::size_t index = claim_cpu_arena(this_thread_token());
  cached_arena = {id_, index};
  return *cpu_arenas_[index];
}

std::size_t MultiarchAllocator::claim_cpu_arena(std::uint64_t token) {
  const std::size_t count = cpu_arenas_.size();
  // relaxed (all three): an owner word only decides which thread prefers which
  // arena; arenas are thread safe, so nothing is published through it.
  for (std::size_t i = 0; i < count; ++i) {
    if (cpu_owners_[i].load(std::memory_order_relaxed) == token)
      return i;  // claimed before the cache moved on
  }
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t unclaimed = 0;
    if (cpu_owners_[i].load(std::memory_order_relaxed) == 0 &&
        cpu_owners_[i].compare_exchange_strong(unclaimed, token, std::memory_order_relaxed)) {
      return i;
    }
  }
  return static_cast<std::size_t>(token % count);  // every arena is claimed: share one
}

LinearArena& MultiarchAllocator::cpu_allocator(std::size_t index) {
  if (index >= cpu_arenas_.size()) {
    throw std::out_of_range("MultiarchAllocator::cpu_allocator: arena " + std::to_string(index) +
                            " does not exist (" + std::to_string(cpu_arenas_.size()) + " CPU arenas)");
  }
  return *cpu_arenas_[index];
}

LinearArena& MultiarchAllocator::gpu_allocator(int device) {
  if (device < 0 || device >= device_count()) {
    std::string known;
    for (const DeviceInfo& d : devices_) known += (known.empty() ? ": " : ", ") + d.name;
    std::string message = "MultiarchAllocator::gpu_allocator: device " + std::to_string(device) +
                          " does not exist (" + std::to_string(device_count()) + " devices" + known + ")";
    if (devices_.empty()) {
      message += "; no GPU is used (" + no_device_note_ + ") and no virtual devices were asked for";
    }
    throw std::out_of_range(message);
  }
  return *gpu_arenas_[static_cast<std::size_t>(device)];
}

void MultiarchAllocator::reset() noexcept {
  for (auto& arena : cpu_arenas_) arena->reset();
  for (auto& arena : gpu_arenas_) arena->reset();
}

}  // namespace weft

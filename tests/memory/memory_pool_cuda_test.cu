// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MemoryPool<CudaSpace> used from GPU threads: many threads allocate, fill
// their block with their own id, and check it before freeing, so two live
// blocks that overlap are caught; the host also checks the addresses. Skips,
// saying so, on a machine without a GPU.
#include <weft/memory/memory_pool.hpp>

#include <weft/backends/cuda_devices.hpp>
#include <weft/backends/memory_space.hpp>

#include <doctest/doctest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace {

struct Record {
  unsigned long long address;  // 0: allocation refused
  unsigned size;
  int intact;
};

__device__ unsigned request_size(unsigned thread, unsigned round, std::size_t max_block) {
  const unsigned mixed = (thread * 2654435761u) ^ (round * 40503u);
  return 8u + mixed % static_cast<unsigned>(max_block - 7);
}

__global__ void allocate_and_fill(weft::MemoryPoolHandle pool, Record* records, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned size = request_size(i, 0, pool.max_block_size());
  auto* p = static_cast<unsigned char*>(pool.allocate(size, 4));
  records[i] = {reinterpret_cast<unsigned long long>(p), size, 0};
  if (p == nullptr) return;
  for (unsigned k = 0; k < size; ++k) p[k] = static_cast<unsigned char>(i * 31u + k);
}

__global__ void check_and_free(weft::MemoryPoolHandle pool, Record* records, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || records[i].address == 0) return;
  auto* p = reinterpret_cast<unsigned char*>(records[i].address);
  int intact = 1;
  for (unsigned k = 0; k < records[i].size; ++k) {
    if (p[k] != static_cast<unsigned char>(i * 31u + k)) intact = 0;
  }
  records[i].intact = intact;
  pool.deallocate(p, records[i].size);
}

// counters[0]: refused allocations, counters[1]: corrupted blocks, counters[2]: successful ones.
__global__ void churn(weft::MemoryPoolHandle pool, unsigned rounds, unsigned long long* counters) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  for (unsigned r = 0; r < rounds; ++r) {
    const unsigned size = request_size(i, r + 1, pool.max_block_size());
    auto* p = static_cast<unsigned char*>(pool.allocate(size));
    if (p == nullptr) {
      atomicAdd(&counters[0], 1ull);
      continue;
    }
    atomicAdd(&counters[2], 1ull);
    const unsigned char tag = static_cast<unsigned char>(i ^ (r * 7u));
    for (unsigned k = 0; k < size; ++k) p[k] = static_cast<unsigned char>(tag + k);
    __nanosleep(1000);  // keep the block live while other threads churn
    bool intact = true;
    for (unsigned k = 0; k < size; ++k) intact = intact && p[k] == static_cast<unsigned char>(tag + k);
    if (!intact) atomicAdd(&counters[1], 1ull);
    pool.deallocate(p, size);
  }
}

bool launched_fine() {
  const cudaError_t launch = cudaGetLastError();
  const cudaError_t run = cudaDeviceSynchronize();
  if (launch != cudaSuccess || run != cudaSuccess) {
    MESSAGE("CUDA error: " << cudaGetErrorString(launch != cudaSuccess ? launch : run));
    return false;
  }
  return true;
}

}  // namespace

TEST_CASE("MemoryPool.cuda.device_threads") {
  const weft::CudaDiscovery found = weft::discover_cuda_devices();
  if (found.devices.empty()) {
    MESSAGE("no GPU is present (" << found.note << "): skipping the device-side MemoryPool test");
    return;
  }
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  const weft::CudaSpace gpu(0);

  SUBCASE("live blocks never overlap") {
    // 32768 superblocks for 16384 live blocks: every request can be served.
    weft::MemoryPool<weft::CudaSpace> pool(gpu, std::size_t{128} << 20);
    constexpr unsigned n = 16384;
    weft::SpaceBuffer<weft::CudaSpace> records(gpu, n * sizeof(Record));
    allocate_and_fill<<<n / 256, 256>>>(pool.handle(), static_cast<Record*>(records.data()), n);
    REQUIRE(launched_fine());
    const weft::MemoryPoolStatistics during = pool.get_usage_statistics();
    check_and_free<<<n / 256, 256>>>(pool.handle(), static_cast<Record*>(records.data()), n);
    REQUIRE(launched_fine());

    std::vector<Record> host(n);
    gpu.copy_to_host(host.data(), records.data(), n * sizeof(Record));
    std::vector<std::pair<unsigned long long, std::size_t>> blocks;
    for (const Record& r : host) {
      CHECK(r.address != 0);
      if (r.address == 0) continue;
      CHECK(r.intact == 1);
      blocks.emplace_back(r.address, pool.allocate_block_size(r.size));
    }
    std::sort(blocks.begin(), blocks.end());
    for (std::size_t i = 1; i < blocks.size(); ++i)
      CHECK(blocks[i - 1].first + blocks[i - 1].second <= blocks[i].first);
    CHECK(during.consumed_blocks == blocks.size());
    const weft::MemoryPoolStatistics after = pool.get_usage_statistics();
    CHECK(after.consumed_blocks == 0);
    CHECK(after.empty_superblocks == after.superblocks);
  }

  SUBCASE("churn under exhaustion") {
    // 1024 superblocks for 32768 threads: most requests are refused at first,
    // superblocks change size constantly.
    weft::MemoryPool<weft::CudaSpace> pool(gpu, std::size_t{4} << 20);
    weft::SpaceBuffer<weft::CudaSpace> counters(gpu, 3 * sizeof(unsigned long long));
    const unsigned long long zero[3] = {0, 0, 0};
    gpu.copy_from_host(counters.data(), zero, sizeof zero);
    churn<<<128, 256>>>(pool.handle(), 64, static_cast<unsigned long long*>(counters.data()));
    REQUIRE(launched_fine());
    unsigned long long got[3] = {0, 0, 0};
    gpu.copy_to_host(got, counters.data(), sizeof got);
    MESSAGE(got[2] << " device allocations served, " << got[0] << " refused");
    CHECK(got[1] == 0);
    CHECK(got[2] > 0);
    const weft::MemoryPoolStatistics after = pool.get_usage_statistics();
    CHECK(after.consumed_blocks == 0);
    CHECK(after.empty_superblocks == after.superblocks);
  }
}

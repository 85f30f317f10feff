// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the GPU benchmarks share: the skip-without-a-GPU test, CUDA error
// checks that name the call, and CUDA-event timing (GPU time between two
// events on one stream).
//
//   if (!weft::bench::gpu::gpu_present("cuda_my_bench")) return;  // prints why it skipped
//   const double ms = weft::bench::gpu::best_ms_per_operation(stream, opt.repetitions, 10, [&] {
//     my_kernel<<<blocks, threads, 0, stream>>>(...);
//     weft::bench::gpu::check(cudaGetLastError(), "my_kernel<<<>>>");
//   });
#pragma once

#include <weft/backends/cuda_devices.hpp>
#include <weft/views/cuda/cuda_check.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <limits>

namespace weft::bench::gpu {

inline constexpr int kDevice = 0;

// False, after printing why, when the machine has no GPU to run on.
inline bool gpu_present(const char* benchmark) {
  const CudaDiscovery found = discover_cuda_devices();
  if (found.devices.empty()) {
    std::printf("%-28s skipped: no GPU (%s)\n", benchmark, found.note.c_str());
    return false;
  }
  return true;
}

inline void check(cudaError_t status, const char* call) {
  weft::cuda::check(status, call, kDevice, "weft-bench");
}

// An event that records time (the pool's events do not, on purpose).
class TimingEvent {
 public:
  TimingEvent() { check(cudaEventCreate(&event_), "cudaEventCreate"); }
  ~TimingEvent() { (void)cudaEventDestroy(event_); }  // nothing to report to at exit
  TimingEvent(const TimingEvent&) = delete;
  TimingEvent& operator=(const TimingEvent&) = delete;
  cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// The fastest of `repetitions` timings of what enqueue() queues on `stream`,
// in milliseconds per operation when it queues `operations` of them. One
// untimed call first: lazy module loading, first touch of the memory.
template <class Enqueue>
double best_ms_per_operation(cudaStream_t stream, int repetitions, int operations, Enqueue enqueue) {
  const TimingEvent start, stop;
  enqueue();
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < std::max(1, repetitions); ++r) {
    check(cudaEventRecord(start.get(), stream), "cudaEventRecord");
    for (int k = 0; k < operations; ++k) enqueue();
    check(cudaEventRecord(stop.get(), stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop.get()), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
    best = std::min(best, static_cast<double>(ms) / operations);
  }
  return best;
}

// True, after printing why not, when `bytes` of device memory are free.
inline bool device_memory_for(const char* benchmark, const char* params, std::size_t bytes) {
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  if (bytes > free_bytes) {
    std::printf("%-28s %s skipped: needs %zu MiB, %zu MiB free\n", benchmark, params, bytes >> 20,
                free_bytes >> 20);
    return false;
  }
  return true;
}

}  // namespace weft::bench::gpu

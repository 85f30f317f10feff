// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA backend against what a GPU programmer would use instead, on one
// stream of device 0, timed with CUDA events (GPU time between two events):
//
//   cuda_saxpy          weft::cuda::parallel_for running a WEFT_HOST_DEVICE
//                       saxpy functor against cublasSaxpy, at Ripple's Table 2
//                       sizes (1M to 1B floats; --quick: 1M), in ms per saxpy;
//                       and its bandwidth (12 bytes per element: read x and y,
//                       write y) against a device-to-device cudaMemcpyAsync, the
//                       practical limit, in GB/s (there the ratio is weft /
//                       copy, so higher is better).
//   cuda_graph_node     a graph that is a chain of N GPU nodes (weft::on_gpu),
//                       each queuing one empty kernel, run by the Executor
//                       (GPU-priority workers, stream order, the host callback
//                       that ends the run), against the same N plain launches
//                       and a cudaStreamSynchronize, in microseconds per node
//                       of wall-clock time: what a GPU node costs the host.
//   cuda_node_overhead  a chain of N empty kernels queued through
//                       weft::cuda::parallel_for against the same chain of plain
//                       <<<>>> launches, in microseconds per launch. The GPU
//                       finishes an empty kernel faster than a thread queues the
//                       next, so the event time is the submission rate.
//
// Without a GPU each benchmark prints that it skipped and records nothing.
#include "bench.hpp"
#include "cuda_timing.cuh"

#include <weft/backends/cuda_devices.hpp>
#include <weft/backends/cuda_streams.hpp>
#include <weft/backends/memory_space.hpp>
#include <weft/graph/graph.hpp>
#include <weft/views/cuda/cuda_check.cuh>
#include <weft/views/cuda/parallel_for_cuda.cuh>
#include <weft/views/range_policy.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using weft::bench::gpu::best_ms_per_operation;
using weft::bench::gpu::check;
using weft::bench::gpu::gpu_present;
using weft::bench::gpu::kDevice;

void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("weft-bench: ") + call + " failed on device " +
                             std::to_string(kDevice) + ": " + cublasGetStatusString(status));
  }
}

class CublasHandle {
 public:
  explicit CublasHandle(cudaStream_t stream) {
    check(cublasCreate(&handle_), "cublasCreate");
    try {
      check(cublasSetStream(handle_, stream), "cublasSetStream");
    } catch (...) {
      (void)cublasDestroy(handle_);
      throw;
    }
  }
  ~CublasHandle() { (void)cublasDestroy(handle_); }  // nothing to report to at exit
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const noexcept { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

// One kernel source for both backends (the host benchmarks run it too).
struct Saxpy {
  float a;
  const float* x;
  float* y;
  WEFT_HOST_DEVICE void operator()(std::int64_t i) const { y[i] = a * x[i] + y[i]; }
};

struct Fill {
  float value;
  float* out;
  WEFT_HOST_DEVICE void operator()(std::int64_t i) const { out[i] = value; }
};

struct Nothing {
  WEFT_HOST_DEVICE void operator()(std::int64_t) const {}
};

__global__ void empty_kernel() {}

std::string millions(std::int64_t n) {
  return n >= 1'000'000'000 ? std::to_string(n / 1'000'000'000) + "B" : std::to_string(n / 1'000'000) + "M";
}

}  // namespace

WEFT_BENCHMARK(cuda_saxpy) {
  if (!gpu_present("cuda_saxpy")) return;
  const std::vector<std::int64_t> sizes =
      opt.quick ? std::vector<std::int64_t>{1'000'000}
                : std::vector<std::int64_t>{1'000'000,   10'000'000,  100'000'000,
                                            200'000'000, 500'000'000, 1'000'000'000};
  weft::DeviceStreams gpu(kDevice);
  const cudaStream_t stream = gpu.compute_stream();
  const CublasHandle cublas(stream);
  const weft::CudaSpace space(kDevice);
  const float a = 2.0f;

  for (const std::int64_t n : sizes) {
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
    std::size_t free_bytes = 0, total_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    if (3 * bytes > free_bytes) {
      std::printf("%-28s n=%s skipped: needs %zu MiB, %zu MiB free\n", "cuda_saxpy", millions(n).c_str(),
                  3 * bytes >> 20, free_bytes >> 20);
      continue;
    }
    const weft::SpaceBuffer<weft::CudaSpace> x(space, bytes), y(space, bytes), copy(space, bytes);
    auto* device_x = static_cast<float*>(x.data());
    auto* device_y = static_cast<float*>(y.data());
    const weft::RangePolicy<std::int64_t> all(0, n);
    weft::cuda::parallel_for(stream, all, Fill{1.0f, device_x});
    weft::cuda::parallel_for(stream, all, Fill{2.0f, device_y});

    // Enough operations per timing that launch gaps do not dominate small sizes.
    const int operations = static_cast<int>(std::clamp<std::int64_t>(100'000'000 / n, 1, 100));
    const double weft_ms = best_ms_per_operation(stream, opt.repetitions, operations, [&] {
      weft::cuda::parallel_for(stream, all, Saxpy{a, device_x, device_y});
    });
    const double cublas_ms = best_ms_per_operation(stream, opt.repetitions, operations, [&] {
      check(cublasSaxpy(cublas.get(), static_cast<int>(n), &a, device_x, 1, device_y, 1), "cublasSaxpy");
    });
    const double copy_ms = best_ms_per_operation(stream, opt.repetitions, operations, [&] {
      check(cudaMemcpyAsync(copy.data(), y.data(), bytes, cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpyAsync");
    });
    const std::string params = "n=" + millions(n);
    out.compare("cuda_saxpy", params, "ms", {"weft", weft_ms}, {"cuBLAS", cublas_ms});
    const double saxpy_gbs = 3.0 * static_cast<double>(bytes) / (weft_ms * 1e6);
    const double copy_gbs = 2.0 * static_cast<double>(bytes) / (copy_ms * 1e6);  // read + write
    out.compare("cuda_saxpy", params, "GB/s", {"weft", saxpy_gbs}, {"D2D copy", copy_gbs});
  }
}

WEFT_BENCHMARK(cuda_node_overhead) {
  if (!gpu_present("cuda_node_overhead")) return;
  const int chain = opt.quick ? 1'000 : 100'000;
  weft::DeviceStreams gpu(kDevice);
  const cudaStream_t stream = gpu.compute_stream();
  const weft::RangePolicy<std::int64_t> one(0, 1);

  // One timing covers the whole chain: milliseconds per chain to microseconds per launch.
  const double weft_chain_ms = best_ms_per_operation(stream, opt.repetitions, 1, [&] {
    for (int k = 0; k < chain; ++k) weft::cuda::parallel_for(stream, one, Nothing{});
  });
  const double plain_chain_ms = best_ms_per_operation(stream, opt.repetitions, 1, [&] {
    for (int k = 0; k < chain; ++k) {
      empty_kernel<<<1, weft::cuda::detail::kThreadsPerBlock, 0, stream>>>();
      check(cudaGetLastError(), "empty_kernel<<<>>>");  // weft checks every launch too
    }
  });
  const double weft_us = 1000.0 * weft_chain_ms / chain;
  const double plain_us = 1000.0 * plain_chain_ms / chain;
  out.compare("cuda_node_overhead", "N=" + std::to_string(chain), "us/launch", {"weft", weft_us},
              {"<<<>>>", plain_us});
}

WEFT_BENCHMARK(cuda_graph_node) {
  if (!gpu_present("cuda_graph_node")) return;
  const int chain = opt.quick ? 1'000 : 20'000;
  const cudaStream_t stream = weft::shared_device_streams(kDevice).compute_stream();
  weft::Graph graph;
  for (int k = 0; k < chain; ++k) {
    graph.then(weft::on_gpu(kDevice, [](weft::GpuStream s) {
      empty_kernel<<<1, weft::cuda::detail::kThreadsPerBlock, 0, s.stream>>>();
      check(cudaGetLastError(), "empty_kernel<<<>>>");
    }));
  }
  weft::Executor executor;
  const auto seconds_of = [](auto&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const auto run_graph = [&] { executor.run(graph).wait().get(); };
  const auto run_plain = [&] {
    for (int k = 0; k < chain; ++k) {
      empty_kernel<<<1, weft::cuda::detail::kThreadsPerBlock, 0, stream>>>();
      check(cudaGetLastError(), "empty_kernel<<<>>>");
    }
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  };
  run_graph();  // warm-up: lowering, streams and events, module loading
  run_plain();
  double graph_s = std::numeric_limits<double>::infinity(), plain_s = graph_s;
  for (int r = 0; r < std::max(1, opt.repetitions); ++r) {
    graph_s = std::min(graph_s, seconds_of(run_graph));
    plain_s = std::min(plain_s, seconds_of(run_plain));
  }
  const double graph_us = 1e6 * graph_s / chain, plain_us = 1e6 * plain_s / chain;
  out.compare("cuda_graph_node", "chain N=" + std::to_string(chain), "us/node", {"weft graph", graph_us},
              {"<<<>>> loop", plain_us});
  std::printf("%-28s %-26s overhead per GPU node: %.2f us (goal < 5)\n", "cuda_graph_node",
              ("chain N=" + std::to_string(chain)).c_str(), graph_us - plain_us);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// heat2d on a GPU: the same graph as heat2d.cpp, with the tensors in GPU
// memory. The kernel is wrapped in weft::cuda::kernel; the walls, the
// padding copies (on a copy stream) and the updates all run on the GPU, and
// the square is split into 4 blocks on one GPU. The result is compared with
// the same graph run on the CPU workers. Without a GPU it says so and exits 0.
//
//   heat2d_gpu [cells per side, default 1024] [steps, default 400]
//
// Bad arguments exit with code 2, a failed run with 1.
#include <weft/views/cuda/block_kernel_cuda.cuh>
#include <weft/weft.hpp>

#include <cmath>
#include <cstdio>
#include <string>

#include "cli_support.hpp"

namespace {

constexpr double kAlpha = 0.2;  // diffusion number: stable below 0.25

struct Diffuse {  // one explicit step at a cell, for the host and the GPU
  template <class In, class Out>
  WEFT_HOST_DEVICE void operator()(In& in, Out& out) const {
    *out = *in + kAlpha * (*in.offset(weft::dim_x, -1) + *in.offset(weft::dim_x, 1) +
                           *in.offset(weft::dim_y, -1) + *in.offset(weft::dim_y, 1) - 4.0 * *in);
  }
};

using Field = weft::Tensor<double, 2>;

// Two steps of heat2d's graph over a and b, with `kernel` as the update.
template <class Kernel>
weft::Graph heat_steps(const Field& a, const Field& b, Kernel kernel) {
  weft::Graph step;
  step.boundary(a, weft::FirstOrderExtrapolation{}).named("walls_a");
  step.then_split(kernel, weft::concurrent_padded_access(a), b).named("diffuse_ab");
  step.then_boundary(b, weft::FirstOrderExtrapolation{}).named("walls_b");
  step.then_split(kernel, weft::concurrent_padded_access(b), a).named("diffuse_ba");
  return step;
}

int example_main(int argc, char** argv) {
  std::size_t n = 1024;
  int steps = 400;
  CLI::App app("heat2d_gpu: heat2d's graph with its tensors in GPU memory, checked against the CPU",
               "heat2d_gpu");
  app.add_option("cells", n, "cells per side")
      ->transform(weft::examples::whole_number<std::size_t>(4))
      ->capture_default_str();
  app.add_option("steps", steps, "time steps, an even number")
      ->transform(weft::examples::whole_number<int>(2))
      ->capture_default_str();
  if (const auto code = weft::examples::parse(app, argc, argv)) return *code;
  if (steps % 2 != 0) {
    throw weft::examples::UsageError("steps: need an even number (two steps a run), got " +
                                     std::to_string(steps));
  }
  const weft::CudaDiscovery gpus = weft::discover_cuda_devices();
  if (gpus.devices.empty()) {
    std::printf("heat2d_gpu: no GPU is present (%s): nothing to do\n", gpus.note.c_str());
    return 0;
  }

  // 1 partition of 4 blocks along y: all on GPU 0.
  const weft::Extents<2> partitions{1, 1}, blocks{1, 4};
  Field host_a(partitions, blocks, 1, n, n), host_b(partitions, blocks, 1, n, n);
  Field gpu_a(weft::cuda_memory, partitions, blocks, 1, n, n),
      gpu_b(weft::cuda_memory, partitions, blocks, 1, n, n);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < n; ++i)
      host_a(i, j) = i > n / 3 && i < n / 2 && j > n / 4 && j < 2 * n / 3 ? 100.0 : 0.0;
  weft::deep_copy(gpu_a, host_a);

  weft::Graph on_cpu = heat_steps(host_a, host_b, Diffuse{});
  weft::Graph on_gpu = heat_steps(gpu_a, gpu_b, weft::cuda::kernel(Diffuse{}));
  weft::Executor executor;
  executor.run_n(on_gpu, steps / 2).get();
  executor.run_n(on_cpu, steps / 2).get();

  Field result(partitions, blocks, 1, n, n);
  weft::deep_copy(result, gpu_a);
  double max_difference = 0.0, heat = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t i = 0; i < n; ++i) {
      max_difference = std::fmax(max_difference, std::fabs(result(i, j) - host_a(i, j)));
      heat += result(i, j);
    }
  }
  std::printf("heat2d_gpu: %zux%zu cells in 4 blocks on %s, %d steps, graph of %zu GPU nodes\n", n, n,
              gpus.devices.front().name.c_str(), steps, on_gpu.size());
  // nvcc fuses multiply-adds, so the GPU may differ from the CPU in the last bits.
  std::printf("max |GPU - CPU| = %g, total heat %.6f\n", max_difference, heat);
  return max_difference < 1e-9 ? weft::examples::kExitOk : weft::examples::kExitFailed;
}

}  // namespace

int main(int argc, char** argv) {
  return weft::examples::run_main("heat2d_gpu", [&] { return example_main(argc, argv); });
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The flagship on one GPU (issue 8): euler2d's Solver<Layout, true>, its
// fields in GPU memory and its kernels as weft::cuda::kernel nodes, on
// Ripple's shock-bubble problem.
//
//   euler_gpu_cells_per_second  cells updated per second for 1, 2, 4 and 8
//       partitions (all on GPU 0), strided and contiguous layouts; the
//       baseline of each row is the same layout with 1 partition, so the
//       ratio is the cost of partitioning on one GPU (higher is better).
//   euler_gpu_layouts           strided against contiguous, ms per step, for
//       each partition count (lower is better: strided below 1).
//
// Timing: wall-clock time of solver.run(executor, steps) after a warm-up
// step (graph lowering, streams, module loading), the best of the
// repetitions; host nodes (time step, clock) and their callbacks included.
// Verification: every variant must end in the very state of the first one,
// bit for bit (the split and the layout must not change a result).
// Without a GPU it prints that it skipped and records nothing.
#include "bench.hpp"
#include "cuda_timing.cuh"

#include <weft/views/cuda/block_kernel_cuda.cuh>
#include <weft/weft.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "solver.hpp"

namespace {

using weft::bench::Options;
using weft::bench::Reporter;

struct Timing {
  double seconds_per_step;
  std::uint64_t hash;
};

template <class Layout>
Timing time_solver(weft::Executor& executor, weft::euler::SolverConfig config, long steps, int repetitions) {
  double best = std::numeric_limits<double>::infinity();
  std::uint64_t hash = 0;
  for (int r = 0; r < std::max(1, repetitions); ++r) {
    weft::euler::Solver<Layout, true> solver(config);  // the same start every time
    solver.run(executor, 1, 0.0);                      // warm-up step
    const auto start = std::chrono::steady_clock::now();
    solver.run(executor, steps, 0.0);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    solver.sync_host();
    hash = weft::euler::state_checksum(solver.host_field(), config.nx, config.ny);
  }
  return {best / static_cast<double>(steps), hash};
}

void euler_on_one_gpu(const Options& opt, Reporter& out) {
  if (!weft::bench::gpu::gpu_present("euler_gpu_cells_per_second")) return;
  weft::euler::SolverConfig config;
  config.nx = opt.quick ? 800 : 3200;
  config.ny = opt.quick ? 400 : 1600;
  config.gpus = 1;
  const long steps = opt.quick ? 10 : 100;
  const std::vector<std::size_t> partitions{1, 2, 4, 8};
  weft::Executor executor;
  const double cells = static_cast<double>(config.nx * config.ny);
  const std::string size = std::to_string(config.nx) + "x" + std::to_string(config.ny);

  std::vector<Timing> strided, contiguous;
  for (std::size_t p : partitions) {
    config.partitions = p;
    strided.push_back(time_solver<weft::StridedView>(executor, config, steps, opt.repetitions));
    contiguous.push_back(time_solver<weft::ContiguousView>(executor, config, steps, opt.repetitions));
  }
  for (std::size_t k = 0; k < partitions.size(); ++k) {
    if (strided[k].hash != strided[0].hash || contiguous[k].hash != strided[0].hash) {
      std::fprintf(stderr,
                   "euler_gpu: %zu partitions changed the result (strided %016llx, contiguous %016llx, "
                   "1 partition %016llx)\n",
                   partitions[k], static_cast<unsigned long long>(strided[k].hash),
                   static_cast<unsigned long long>(contiguous[k].hash),
                   static_cast<unsigned long long>(strided[0].hash));
      std::exit(1);
    }
  }
  const auto gcells = [&](const Timing& t) { return cells / t.seconds_per_step / 1e9; };
  for (std::size_t k = 0; k < partitions.size(); ++k) {
    const std::string params = size + " P=" + std::to_string(partitions[k]) + " higher=better";
    out.compare("euler_gpu_cells_per_second.strided", params, "Gcells/s", {"weft", gcells(strided[k])},
                {"P=1", gcells(strided[0])});
    out.compare("euler_gpu_cells_per_second.contiguous", params, "Gcells/s", {"weft", gcells(contiguous[k])},
                {"P=1", gcells(contiguous[0])});
    out.compare("euler_gpu_layouts", size + " P=" + std::to_string(partitions[k]) + " goal<1", "ms/step",
                {"strided", 1e3 * strided[k].seconds_per_step},
                {"contiguous", 1e3 * contiguous[k].seconds_per_step});
  }
}

}  // namespace

WEFT_BENCHMARK(euler_gpu_cells_per_second) { euler_on_one_gpu(opt, out); }

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The FIM solver with its fields in GPU memory and its passes as
// weft::cuda::kernel nodes (nvcc only):
//
//   weft::eikonal::GpuSolver<float, weft::StridedView> solver(problem);   // problem.gpus devices
//   solver.run(executor);   // an Executor with GPU workers
//   solver.sync_host();     // the field back, for distance()
//
// The per-block flags live in managed memory: the GPU kernels read and set
// them, the bookkeeping node between passes reads them on the host.
#pragma once

#ifndef __CUDACC__
#error "gpu_solver.cuh holds CUDA code: include it from .cu files compiled by nvcc"
#endif

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include <weft/views/cuda/block_kernel_cuda.cuh>
#include <weft/weft.hpp>

#include "fim.hpp"

namespace weft::eikonal {

struct GpuPlace {
  static constexpr bool gpu = true;
  template <class C, std::size_t D>
  static Tensor<C, D> field(const Problem& p) {
    static_assert(D == 2, "eikonal: GPU runs are 2D (3D grids run on the host)");
    return Tensor<C, 2>(CudaMemory::on_devices(p.gpus), p.partition_grid<2>(), p.tile_grid<2>(), 1, p.nx,
                        p.ny);
  }
  static std::shared_ptr<int[]> flags(std::size_t count) {
    int* memory = nullptr;
    const cudaError_t error = cudaMallocManaged(&memory, count * sizeof(int));
    if (error != cudaSuccess)
      throw std::runtime_error(std::string("eikonal: cudaMallocManaged of the block flags failed: ") +
                               cudaGetErrorString(error));
    return std::shared_ptr<int[]>(memory, [](int* p) { cudaFree(p); });
  }
  template <class K>
  static auto kernel(K k) {
    return cuda::kernel(k);
  }
  template <class C, std::size_t D>
  static TensorAccess<C, D> input(const Tensor<C, D>& t, bool in_shared) {
    return in_shared ? concurrent_padded_access_in_shared(t) : concurrent_padded_access(t);
  }
};

template <class T, class Layout>
using GpuSolver = Solver<T, Layout, GpuPlace>;

}  // namespace weft::eikonal

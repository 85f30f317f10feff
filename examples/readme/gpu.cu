#include <weft/views/cuda/block_kernel_cuda.cuh>
#include <weft/weft.hpp>

#include <cstdio>

struct Average {  // a cell and its x neighbours, for the host and the GPU
  template <class In, class Out>
  WEFT_HOST_DEVICE void operator()(In& in, Out& out) const {
    *out = (*in.offset(weft::dim_x, -1) + *in + *in.offset(weft::dim_x, 1)) / 3;
  }
};

__global__ void count_threads(int* threads) { atomicAdd(threads, 1); }

int main() {
  if (weft::discover_cuda_devices().devices.empty()) {
    std::puts("no GPU: nothing to run");
    return 0;
  }
  const int nx = 64, ny = 64;
  weft::Tensor<float, 2> a(weft::cuda_memory, {1, 1}, {1, 4}, 1, nx, ny);  // 4 blocks on GPU 0
  weft::Tensor<float, 2> b(weft::cuda_memory, {1, 1}, {1, 4}, 1, nx, ny);
  weft::Tensor<float, 2> host({1, 1}, {1, 4}, 1, nx, ny);  // the same split in host memory
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) host(i, j) = 3;
  weft::deep_copy(a, host);
  int* threads = nullptr;
  if (cudaMallocManaged(&threads, sizeof(int)) != cudaSuccess) return 1;
  *threads = 0;

  weft::Graph g;
  // GPU nodes, one per block, and the padding copies on copy streams:
  g.split(weft::cuda::kernel(Average{}), weft::concurrent_padded_access(a), b);
  // Your own kernel, on GPU 0's compute stream:
  g.emplace(weft::on_gpu(0, [=](weft::GpuStream s) { count_threads<<<2, 32, 0, s.stream>>>(threads); }));
  weft::Executor executor;
  executor.run(g).get();  // waits for the GPU work too
  weft::deep_copy(host, b);
  std::printf("b(0, 9) = %g, b(9, 9) = %g, %d GPU threads counted\n", host(0, 9), host(9, 9), *threads);
  // prints: b(0, 9) = 2, b(9, 9) = 3, 64 GPU threads counted (the padding beyond the edge is 0)
  cudaFree(threads);
}

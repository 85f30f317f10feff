// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Eikonal workload on one GPU (Ripple section 7.4, Table 5): weft's FIM
// solver with its passes as weft::cuda::kernel nodes (examples/eikonal,
// gpu_solver.cuh) against the FIM written by hand in CUDA over plain arrays.
//
//   eikonal_gpu_fim.<layout>   ms per solve, float with a band of 5 cells and
//       double with 10, for Table 5's four columns: strided, contiguous,
//       strided_in_shared, contiguous_in_shared (the pass's input staged in
//       shared memory). weft visits every block here, as the hand-written
//       FIM does (one kernel over the grid per pass, a changed flag read
//       back after each). Goal: <= 1.053.
//   eikonal_gpu_fim_skip.<layout>  weft skipping quiet blocks against the
//       same baseline: what skipping gains on the GPU.
//
// Timing: wall-clock from the start to the pass that changes nothing (the
// host waits for each pass's flag in both), the best of the repetitions,
// after a warm-up solve; resets are not timed (sizes 1k^2 to 4k^2: 8k^2
// would spend minutes filling fields on the host between timings).
// Verification: every weft field equals the hand-written one bit for bit
// (the kernels round every product and difference alone, fim.hpp), else it
// prints the cell and exits 1.
// Without a GPU it prints that it skipped and records nothing.
#include "bench.hpp"
#include "cuda_timing.cuh"

#include <weft/views/cuda/block_kernel_cuda.cuh>
#include <weft/weft.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "eikonal/fim.hpp"
#include "eikonal/gpu_solver.cuh"

namespace {

using weft::bench::Options;
using weft::bench::Reporter;
using weft::bench::gpu::check;
using weft::eikonal::Problem;

template <class T>
__global__ void fim_pass(const T* value, const int* changed, T* next_value, int* next_changed, int* any,
                         std::size_t nx, std::size_t ny, T h, T limit) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t j = blockIdx.y * static_cast<std::size_t>(blockDim.y) + threadIdx.y;
  if (i >= nx || j >= ny) return;
  const T inf = std::numeric_limits<T>::infinity();
  const std::size_t at = j * nx + i;
  const bool w = i > 0, e = i + 1 < nx, s = j > 0, n = j + 1 < ny;
  T v = value[at];
  int c = 0;
  if ((w && changed[at - 1]) || (e && changed[at + 1]) || (s && changed[at - nx]) ||
      (n && changed[at + nx])) {
    const T solved =
        weft::eikonal::godunov_update(fmin(w ? value[at - 1] : inf, e ? value[at + 1] : inf),
                                      fmin(s ? value[at - nx] : inf, n ? value[at + nx] : inf), h);
    if (solved < v && solved <= limit) {
      v = solved;
      c = 1;
    }
  }
  next_value[at] = v;
  next_changed[at] = c;
  if (c != 0) *any = 1;
}

// The hand-written FIM: two value and two flag arrays in device memory, one
// kernel per pass, the changed flag read back after each.
template <class T>
class CudaFim {
 public:
  explicit CudaFim(const Problem& p) : p_(p), n_(p.nx * p.ny) {
    for (int k = 0; k < 2; ++k) {
      check(cudaMalloc(&value_[k], n_ * sizeof(T)), "cudaMalloc");
      check(cudaMalloc(&changed_[k], n_ * sizeof(int)), "cudaMalloc");
    }
    check(cudaMalloc(&any_, sizeof(int)), "cudaMalloc");
    check(cudaStreamCreate(&stream_), "cudaStreamCreate");
  }
  ~CudaFim() {
    for (int k = 0; k < 2; ++k) {
      (void)cudaFree(value_[k]);
      (void)cudaFree(changed_[k]);
    }
    (void)cudaFree(any_);
    (void)cudaStreamDestroy(stream_);
  }
  CudaFim(const CudaFim&) = delete;
  CudaFim& operator=(const CudaFim&) = delete;

  void reset() {
    std::vector<T> value(n_, std::numeric_limits<T>::infinity());
    std::vector<int> changed(n_, 0);
    const std::size_t source = p_.sy() * p_.nx + p_.sx();
    value[source] = T(0);
    changed[source] = 1;
    check(cudaMemcpy(value_[0], value.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(changed_[0], changed.data(), n_ * sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy");
    current_ = 0;
  }

  long run() {
    const T h = static_cast<T>(p_.h());
    const T limit = static_cast<T>(static_cast<double>(p_.band) * p_.h());
    const dim3 threads(32, 8);
    const dim3 blocks(static_cast<unsigned>((p_.nx + 31) / 32), static_cast<unsigned>((p_.ny + 7) / 8));
    long changing = 0;
    for (;;) {
      int any = 0;
      check(cudaMemsetAsync(any_, 0, sizeof(int), stream_), "cudaMemsetAsync");
      fim_pass<T><<<blocks, threads, 0, stream_>>>(value_[current_], changed_[current_], value_[1 - current_],
                                                   changed_[1 - current_], any_, p_.nx, p_.ny, h, limit);
      check(cudaGetLastError(), "fim_pass<<<>>>");
      check(cudaMemcpyAsync(&any, any_, sizeof(int), cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
      check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
      current_ = 1 - current_;
      if (any == 0) return changing;
      ++changing;
    }
  }

  std::vector<T> values() const {
    std::vector<T> out(n_);
    check(cudaMemcpy(out.data(), value_[current_], n_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return out;
  }

 private:
  Problem p_;
  std::size_t n_;
  T* value_[2] = {};
  int* changed_[2] = {};
  int* any_ = nullptr;
  cudaStream_t stream_ = nullptr;
  int current_ = 0;
};

template <class F>
double best_ms(int repetitions, const std::function<void()>& reset, F&& run) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r <= std::max(1, repetitions); ++r) {  // r == 0: warm-up
    reset();
    const auto start = std::chrono::steady_clock::now();
    run();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (r > 0) best = std::min(best, ms);
  }
  return best;
}

template <class T, class Layout>
double weft_ms(const Options& opt, weft::Executor& executor, Problem p, bool skip,
               const std::vector<T>& expected, long expected_passes, const std::string& name) {
  p.skip_quiet_blocks = skip;
  weft::eikonal::GpuSolver<T, Layout> solver(p);
  long passes = 0;
  const double ms = best_ms(
      opt.repetitions, [&] { solver.reset(); }, [&] { passes = solver.run(executor); });
  solver.sync_host();
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  if (passes != expected_passes) {
    std::fprintf(stderr, "eikonal_gpu_fim: %s took %ld changing passes, the CUDA FIM %ld\n", name.c_str(),
                 passes, expected_passes);
    std::exit(1);
  }
  for (std::size_t j = 0; j < p.ny; ++j) {
    for (std::size_t i = 0; i < p.nx; ++i) {
      const T got = solver.distance(i, j), want = expected[j * p.nx + i];
      if (std::bit_cast<Bits>(got) != std::bit_cast<Bits>(want)) {
        std::fprintf(stderr,
                     "eikonal_gpu_fim: %s differs from the CUDA FIM at cell (%zu, %zu): %.9g, not %.9g\n",
                     name.c_str(), i, j, static_cast<double>(got), static_cast<double>(want));
        std::exit(1);
      }
    }
  }
  return ms;
}

template <class T>
void solve_size(const Options& opt, Reporter& out, weft::Executor& executor, const char* precision,
                std::size_t band, std::size_t n) {
  Problem p;
  p.nx = p.ny = n;
  p.band = band;
  p.partitions = 1;
  p.tiles_x = p.tiles_y = 8;
  p.gpus = 1;
  CudaFim<T> baseline(p);
  long passes = 0;
  const double cuda_ms = best_ms(
      opt.repetitions, [&] { baseline.reset(); }, [&] { passes = baseline.run(); });
  const std::vector<T> expected = baseline.values();
  const std::string params = std::string(precision) + " band=" + std::to_string(band) + " " +
                             std::to_string(n) + "^2 blocks=8x8 passes=" + std::to_string(passes + 1);
  struct Column {
    const char* name;
    bool contiguous, in_shared;
  };
  for (const Column c :
       {Column{"strided", false, false}, Column{"contiguous", true, false},
        Column{"strided_in_shared", false, true}, Column{"contiguous_in_shared", true, true}}) {
    p.in_shared = c.in_shared;
    for (const bool skip : {false, true}) {
      const std::string name = std::string(c.name) + (skip ? " skip " : " ") + params;
      const double ms = c.contiguous
                            ? weft_ms<T, weft::ContiguousView>(opt, executor, p, skip, expected, passes, name)
                            : weft_ms<T, weft::StridedView>(opt, executor, p, skip, expected, passes, name);
      out.compare(std::string(skip ? "eikonal_gpu_fim_skip." : "eikonal_gpu_fim.") + c.name,
                  params + (skip ? " lower=better" : " goal<=1.053"), "ms/solve", {"weft", ms},
                  {"CUDA", cuda_ms});
    }
  }
}

void eikonal_on_one_gpu(const Options& opt, Reporter& out) {
  if (!weft::bench::gpu::gpu_present("eikonal_gpu_fim")) return;
  weft::Executor executor;
  const std::vector<std::size_t> sizes =
      opt.quick ? std::vector<std::size_t>{1024} : std::vector<std::size_t>{1024, 2048, 4096};
  for (std::size_t n : sizes) {
    solve_size<float>(opt, out, executor, "float", 5, n);
    solve_size<double>(opt, out, executor, "double", 10, n);
  }
}

}  // namespace

WEFT_BENCHMARK(eikonal_gpu_fim) { eikonal_on_one_gpu(opt, out); }

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A GPU node whose kernel faults must fail the graph's run, with the CUDA
// error in the message, and not leave the run waiting for ever. A fault
// leaves the process's CUDA context unusable, so this check is a program of
// its own (ctest: test_cuda_fault, with a timeout). Without a GPU it says so
// and passes.
#include <weft/backends/cuda_devices.hpp>
#include <weft/graph/graph.hpp>

#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace {

__global__ void write_through_a_null_pointer(int* nowhere) { *nowhere = 1; }

}  // namespace

int main() {
  const weft::CudaDiscovery found = weft::discover_cuda_devices();
  if (found.devices.empty()) {
    std::printf("no GPU is present (%s): skipping the GPU fault check\n", found.note.c_str());
    return 0;
  }
  std::atomic<bool> ran_after{false};
  weft::Graph g;
  g.emplace(weft::on_gpu(0, [](weft::GpuStream s) {
     write_through_a_null_pointer<<<1, 1, 0, s.stream>>>(nullptr);
   })).named("faulty");
  g.then([&] { ran_after = true; });
  weft::Executor executor;
  try {
    executor.run(g).wait().get();
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    std::printf("the run failed as it should: %s\n", message.c_str());
    if (message.find("Graph: the GPU work of node 'faulty' failed on device 0 with CUDA error ") != 0) {
      std::printf("FAILED: unexpected message\n");
      return 1;
    }
    if (ran_after) {
      std::printf("FAILED: the node after the faulty one ran\n");
      return 1;
    }
    return 0;
  }
  std::printf("FAILED: the run succeeded although its kernel faulted\n");
  return 1;
}

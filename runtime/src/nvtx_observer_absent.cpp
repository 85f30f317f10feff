// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// NvtxObserver in a build without the CUDA backend, which ships NVTX: it
// cannot be made, and WEFT_NVTX=1 says so.
#include <weft/runtime/nvtx_observer.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace weft {

NvtxObserver::NvtxObserver() {
  throw std::runtime_error(
      "NvtxObserver: weft was built without the CUDA backend, whose toolkit ships the NVTX headers "
      "(WEFT_ENABLE_CUDA=OFF or no nvcc found)");
}

void NvtxObserver::on_node_begin(const NodeEvent&) noexcept {}
void NvtxObserver::on_node_end(const NodeEvent&) noexcept {}
void NvtxObserver::on_run_begin(const RunEvent&) noexcept {}
void NvtxObserver::on_run_end(const RunEvent&) noexcept {}

bool nvtx_available() noexcept { return false; }

std::shared_ptr<NvtxObserver> attach_nvtx_if_requested(Executor&) {
  const char* value = std::getenv("WEFT_NVTX");
  if (value == nullptr || std::string(value) != "1") return nullptr;
  static std::atomic<bool> told{false};
  if (!told.exchange(true, std::memory_order_relaxed))
    std::fprintf(stderr, "weft: WEFT_NVTX=1 ignored: this build has no NVTX (no CUDA backend)\n");
  return nullptr;
}

}  // namespace weft

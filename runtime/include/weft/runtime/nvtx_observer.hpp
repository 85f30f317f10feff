// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// NVTX ranges for Nsight Systems: an observer that pushes a range named after
// each node as a worker enters it and pops it as the worker leaves, and
// marks each run of a graph, so `nsys profile` shows weft's names on the CPU
// threads (and, projected, over the kernels each node launched).
//
//   executor.attach(std::make_shared<weft::NvtxObserver>());
//   // or run with WEFT_NVTX=1 in the environment (attach_nvtx_if_requested)
//
// Ranges go to the NVTX domain "weft", coloured by the node's domain (CPU
// or GPU worker). Per thread they nest as the nodes do (observer.hpp), so
// push and pop match. Tasks and task-group jobs report begin and end
// together when they end (docs/observers.md): their ranges are empty.
// NVTX ships with CUDA (its headers only; without a profiler attached
// each call costs a few nanoseconds), so the observer is there only in
// builds with the CUDA backend; elsewhere constructing one throws.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <weft/runtime/executor.hpp>
#include <weft/runtime/observer.hpp>

namespace weft {

class NvtxObserver : public Observer {
 public:
  // Throws std::runtime_error in a build without the CUDA backend.
  NvtxObserver();

  void on_node_begin(const NodeEvent& e) noexcept override;
  void on_node_end(const NodeEvent& e) noexcept override;
  void on_run_begin(const RunEvent& e) noexcept override;
  void on_run_end(const RunEvent& e) noexcept override;

 private:
  struct OpenRun {
    const void* graph;
    std::int64_t run;
    std::uint64_t range;  // nvtxRangeId_t
  };
  [[maybe_unused]] void* domain_ = nullptr;  // nvtxDomainHandle_t (unused without NVTX)
  std::mutex runs_mutex_;                    // runs begin and end on any thread
  std::vector<OpenRun> runs_;
};

// Whether this build has NVTX (the CUDA backend).
bool nvtx_available() noexcept;

// Attaches an NvtxObserver to `executor` when the environment says
// WEFT_NVTX=1 and NVTX is available, and returns it (else null; with
// WEFT_NVTX=1 in a build without NVTX it says so on stderr, once).
std::shared_ptr<NvtxObserver> attach_nvtx_if_requested(Executor& executor);

}  // namespace weft

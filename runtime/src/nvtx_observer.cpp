// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// NvtxObserver in a build with the CUDA backend: NVTX3, header-only, from
// the CUDA toolkit.
#include <weft/runtime/nvtx_observer.hpp>

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace weft {
namespace {

nvtxEventAttributes_t attributes(const char* message, Domain domain) noexcept {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = domain == Domain::Gpu ? 0xFF76B900U : 0xFF3C78D8U;  // green for GPU workers, blue for CPU
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

nvtxDomainHandle_t domain_of(void* domain) noexcept { return static_cast<nvtxDomainHandle_t>(domain); }

}  // namespace

NvtxObserver::NvtxObserver() : domain_(nvtxDomainCreateA("weft")) {}

void NvtxObserver::on_node_begin(const NodeEvent& e) noexcept {
  const nvtxEventAttributes_t a = attributes(e.name, e.domain);
  nvtxDomainRangePushEx(domain_of(domain_), &a);
}

void NvtxObserver::on_node_end(const NodeEvent&) noexcept { nvtxDomainRangePop(domain_of(domain_)); }

// A run may end on another thread than the one it began on: a start/end
// range, not a push/pop one.
void NvtxObserver::on_run_begin(const RunEvent& e) noexcept {
  try {
    const std::string name = "run " + std::to_string(e.run);
    const nvtxEventAttributes_t a = attributes(name.c_str(), Domain::Cpu);
    const nvtxRangeId_t range = nvtxDomainRangeStartEx(domain_of(domain_), &a);
    std::lock_guard<std::mutex> lock(runs_mutex_);
    runs_.push_back({e.graph, e.run, range});
  } catch (...) {
    // Out of memory: this run gets no range.
  }
}

void NvtxObserver::on_run_end(const RunEvent& e) noexcept {
  std::lock_guard<std::mutex> lock(runs_mutex_);
  const auto open = std::find_if(runs_.rbegin(), runs_.rend(),
                                 [&](const OpenRun& r) { return r.graph == e.graph && r.run == e.run; });
  if (open == runs_.rend()) return;  // attached while it ran
  nvtxDomainRangeEnd(domain_of(domain_), open->range);
  runs_.erase(std::next(open).base());
}

bool nvtx_available() noexcept { return true; }

std::shared_ptr<NvtxObserver> attach_nvtx_if_requested(Executor& executor) {
  const char* value = std::getenv("WEFT_NVTX");
  if (value == nullptr || std::string(value) != "1") return nullptr;
  auto observer = std::make_shared<NvtxObserver>();
  executor.attach(observer);
  return observer;
}

}  // namespace weft

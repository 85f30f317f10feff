// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GPU timelines: the kernels and copies of GPU nodes, timed with CUDA events
// and handed to observers as device spans (observer.hpp) before their nodes
// complete; the trace's GPU tracks; NVTX ranges around nodes.
#include <weft/graph/graph.hpp>
#include <weft/runtime/nvtx_observer.hpp>
#include <weft/runtime/trace.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "gpu_test_support.cuh"

namespace {

// How far an event's host time may be off (docs/cuda.md says a few
// microseconds; a loaded machine gets a wide margin).
constexpr std::int64_t kSlackNs = 100'000;
constexpr std::uint64_t kSpinNs = 300'000;

__device__ std::uint64_t global_nanoseconds() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin(std::uint64_t nanoseconds, int* out) {
  const std::uint64_t start = global_nanoseconds();
  while (global_nanoseconds() - start < nanoseconds) {
  }
  *out += 1;
}

struct Recorder : weft::Observer {
  struct Run {
    std::int64_t begin_ns = 0, end_ns = 0;
  };
  struct Span {
    weft::DeviceSpanEvent event;
    std::int64_t delivered_ns;
  };
  std::mutex mutex;
  std::map<std::pair<const void*, std::int64_t>, Run> runs;
  std::vector<Span> spans;
  std::map<std::string, std::vector<std::int64_t>> node_begins;  // by name, in run order

  void on_run_begin(const weft::RunEvent& e) noexcept override {
    std::lock_guard<std::mutex> lock(mutex);
    runs[{e.graph, e.run}].begin_ns = e.time_ns;
  }
  void on_run_end(const weft::RunEvent& e) noexcept override {
    std::lock_guard<std::mutex> lock(mutex);
    runs[{e.graph, e.run}].end_ns = e.time_ns;
  }
  void on_node_begin(const weft::NodeEvent& e) noexcept override {
    std::lock_guard<std::mutex> lock(mutex);
    node_begins[e.name].push_back(e.time_ns);
  }
  void on_device_span(const weft::DeviceSpanEvent& e) noexcept override {
    const std::int64_t now = weft::observer_clock();
    std::lock_guard<std::mutex> lock(mutex);
    spans.push_back({e, now});
  }
};

// Upload on copy stream 0, two kernels on the compute stream (the first
// with only a GPU successor on its own stream, so it has no callback of
// its own), a download on copy stream 1, and a host node.
struct Pipeline {
  weft::test::DeviceArray<int> counter{std::vector<int>{0}};
  std::vector<int> host = std::vector<int>(1024, 1);
  int* device_buffer = nullptr;
  int checked = 0;
  weft::Graph g;

  Pipeline() {
    weft::cuda::check(cudaMalloc(&device_buffer, host.size() * sizeof(int)), "cudaMalloc", 0);
    g.emplace(weft::on_gpu_copy(0, 0, [this](weft::GpuStream s) {
       weft::cuda::check(cudaMemcpyAsync(device_buffer, host.data(), host.size() * sizeof(int),
                                         cudaMemcpyHostToDevice, s.stream),
                         "cudaMemcpyAsync", s.device);
     })).named("upload");
    g.then(weft::on_gpu(0, [this](weft::GpuStream s) {
       spin<<<1, 1, 0, s.stream>>>(kSpinNs, counter.data());
       weft::cuda::check(cudaGetLastError(), "spin", s.device);
     })).named("spin");
    g.then(weft::on_gpu(0, [this](weft::GpuStream s) {
       spin<<<1, 1, 0, s.stream>>>(kSpinNs / 3, counter.data());
       weft::cuda::check(cudaGetLastError(), "spin", s.device);
     })).named("spin again");
    g.then(weft::on_gpu_copy(0, 1, [this](weft::GpuStream s) {
       weft::cuda::check(cudaMemcpyAsync(host.data(), device_buffer, host.size() * sizeof(int),
                                         cudaMemcpyDeviceToHost, s.stream),
                         "cudaMemcpyAsync", s.device);
     })).named("download");
    g.then([this] { checked += static_cast<int>(std::count(host.begin(), host.end(), 1)); }).named("check");
  }
  ~Pipeline() { (void)cudaFree(device_buffer); }
};

}  // namespace

TEST_CASE("cuda.timeline.every_gpu_node_yields_a_device_span_within_its_run") {
  if (!weft::test::gpu_present()) return;
  Pipeline p;
  weft::Executor executor;
  auto recorder = std::make_shared<Recorder>();
  executor.run(p.g).wait().get();  // unobserved: no spans
  executor.attach(recorder);
  constexpr int kRuns = 4;
  executor.run_n(p.g, kRuns).wait().get();
  executor.detach(recorder);
  executor.run(p.g).wait().get();  // detached: no more
  CHECK(p.checked == 1024 * (kRuns + 2));

  std::lock_guard<std::mutex> lock(recorder->mutex);
  REQUIRE(recorder->runs.size() == kRuns);
  REQUIRE(recorder->spans.size() == 4 * kRuns);
  const std::map<std::string, int> streams{{"upload", 0}, {"spin", -1}, {"spin again", -1}, {"download", 1}};
  std::map<std::string, std::vector<weft::DeviceSpanEvent>> by_name;
  for (const Recorder::Span& s : recorder->spans) {
    const weft::DeviceSpanEvent& e = s.event;
    INFO("span of " << e.name);
    REQUIRE(streams.count(e.name) == 1);
    CHECK(e.device == 0);
    CHECK(e.stream == streams.at(e.name));
    CHECK(e.graph == static_cast<const void*>(&p.g));
    CHECK(e.node >= 0);
    CHECK(e.begin_ns <= e.end_ns);
    // Delivered within a run (before its end), and the work it timed too.
    const auto run = std::find_if(recorder->runs.begin(), recorder->runs.end(), [&](const auto& r) {
      return r.second.begin_ns <= s.delivered_ns && s.delivered_ns <= r.second.end_ns;
    });
    REQUIRE(run != recorder->runs.end());
    CHECK(e.begin_ns >= run->second.begin_ns - kSlackNs);
    CHECK(e.end_ns <= run->second.end_ns + kSlackNs);
    CHECK(e.end_ns <= s.delivered_ns + kSlackNs);
    by_name[e.name].push_back(e);
  }
  for (const auto& [name, spans] : by_name) {
    REQUIRE(spans.size() == kRuns);
    const std::vector<std::int64_t>& begins = recorder->node_begins.at(name);
    REQUIRE(begins.size() == kRuns);
    for (int r = 0; r < kRuns; ++r) {
      INFO(name << " in run " << r);
      // Runs of one graph follow one another, and so do their spans.
      if (r > 0) CHECK(spans[r - 1].end_ns <= spans[r].begin_ns + kSlackNs);
      // The GPU cannot start the work before the node's call queued it.
      CHECK(spans[r].begin_ns >= begins[r] - kSlackNs);
    }
  }
  for (int r = 0; r < kRuns; ++r) {
    INFO("run " << r);
    const auto& spin = by_name.at("spin")[r];
    CHECK(spin.end_ns - spin.begin_ns >= static_cast<std::int64_t>(kSpinNs) - 20'000);
    // Stream order and the events between streams, as the GPU ran them.
    CHECK(by_name.at("upload")[r].end_ns <= spin.begin_ns + kSlackNs);
    CHECK(spin.end_ns <= by_name.at("spin again")[r].begin_ns + kSlackNs);
    CHECK(by_name.at("spin again")[r].end_ns <= by_name.at("download")[r].begin_ns + kSlackNs);
  }
}

TEST_CASE("cuda.timeline.a_trace_of_gpu_nodes_has_a_track_per_device_and_stream") {
  if (!weft::test::gpu_present()) return;
  Pipeline p;
  weft::Executor executor;
  executor.start_trace();
  executor.run_n(p.g, 2).wait().get();
  const std::string path = (std::filesystem::temp_directory_path() / "weft_gpu_timeline.json").string();
  executor.write_trace(path);
  std::ifstream in(path);
  REQUIRE(in.good());
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::map<int, std::string> tracks;
  std::multimap<std::string, int> spans;  // name -> tid
  for (const nlohmann::json& e : doc.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      tracks[e.at("tid").get<int>()] = e.at("args").at("name").get<std::string>();
    if (e.at("ph") == "X" && e.value("cat", "") == "device") {
      CHECK(e.at("dur").get<double>() >= 0.0);
      spans.emplace(e.at("name").get<std::string>(), e.at("tid").get<int>());
    }
  }
  CHECK(spans.size() == 8);
  const std::map<std::string, std::string> expected{{"upload", "GPU 0 stream 1 (copy)"},
                                                    {"spin", "GPU 0 stream 0 (compute)"},
                                                    {"spin again", "GPU 0 stream 0 (compute)"},
                                                    {"download", "GPU 0 stream 2 (copy)"}};
  for (const auto& [name, tid] : spans) {
    INFO(name);
    REQUIRE(expected.count(name) == 1);
    CHECK(tracks.at(tid) == expected.at(name));
  }
  std::filesystem::remove(path);
}

TEST_CASE("cuda.timeline.gpu_nodes_on_two_logical_devices_report_their_device") {
  if (!weft::test::gpu_present()) return;
  weft::test::LogicalDevices two(2);
  weft::test::DeviceArray<int> counter(std::vector<int>{0});
  weft::Graph g;
  for (int d = 0; d < 2; ++d) {
    g.emplace(weft::on_gpu(d, [&](weft::GpuStream s) {
       spin<<<1, 1, 0, s.stream>>>(10'000, counter.data());
       weft::cuda::check(cudaGetLastError(), "spin", s.device);
     })).named(d == 0 ? "on 0" : "on 1");
  }
  weft::Executor executor;
  auto recorder = std::make_shared<Recorder>();
  executor.attach(recorder);
  executor.run(g).wait().get();
  executor.detach(recorder);
  std::lock_guard<std::mutex> lock(recorder->mutex);
  REQUIRE(recorder->spans.size() == 2);
  for (const Recorder::Span& s : recorder->spans)
    CHECK(s.event.device == (std::string(s.event.name) == "on 0" ? 0 : 1));
}

// No GPU needed: host nodes only; NVTX without a profiler does nothing.
TEST_CASE("cuda.timeline.an_nvtx_observer_sees_nodes_and_runs") {
  REQUIRE(weft::nvtx_available());
  weft::ExecutorConfig cfg;
  cfg.cpu_workers = 2;
  cfg.use_cuda = false;
  weft::Executor executor(cfg);
  auto nvtx = std::make_shared<weft::NvtxObserver>();
  executor.attach(nvtx);
  int ran = 0;
  weft::Graph g;
  g.emplace([&] { ++ran; }).named("a");
  g.then([&] { ++ran; }).named("b");
  executor.run_n(g, 3).wait().get();
  executor.detach(nvtx);
  CHECK(ran == 6);
}

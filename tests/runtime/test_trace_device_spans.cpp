// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The tracer's GPU tracks, fed synthetic device spans (no GPU needed): one
// track per device and stream, named, with each span's node, graph and times.
#include <weft/runtime/trace.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

weft::DeviceSpanEvent span(const char* name, int device, int stream, std::int64_t node, std::int64_t begin_ns,
                           std::int64_t end_ns, const void* graph) {
  weft::DeviceSpanEvent e;
  e.name = name;
  e.device = device;
  e.stream = stream;
  e.node = node;
  e.begin_ns = begin_ns;
  e.end_ns = end_ns;
  e.graph = graph;
  return e;
}

}  // namespace

TEST_CASE("Trace.device_spans_go_on_one_track_per_device_and_stream") {
  weft::Tracer tracer(2);
  const int graph = 0;
  tracer.on_device_span(span("ignored", 0, -1, 0, 0, 1, &graph));  // before start(): not recorded
  tracer.start();
  const std::int64_t t0 = weft::observer_clock();
  tracer.on_device_span(span("kernel", 0, -1, 1, t0 + 1000, t0 + 5000, &graph));
  tracer.on_device_span(span("upload", 0, 0, 0, t0 + 200, t0 + 900, &graph));
  tracer.on_device_span(span("kernel", 1, -1, 2, t0 + 1500, t0 + 2500, &graph));
  tracer.on_device_span(span("kernel again", 0, -1, 3, t0 + 6000, t0 + 6000, &graph));
  tracer.stop();
  tracer.on_device_span(span("late", 0, -1, 4, t0 + 7000, t0 + 8000, &graph));  // stopped: not recorded

  const std::vector<weft::TraceDeviceSpan> spans = tracer.device_spans();
  REQUIRE(spans.size() == 4);
  CHECK(spans[0].end_ns - spans[0].start_ns == 4000);
  CHECK(spans[1].start_ns < spans[0].start_ns);
  CHECK(spans[0].start_ns >= 0);  // since start()
  CHECK(spans[2].device == 1);
  CHECK(spans[1].stream == 0);

  const std::string path = (std::filesystem::temp_directory_path() / "weft_device_spans.json").string();
  tracer.write_chrome_json(path, {weft::Domain::Cpu, weft::Domain::Gpu});
  std::ifstream in(path);
  REQUIRE(in.good());
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::map<int, std::string> track_names;
  std::vector<nlohmann::json> device_spans;
  for (const nlohmann::json& e : doc.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      track_names[e.at("tid").get<int>()] = e.at("args").at("name").get<std::string>();
    if (e.at("ph") == "X" && e.value("cat", "") == "device") device_spans.push_back(e);
  }
  CHECK(track_names.at(0) == "worker 0 (cpu)");
  REQUIRE(device_spans.size() == 4);
  std::map<std::string, int> tid_of;
  for (const nlohmann::json& e : device_spans) {
    const int tid = e.at("tid").get<int>();
    CHECK(tid >= 2);  // never a worker's track
    const std::string track = track_names.at(tid);
    const int device = e.at("args").at("device").get<int>(), stream = e.at("args").at("stream").get<int>();
    CHECK(track == "GPU " + std::to_string(device) + " stream " + std::to_string(stream) +
                       (stream == 0 ? " (compute)" : " (copy)"));
    CHECK(e.at("dur").get<double>() >= 0.0);
    CHECK(e.at("args").at("graph") == 1);
    const std::string name = e.at("name").get<std::string>();
    if (tid_of.count(name) == 0) tid_of[name] = tid;
  }
  CHECK(tid_of.size() == 3);
  CHECK(tid_of.at("kernel") == tid_of.at("kernel again"));  // device 0's compute stream
  CHECK(tid_of.at("kernel") != tid_of.at("upload"));        // its copy stream 0
  CHECK(device_spans[0].at("args").at("node") == 1);
  CHECK(device_spans[0].at("dur").get<double>() == doctest::Approx(4.0));  // microseconds
  CHECK(device_spans[1].at("args").at("stream") == 1);
  std::filesystem::remove(path);
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/runtime/executor.hpp>
#include <weft/runtime/replacing_file.hpp>
#include <weft/runtime/trace.hpp>
#include <weft/runtime/utf8.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace weft {

const char* loop_trace_name(const char* loop) noexcept {
  const WorkerContext* worker = Executor::current_worker();
  const char* node = worker != nullptr ? worker->node_name() : nullptr;
  return node != nullptr ? node : loop;
}

std::string numbered_trace_path(const std::string& path, int n) {
  if (n == 0) return path;
  const std::size_t slash = path.find_last_of('/');
  const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t dot = path.find_last_of('.');
  // No extension (or a name that only starts with a dot): the number goes last.
  if (dot == std::string::npos || dot <= base) return path + "." + std::to_string(n);
  return path.substr(0, dot) + "." + std::to_string(n) + path.substr(dot);
}

Tracer::Tracer(int workers)
    : origin_ns_(observer_clock()),
      buffers_(std::make_unique<Buffer[]>(static_cast<std::size_t>(workers))),
      workers_(workers) {}

void Tracer::start() {
  for (int w = 0; w < workers_; ++w) {
    buffers_[static_cast<std::size_t>(w)].events.clear();
    buffers_[static_cast<std::size_t>(w)].successors.clear();
    buffers_[static_cast<std::size_t>(w)].names.clear();
  }
  {
    std::lock_guard<std::mutex> lock(runs_mutex_);
    runs_.clear();
    open_runs_.clear();
  }
  {
    std::lock_guard<std::mutex> lock(device_mutex_);
    device_spans_.clear();
    device_names_.clear();
  }
  origin_ns_ = observer_clock();
  // The executor publishes this flag to workers through the next job it
  // hands them (deque and inbox are release/acquire), so a relaxed store does.
  active_.store(true, std::memory_order_relaxed);
}

// A run may begin on one thread and end on another; runs are few (one per
// pass), so a lock does.
void Tracer::on_run_begin(const RunEvent& e) noexcept {
  if (!active()) return;
  std::lock_guard<std::mutex> lock(runs_mutex_);
  open_runs_.push_back({e.graph, e.run, e.nodes, e.time_ns - origin_ns_, 0});
}

void Tracer::on_run_end(const RunEvent& e) noexcept {
  std::lock_guard<std::mutex> lock(runs_mutex_);
  const auto open = std::find_if(open_runs_.rbegin(), open_runs_.rend(),
                                 [&](const TraceRun& r) { return r.graph == e.graph && r.run == e.run; });
  if (open == open_runs_.rend()) return;  // began before the trace started
  TraceRun run = *open;
  open_runs_.erase(std::next(open).base());
  run.end_ns = e.time_ns - origin_ns_;
  if (active()) runs_.push_back(run);
}

// A node's span opens and closes on one worker, nested ones inside (a node
// that waits runs others meanwhile), so a stack per worker pairs them. It
// is kept while stopped too: a stop between a begin and its end must not
// pair that end with an outer begin.
void Tracer::on_node_begin(const NodeEvent& e) noexcept {
  if (e.worker < 0 || e.worker >= workers_) return;
  buffers_[static_cast<std::size_t>(e.worker)].open.push_back(e.time_ns);
}

void Tracer::on_node_end(const NodeEvent& e) noexcept {
  if (e.worker < 0 || e.worker >= workers_) return;
  Buffer& buffer = buffers_[static_cast<std::size_t>(e.worker)];
  if (buffer.open.empty()) return;  // attached between this node's begin and end
  const std::int64_t begin = buffer.open.back();
  buffer.open.pop_back();
  if (!active()) return;
  TraceEvent event{buffer.names.keep(e.name), begin - origin_ns_, e.time_ns - origin_ns_, e.domain};
  if (e.node >= 0) {
    event.level = e.level;
    event.partition = e.partition;
    event.device = e.device;
    event.node = e.node;
    event.run = e.run;
    event.graph = e.graph;
    // Kept for the file's flow arrows: the edges out of each span recorded.
    const SuccessorRow& row = e.successors;
    event.successors = buffer.successors.size();
    event.successor_count = static_cast<std::uint32_t>(row.count);
    if (event.successor_count == 1) {  // the common case (a chain), kept cheap
      buffer.successors.push_back(row.narrow != nullptr ? row.narrow[0] : row.wide[0]);
    } else if (event.successor_count > 1 && row.narrow != nullptr) {
      buffer.successors.insert(buffer.successors.end(), row.narrow, row.narrow + event.successor_count);
    } else if (event.successor_count > 1) {
      buffer.successors.insert(buffer.successors.end(), row.wide, row.wide + event.successor_count);
    }
  }
  buffer.events.push_back(event);
}

std::vector<std::vector<TraceEvent>> Tracer::events() const {
  std::vector<std::vector<TraceEvent>> out;
  for (int w = 0; w < workers_; ++w) out.push_back(buffers_[static_cast<std::size_t>(w)].events);
  return out;
}

std::vector<TraceRun> Tracer::runs() const {
  std::lock_guard<std::mutex> lock(runs_mutex_);
  return runs_;
}

// Device spans arrive one at a time from the GPU timeline thread (before
// their nodes complete), so a lock costs nothing anyone waits for.
void Tracer::on_device_span(const DeviceSpanEvent& e) noexcept {
  if (!active()) return;
  std::lock_guard<std::mutex> lock(device_mutex_);
  device_spans_.push_back({device_names_.keep(e.name), e.begin_ns - origin_ns_, e.end_ns - origin_ns_,
                           e.device, e.stream, e.node, e.run, e.graph});
}

std::vector<TraceDeviceSpan> Tracer::device_spans() const {
  std::lock_guard<std::mutex> lock(device_mutex_);
  return device_spans_;
}

namespace {

// A JSON string whatever `text` holds: quotes, backslashes and control
// characters escaped, and each byte that is not UTF-8 written as U+FFFD.
void write_json_string(std::FILE* f, const char* text) {
  std::fputc('"', f);
  const std::string_view all(text);
  for (std::size_t at = 0; at < all.size();) {
    const auto c = static_cast<unsigned char>(all[at]);
    const std::size_t length = utf8_sequence_length(all.substr(at));
    if (length == 0) {
      std::fputs("\\ufffd", f);
      ++at;
      continue;
    }
    if (c == '"' || c == '\\') {
      std::fputc('\\', f);
      std::fputc(c, f);
    } else if (c < 0x20 || c == 0x7f) {
      std::fprintf(f, "\\u%04x", c);
    } else {
      std::fwrite(all.data() + at, 1, length, f);
    }
    at += length;
  }
  std::fputc('"', f);
}

}  // namespace

namespace detail {

// The file: metadata, each worker's spans, the runs' tracks, and a flow
// arrow for each edge of a run between two spans recorded.
class TraceFile {
 public:
  TraceFile(const Tracer& tracer, std::FILE* f) : tracer_(tracer), f_(f) {}

  void write(const std::vector<Domain>& worker_domains) {
    std::fprintf(f_, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"weft_trace_version\":1,\"workers\":%d},\n",
                 tracer_.workers_);
    std::fputs("\"traceEvents\":[\n", f_);
    std::fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"weft\"}}",
               f_);
    write_runs();  // first: they number the graphs in the order they ran
    for (int w = 0; w < tracer_.workers_; ++w) {
      const char* domain = w < static_cast<int>(worker_domains.size())
                               ? to_string(worker_domains[static_cast<std::size_t>(w)])
                               : "cpu";
      std::fprintf(f_,
                   ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":"
                   "\"worker %d (%s)\"}}",
                   w, w, domain);
      for (const TraceEvent& e : buffer(w).events) write_span(e, w);
    }
    write_device_spans();
    write_edges();
    std::fputs("\n]}\n", f_);
  }

 private:
  const Tracer::Buffer& buffer(int w) const { return tracer_.buffers_[static_cast<std::size_t>(w)]; }

  // Graphs by the order the trace meets them, from 1.
  int graph_number(const void* graph) {
    return graphs_.try_emplace(graph, static_cast<int>(graphs_.size()) + 1).first->second;
  }

  // Chrome's trace format counts microseconds.
  static double us(std::int64_t ns) { return static_cast<double>(ns) / 1e3; }

  void write_span(const TraceEvent& e, int worker) {
    std::fputs(",\n{\"name\":", f_);
    write_json_string(f_, e.name);
    std::fprintf(f_,
                 ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":%d,\"args\":{"
                 "\"domain\":\"%s\"",
                 to_string(e.domain), us(e.start_ns), us(e.end_ns - e.start_ns), worker, to_string(e.domain));
    if (e.node >= 0) {
      std::fprintf(f_, ",\"node\":%lld,\"graph\":%d", static_cast<long long>(e.node), graph_number(e.graph));
      if (e.level >= 0) std::fprintf(f_, ",\"level\":%d", e.level);
      if (e.partition >= 0) std::fprintf(f_, ",\"partition\":%d", e.partition);
      if (e.device >= 0) std::fprintf(f_, ",\"device\":%d", e.device);
      if (e.run >= 0) std::fprintf(f_, ",\"run\":%lld", static_cast<long long>(e.run));
    }
    std::fputs("}}", f_);
  }

  // A span per run, on tracks after the workers': each graph's runs on one
  // ("runs" when there is one track), a second one when runs of a graph
  // overlap (a subgraph run by two nodes at once).
  void write_runs() {
    std::vector<TraceRun> runs = tracer_.runs();
    std::stable_sort(runs.begin(), runs.end(),
                     [](const TraceRun& a, const TraceRun& b) { return a.start_ns < b.start_ns; });
    struct Track {
      const void* graph;
      int lane;  // among its graph's tracks
      std::int64_t end_ns;
    };
    std::vector<Track> tracks;
    std::vector<std::size_t> track_of(runs.size());
    for (std::size_t r = 0; r < runs.size(); ++r) {
      graph_number(runs[r].graph);
      int lanes = 0;
      std::size_t t = 0;
      for (; t < tracks.size(); ++t) {
        if (tracks[t].graph != runs[r].graph) continue;
        if (tracks[t].end_ns <= runs[r].start_ns) break;
        ++lanes;
      }
      if (t == tracks.size()) tracks.push_back({runs[r].graph, lanes, 0});
      tracks[t].end_ns = runs[r].end_ns;
      track_of[r] = t;
    }
    for (std::size_t t = 0; t < tracks.size(); ++t) {
      // "runs", "runs (graph 2)", "runs (graph 2) 2" (printed piecewise:
      // g++ 12 -O3 warns falsely on "literal" + std::string).
      std::fprintf(f_,
                   ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"runs",
                   run_tid(t));
      if (tracks.size() > 1) std::fprintf(f_, " (graph %d)", graph_number(tracks[t].graph));
      if (tracks[t].lane > 0) std::fprintf(f_, " %d", tracks[t].lane + 1);
      std::fputs("\"}}", f_);
    }
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const TraceRun& run = runs[r];
      std::fprintf(
          f_,
          ",\n{\"name\":\"run %lld\",\"cat\":\"run\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,"
          "\"tid\":%d,\"args\":{\"graph\":%d,\"run\":%lld,\"nodes\":%lld}}",
          static_cast<long long>(run.run), us(run.start_ns), us(run.end_ns - run.start_ns),
          run_tid(track_of[r]), graph_number(run.graph), static_cast<long long>(run.run),
          static_cast<long long>(run.nodes));
    }
  }
  int run_tid(std::size_t track) const { return tracer_.workers_ + static_cast<int>(track); }

  // A track per device and stream, "GPU <d> stream <s>" (s = 0 the compute
  // stream, k + 1 copy stream k), far above the workers' and runs' tids.
  void write_device_spans() {
    const std::vector<TraceDeviceSpan> spans = tracer_.device_spans();
    const auto tid = [](const TraceDeviceSpan& e) { return 1'000'000 + e.device * 1000 + e.stream + 1; };
    std::unordered_set<int> named;
    for (const TraceDeviceSpan& e : spans) {
      if (!named.insert(tid(e)).second) continue;
      std::fprintf(f_,
                   ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":"
                   "\"GPU %d stream %d (%s)\"}}",
                   tid(e), e.device, e.stream + 1, e.stream < 0 ? "compute" : "copy");
    }
    for (const TraceDeviceSpan& e : spans) {
      std::fputs(",\n{\"name\":", f_);
      write_json_string(f_, e.name);
      std::fprintf(f_,
                   ",\"cat\":\"device\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":%d,"
                   "\"args\":{\"device\":%d,\"stream\":%d,\"node\":%lld,\"graph\":%d",
                   us(e.start_ns), us(e.end_ns - e.start_ns), tid(e), e.device, e.stream + 1,
                   static_cast<long long>(e.node), graph_number(e.graph));
      if (e.run >= 0) std::fprintf(f_, ",\"run\":%lld", static_cast<long long>(e.run));
      std::fputs("}}", f_);
    }
  }

  // For each edge u -> s out of a recorded span u, the first span of s in
  // the same run of the same graph that started after u did (a node runs
  // once a pass, or again in a loop); a flow from u to it. Each end sits
  // 1 ns inside its span, so it binds to that span and not to one nested
  // in it or around it.
  void write_edges() {
    struct Span {
      std::uintptr_t graph;
      std::int64_t run, node, start_ns;
      int worker;
      std::size_t index;
      auto key() const { return std::tie(graph, run, node, start_ns); }
    };
    std::vector<Span> spans;
    for (int w = 0; w < tracer_.workers_; ++w) {
      const std::vector<TraceEvent>& events = buffer(w).events;
      for (std::size_t i = 0; i < events.size(); ++i) {
        const TraceEvent& e = events[i];
        if (e.node >= 0)
          spans.push_back({reinterpret_cast<std::uintptr_t>(e.graph), e.run, e.node, e.start_ns, w, i});
      }
    }
    const auto before = [](const Span& a, const Span& b) { return a.key() < b.key(); };
    std::sort(spans.begin(), spans.end(), before);
    const auto inside = [](const TraceEvent& e) {
      return e.start_ns + std::min<std::int64_t>(1, e.end_ns - e.start_ns);
    };
    long long id = 0;
    for (int w = 0; w < tracer_.workers_; ++w) {
      const Tracer::Buffer& from = buffer(w);
      for (const TraceEvent& u : from.events) {
        for (std::uint32_t k = 0; k < u.successor_count; ++k) {
          const Span probe{reinterpret_cast<std::uintptr_t>(u.graph),
                           u.run,
                           from.successors[u.successors + k],
                           u.start_ns + 1,
                           0,
                           0};
          const auto next = std::lower_bound(spans.begin(), spans.end(), probe, before);
          if (next == spans.end() || next->graph != probe.graph || next->run != probe.run ||
              next->node != probe.node)
            continue;  // not recorded in this run (a branch not taken, a node before the trace started)
          const TraceEvent& v = buffer(next->worker).events[next->index];
          ++id;
          std::fprintf(
              f_,
              ",\n{\"name\":\"edge\",\"cat\":\"edge\",\"ph\":\"s\",\"id\":%lld,\"ts\":%.3f,\"pid\":1,"
              "\"tid\":%d}"
              ",\n{\"name\":\"edge\",\"cat\":\"edge\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%lld,\"ts\":%.3f,"
              "\"pid\":1,\"tid\":%d}",
              id, us(inside(u)), w, id, us(inside(v)), next->worker);
        }
      }
    }
  }

  const Tracer& tracer_;
  std::FILE* f_;
  std::unordered_map<const void*, int> graphs_;
};

}  // namespace detail

void Tracer::write_chrome_json(const std::string& path, const std::vector<Domain>& worker_domains) const {
  ReplacingFile replacing(path);  // an interrupted write leaves the previous trace
  std::FILE* f = std::fopen(replacing.write_path().c_str(), "w");
  if (f == nullptr) throw std::runtime_error("trace: cannot write '" + path + "'");
  try {
    detail::TraceFile(*this, f).write(worker_domains);
  } catch (...) {
    std::fclose(f);
    throw;
  }
  const bool ok = std::ferror(f) == 0;
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error("trace: error while writing '" + path + "'");
  replacing.commit();
}

}  // namespace weft

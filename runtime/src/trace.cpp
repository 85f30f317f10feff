// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/runtime/trace.hpp>
#include <weft/runtime/utf8.hpp>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>

namespace weft {

const char* intern_trace_name(std::string_view name) {
  static std::mutex mutex;
  static std::unordered_set<std::string> names;  // node-based: pointers stay valid
  std::lock_guard<std::mutex> lock(mutex);
  return names.emplace(name).first->c_str();
}

Tracer::Tracer(int workers)
    : origin_ns_(observer_clock()),
      buffers_(std::make_unique<Buffer[]>(static_cast<std::size_t>(workers))),
      workers_(workers) {}

void Tracer::start() {
  for (int w = 0; w < workers_; ++w) buffers_[static_cast<std::size_t>(w)].events.clear();
  origin_ns_ = observer_clock();
  // The executor publishes this flag to workers through the next job it
  // hands them (deque and inbox are release/acquire), so a relaxed store does.
  active_.store(true, std::memory_order_relaxed);
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
  if (active()) buffer.events.push_back({e.name, begin - origin_ns_, e.time_ns - origin_ns_, e.domain});
}

std::vector<std::vector<TraceEvent>> Tracer::events() const {
  std::vector<std::vector<TraceEvent>> out;
  for (int w = 0; w < workers_; ++w) out.push_back(buffers_[static_cast<std::size_t>(w)].events);
  return out;
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

void Tracer::write_chrome_json(const std::string& path, const std::vector<Domain>& worker_domains) const {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw std::runtime_error("trace: cannot write '" + path + "'");
  std::fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"weft_trace_version\":1,\"workers\":%d},\n",
               workers_);
  std::fputs("\"traceEvents\":[\n", f);
  bool first = true;
  for (int w = 0; w < workers_; ++w) {
    const char* domain = w < static_cast<int>(worker_domains.size())
                             ? to_string(worker_domains[static_cast<std::size_t>(w)])
                             : "cpu";
    std::fprintf(f,
                 "%s{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"worker "
                 "%d (%s)\"}}",
                 first ? "" : ",\n", w, w, domain);
    first = false;
    for (const TraceEvent& e : buffers_[static_cast<std::size_t>(w)].events) {
      std::fputs(",\n{\"name\":", f);
      write_json_string(f, e.name);
      // Chrome's trace format counts microseconds.
      std::fprintf(f,
                   ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":%d,\"args\":{"
                   "\"domain\":\"%s\"}}",
                   to_string(e.domain), static_cast<double>(e.start_ns) / 1e3,
                   static_cast<double>(e.end_ns - e.start_ns) / 1e3, w, to_string(e.domain));
    }
  }
  std::fputs("\n]}\n", f);
  const bool ok = std::ferror(f) == 0;
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error("trace: error while writing '" + path + "'");
}

}  // namespace weft

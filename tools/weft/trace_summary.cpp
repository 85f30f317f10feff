#include "trace_summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include "table.hpp"

#include <weft/graph/json_document.hpp>

namespace weft::tool {

namespace {

// More workers than this in otherData is taken for corruption, not a machine.
constexpr std::int64_t kMaxWorkers = 1 << 16;
// A trace-event file nests a few levels; far deeper input is hostile.
constexpr int kMaxDepth = 64;
constexpr double kMaxMicroseconds = 9007199254740992.0;  // 2^53

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::invalid_argument("trace JSON: " + where + ": " + what);
}

const nlohmann::json& member(const nlohmann::json& event, const char* key, const std::string& where) {
  auto it = event.find(key);
  if (it == event.end()) fail(where, std::string("missing field '") + key + "'");
  return *it;
}

double number_field(const nlohmann::json& event, const char* key, const std::string& where) {
  const nlohmann::json& v = member(event, key, where);
  if (!v.is_number()) fail(where + "." + key, "expected a number, got " + std::string(v.type_name()));
  return v.get<double>();
}

std::int64_t integer_field(const nlohmann::json& object, const char* key, const std::string& where,
                           std::int64_t lo, std::int64_t hi) {
  const nlohmann::json& v = member(object, key, where);
  if (!v.is_number_integer())
    fail(where + "." + key, "expected an integer, got " + std::string(v.type_name()));
  const bool too_big = v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi);
  const std::int64_t x = too_big ? hi : v.get<std::int64_t>();
  if (too_big || x < lo || x > hi) {
    fail(where + "." + key,
         "value " + v.dump() + " outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return x;
}

TraceJob parse_job(const nlohmann::json& event, const std::string& where) {
  TraceJob job;
  const nlohmann::json& name = member(event, "name", where);
  if (!name.is_string()) fail(where + ".name", "expected a string, got " + std::string(name.type_name()));
  job.name = name.get<std::string>();
  job.start_us = number_field(event, "ts", where);
  job.duration_us = number_field(event, "dur", where);
  if (job.duration_us < 0) fail(where + ".dur", "negative duration " + std::to_string(job.duration_us));
  // Beyond 2^53 us (285 years) a time is corruption, not a trace; within it,
  // sums over any number of jobs stay finite and exact enough to print.
  if (std::fabs(job.start_us) > kMaxMicroseconds)
    fail(where + ".ts", "time " + event.at("ts").dump() + " is beyond 2^53 microseconds (285 years)");
  if (job.duration_us > kMaxMicroseconds)
    fail(where + ".dur", "duration " + event.at("dur").dump() + " is beyond 2^53 microseconds (285 years)");
  job.worker = integer_field(event, "tid", where, 0, std::numeric_limits<std::int32_t>::max());
  return job;
}

// Time covered by the union of [start, start + duration) over `jobs`.
double covered_us(std::vector<const TraceJob*> jobs) {
  std::sort(jobs.begin(), jobs.end(),
            [](const TraceJob* a, const TraceJob* b) { return a->start_us < b->start_us; });
  double covered = 0;
  double open_start = 0, open_end = -std::numeric_limits<double>::infinity();
  for (const TraceJob* job : jobs) {
    const double start = job->start_us, end = job->start_us + job->duration_us;
    if (start > open_end) {
      if (open_end > open_start) covered += open_end - open_start;
      open_start = start;
      open_end = end;
    } else {
      open_end = std::max(open_end, end);
    }
  }
  if (open_end > open_start) covered += open_end - open_start;
  return covered;
}

std::string shown_name(const std::string& name) { return name.empty() ? "(unnamed)" : name; }

}  // namespace

nlohmann::json parse_trace_document(std::string_view text) {
  return parse_json_document(text, "trace JSON", kMaxDepth);
}

Trace parse_trace(std::string_view text) { return read_trace(parse_trace_document(text)); }

nlohmann::json& trace_events(nlohmann::json& document) {
  return document.is_object() ? document.at("traceEvents") : document;
}

Trace read_trace(const nlohmann::json& doc) {
  Trace trace;
  const nlohmann::json* events = &doc;
  std::string prefix = "events";
  if (doc.is_object()) {
    events = &member(doc, "traceEvents", "document");
    prefix = "traceEvents";
    if (auto other = doc.find("otherData"); other != doc.end()) {
      if (!other->is_object())
        fail("otherData", "expected an object, got " + std::string(other->type_name()));
      if (other->contains("weft_trace_version")) {
        const std::int64_t version = integer_field(*other, "weft_trace_version", "otherData", 0,
                                                   std::numeric_limits<std::int32_t>::max());
        if (version != 1)
          fail("otherData.weft_trace_version",
               "version " + std::to_string(version) + " is not supported (expected 1)");
      }
      if (other->contains("workers"))
        trace.workers = integer_field(*other, "workers", "otherData", 0, kMaxWorkers);
      if (other->contains("rank"))
        trace.rank = integer_field(*other, "rank", "otherData", 0, std::numeric_limits<std::int32_t>::max());
    }
  } else if (!doc.is_array()) {
    fail("document", "expected an object with \"traceEvents\" (or an array of events), got " +
                         std::string(doc.type_name()));
  }
  if (!events->is_array()) fail(prefix, "expected an array, got " + std::string(events->type_name()));
  for (std::size_t i = 0; i < events->size(); ++i) {
    const nlohmann::json& event = (*events)[i];
    const std::string where = prefix + "[" + std::to_string(i) + "]";
    if (!event.is_object()) fail(where, "expected an event object, got " + std::string(event.type_name()));
    const nlohmann::json& phase = member(event, "ph", where);
    if (!phase.is_string()) fail(where + ".ph", "expected a string, got " + std::string(phase.type_name()));
    if (phase.get_ref<const std::string&>() == "X") trace.jobs.push_back(parse_job(event, where));
  }
  return trace;
}

TraceSummary summarize(const Trace& trace, std::size_t longest_count) {
  TraceSummary s;
  s.job_count = trace.jobs.size();
  std::map<std::int64_t, std::vector<const TraceJob*>> by_worker;
  for (std::int64_t w = 0; w < trace.workers; ++w) by_worker[w];
  std::map<std::string, NameTotal> by_name;
  if (!trace.jobs.empty()) {
    s.start_us = trace.jobs.front().start_us;
    s.end_us = trace.jobs.front().start_us + trace.jobs.front().duration_us;
  }
  for (const TraceJob& job : trace.jobs) {
    s.start_us = std::min(s.start_us, job.start_us);
    s.end_us = std::max(s.end_us, job.start_us + job.duration_us);
    s.total_job_us += job.duration_us;
    by_worker[job.worker].push_back(&job);
    NameTotal& total = by_name[job.name];
    total.name = job.name;
    ++total.jobs;
    total.total_us += job.duration_us;
  }
  s.span_us = s.end_us - s.start_us;
  for (const auto& [worker, jobs] : by_worker) {
    WorkerLoad load;
    load.worker = worker;
    load.jobs = jobs.size();
    load.busy_us = covered_us(jobs);
    load.busy_fraction = s.span_us > 0 ? load.busy_us / s.span_us : 0.0;
    s.workers.push_back(load);
  }
  s.longest = trace.jobs;
  const auto longer = [](const TraceJob& a, const TraceJob& b) {
    if (a.duration_us != b.duration_us) return a.duration_us > b.duration_us;
    if (a.start_us != b.start_us) return a.start_us < b.start_us;
    return a.worker < b.worker;
  };
  const std::size_t kept = std::min(longest_count, s.longest.size());
  std::partial_sort(s.longest.begin(), s.longest.begin() + static_cast<std::ptrdiff_t>(kept), s.longest.end(),
                    longer);
  s.longest.resize(kept);
  for (auto& [name, total] : by_name) s.by_name.push_back(std::move(total));
  std::stable_sort(s.by_name.begin(), s.by_name.end(),
                   [](const NameTotal& a, const NameTotal& b) { return a.total_us > b.total_us; });
  return s;
}

void print_summary(std::ostream& out, const std::string& name, const TraceSummary& s) {
  out << name << ": " << s.job_count << (s.job_count == 1 ? " job" : " jobs") << " on " << s.workers.size()
      << (s.workers.size() == 1 ? " worker" : " workers");
  if (s.job_count > 0) {
    out << ", span " << format_duration_us(s.span_us) << " (from " << format_duration_us(s.start_us) << " to "
        << format_duration_us(s.end_us) << ")";
  }
  out << '\n';
  if (!s.workers.empty()) {
    out << "workers (busy: time covered by its jobs, as a share of the span):\n";
    Table workers({"worker", "jobs", "busy", "busy %"}, "rrrr");
    for (const WorkerLoad& w : s.workers) {
      workers.add_row({std::to_string(w.worker), std::to_string(w.jobs), format_duration_us(w.busy_us),
                       format_percent(w.busy_fraction)});
    }
    workers.print(out);
  }
  if (!s.longest.empty()) {
    out << "longest jobs:\n";
    Table longest({"name", "worker", "start", "duration"}, "lrrr");
    for (const TraceJob& job : s.longest) {
      longest.add_row({shown_name(job.name), std::to_string(job.worker), format_duration_us(job.start_us),
                       format_duration_us(job.duration_us)});
    }
    longest.print(out);
  }
  if (!s.by_name.empty()) {
    out << "time by node name (share: of all job time):\n";
    Table names({"name", "jobs", "total", "share"}, "lrrr");
    for (const NameTotal& t : s.by_name) {
      names.add_row({shown_name(t.name), std::to_string(t.jobs), format_duration_us(t.total_us),
                     format_percent(s.total_job_us > 0 ? t.total_us / s.total_job_us : 0.0)});
    }
    names.print(out);
  }
}

nlohmann::json summary_to_json(const std::string& name, const TraceSummary& s) {
  nlohmann::json workers = nlohmann::json::array();
  for (const WorkerLoad& w : s.workers) {
    workers.push_back(
        {{"worker", w.worker}, {"jobs", w.jobs}, {"busy_us", w.busy_us}, {"busy_fraction", w.busy_fraction}});
  }
  nlohmann::json longest = nlohmann::json::array();
  for (const TraceJob& job : s.longest) {
    longest.push_back({{"name", job.name},
                       {"worker", job.worker},
                       {"start_us", job.start_us},
                       {"duration_us", job.duration_us}});
  }
  nlohmann::json by_name = nlohmann::json::array();
  for (const NameTotal& t : s.by_name)
    by_name.push_back({{"name", t.name}, {"jobs", t.jobs}, {"total_us", t.total_us}});
  return {{"file", name},
          {"job_count", s.job_count},
          {"start_us", s.start_us},
          {"end_us", s.end_us},
          {"span_us", s.span_us},
          {"total_job_us", s.total_job_us},
          {"workers", std::move(workers)},
          {"longest_jobs", std::move(longest)},
          {"time_by_name", std::move(by_name)}};
}

}  // namespace weft::tool

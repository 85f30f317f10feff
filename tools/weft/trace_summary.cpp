// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "trace_summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include "table.hpp"
#include "trace_critical_path.hpp"

#include <weft/graph/json_document.hpp>

namespace weft::tool {

namespace {

// More workers than this in otherData is taken for corruption, not a machine.
constexpr std::int64_t kMaxWorkers = 1 << 16;
// A trace-event file nests a few levels; far deeper input is hostile.
constexpr int kMaxDepth = 64;
constexpr double kMaxMicroseconds = 9007199254740992.0;  // 2^53
constexpr std::int64_t kMaxId = std::numeric_limits<std::int32_t>::max();

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

// Beyond 2^53 us (285 years) a time is corruption, not a trace; within it,
// sums over any number of jobs stay finite and exact enough to print.
double time_field(const nlohmann::json& event, const char* key, const std::string& where) {
  const double t = number_field(event, key, where);
  if (std::fabs(t) > kMaxMicroseconds)
    fail(where + "." + key, "time " + event.at(key).dump() + " is beyond 2^53 microseconds (285 years)");
  return t;
}

std::int64_t pid_field(const nlohmann::json& event, const std::string& where) {
  return event.contains("pid") ? integer_field(event, "pid", where, 0, kMaxId) : 0;
}

std::string dumped(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A flow's id or bind_id: a string or an integer.
const nlohmann::json& id_field(const nlohmann::json& event, const char* key, const std::string& where) {
  const nlohmann::json& id = member(event, key, where);
  if (!id.is_string() && !id.is_number_integer())
    fail(where + "." + key, "expected a string or an integer, got " + std::string(id.type_name()));
  return id;
}

bool flag_field(const nlohmann::json& event, const char* key, const std::string& where) {
  const auto it = event.find(key);
  if (it == event.end()) return false;
  if (!it->is_boolean())
    fail(where + "." + key, "expected true or false, got " + std::string(it->type_name()));
  return it->get<bool>();
}

TraceJob parse_job(const nlohmann::json& event, const std::string& where) {
  TraceJob job;
  const nlohmann::json& name = member(event, "name", where);
  if (!name.is_string()) fail(where + ".name", "expected a string, got " + std::string(name.type_name()));
  job.name = name.get<std::string>();
  job.start_us = time_field(event, "ts", where);
  job.duration_us = number_field(event, "dur", where);
  if (job.duration_us < 0) fail(where + ".dur", "negative duration " + std::to_string(job.duration_us));
  if (job.duration_us > kMaxMicroseconds)
    fail(where + ".dur", "duration " + event.at("dur").dump() + " is beyond 2^53 microseconds (285 years)");
  job.pid = pid_field(event, where);
  job.worker = integer_field(event, "tid", where, 0, kMaxId);
  job.flow_in = flag_field(event, "flow_in", where);
  job.flow_out = flag_field(event, "flow_out", where);
  if (job.flow_in || job.flow_out) job.bind_id = dumped(id_field(event, "bind_id", where));
  return job;
}

TraceFlow parse_flow(const nlohmann::json& event, char phase, const std::string& where) {
  TraceFlow flow;
  flow.phase = phase;
  flow.ts_us = time_field(event, "ts", where);
  flow.pid = pid_field(event, where);
  flow.worker = integer_field(event, "tid", where, 0, kMaxId);
  std::string category;
  if (const auto cat = event.find("cat"); cat != event.end()) {
    if (!cat->is_string()) fail(where + ".cat", "expected a string, got " + std::string(cat->type_name()));
    category = cat->get<std::string>();
  }
  // Ranks of a merged trace number their flows independently: the pid
  // keeps them apart.
  flow.key = dumped(nlohmann::json::array({flow.pid, category, id_field(event, "id", where)}));
  if (phase == 'f') {
    if (const auto bp = event.find("bp"); bp != event.end()) {
      if (!bp->is_string()) fail(where + ".bp", "expected a string, got " + std::string(bp->type_name()));
      flow.binds_enclosing = bp->get_ref<const std::string&>() == "e";
    } else {
      flow.binds_enclosing = false;  // Chrome's default: the next slice
    }
  }
  return flow;
}

// A graph's run (a pass), which the weft tracer writes as a span of "cat"
// "run" on a track of runs: it covers the run's jobs, so it is none of them.
// The same for a GPU node's stream work ("cat" "device", on a track per
// device and stream): its job is the node's span on a worker.
bool is_run_span(const nlohmann::json& event) {
  const auto cat = event.find("cat");
  if (cat == event.end() || !cat->is_string()) return false;
  const std::string& category = cat->get_ref<const std::string&>();
  return category == "run" || category == "device";
}

// "M" events that name a worker track or a process.
void read_metadata(const nlohmann::json& event, const std::string& where, Trace& trace) {
  const auto name = event.find("name");
  if (name == event.end() || !name->is_string()) return;
  if (*name == "thread_name") {
    trace.named_workers.emplace_back(pid_field(event, where), integer_field(event, "tid", where, 0, kMaxId));
  } else if (*name == "process_name") {
    const auto args = event.find("args");
    if (args == event.end() || !args->is_object()) return;
    const auto process = args->find("name");
    if (process != args->end() && process->is_string())
      trace.process_names[pid_field(event, where)] = process->get<std::string>();
  }
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

Trace parse_trace(std::string_view text) {
  nlohmann::json doc = parse_trace_document(text);
  const JsonDocumentRelease emptied_at_exit(doc);  // running out of memory below: bad_alloc, not an abort
  return read_trace(doc);
}

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
        const std::int64_t version = integer_field(*other, "weft_trace_version", "otherData", 0, kMaxId);
        if (version != 1)
          fail("otherData.weft_trace_version",
               "version " + std::to_string(version) + " is not supported (expected 1)");
      }
      if (other->contains("workers"))
        trace.workers = integer_field(*other, "workers", "otherData", 0, kMaxWorkers);
      if (other->contains("rank")) trace.rank = integer_field(*other, "rank", "otherData", 0, kMaxId);
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
    const std::string& ph = phase.get_ref<const std::string&>();
    if (ph == "X") {
      TraceJob job = parse_job(event, where);
      (is_run_span(event) ? trace.runs : trace.jobs).push_back(std::move(job));
    } else if (ph == "s" || ph == "t" || ph == "f") {
      trace.flows.push_back(parse_flow(event, ph[0], where));
    } else if (ph == "M") {
      read_metadata(event, where, trace);
    }
  }
  // A track of runs is no worker.
  std::set<Track> run_tracks;
  for (const TraceJob& run : trace.runs) run_tracks.emplace(run.pid, run.worker);
  std::erase_if(trace.named_workers, [&](const Track& track) { return run_tracks.count(track) > 0; });
  return trace;
}

TraceSummary summarize(const Trace& trace, std::size_t longest_count) {
  TraceSummary s;
  s.job_count = trace.jobs.size();
  std::map<Track, std::vector<const TraceJob*>> by_worker;
  std::map<std::int64_t, ProcessLoad> processes;
  for (const auto& track : trace.named_workers) by_worker[track];
  for (const TraceJob& job : trace.jobs) by_worker[Track(job.pid, job.worker)].push_back(&job);
  // otherData.workers counts one Executor's workers: a trace of one process.
  std::set<std::int64_t> pids;
  for (const auto& [track, jobs] : by_worker) pids.insert(track.first);
  if (pids.size() <= 1) {
    const std::int64_t pid = pids.empty() ? 0 : *pids.begin();
    for (std::int64_t w = 0; w < trace.workers; ++w) by_worker[Track(pid, w)];
  }
  std::map<std::string, NameTotal> by_name;
  if (!trace.jobs.empty()) {
    s.start_us = trace.jobs.front().start_us;
    s.end_us = job_end(trace.jobs.front());
  }
  for (const TraceJob& job : trace.jobs) {
    s.start_us = std::min(s.start_us, job.start_us);
    s.end_us = std::max(s.end_us, job_end(job));
    s.total_job_us += job.duration_us;
    ProcessLoad& process = processes[job.pid];
    if (process.jobs == 0) {
      process.start_us = job.start_us;
      process.end_us = job_end(job);
    }
    ++process.jobs;
    process.start_us = std::min(process.start_us, job.start_us);
    process.end_us = std::max(process.end_us, job_end(job));
    NameTotal& total = by_name[job.name];
    total.name = job.name;
    ++total.jobs;
    total.total_us += job.duration_us;
  }
  s.span_us = s.end_us - s.start_us;
  for (auto& [pid, process] : processes) process.span_us = process.end_us - process.start_us;
  for (const auto& [track, jobs] : by_worker) {
    ProcessLoad& process = processes[track.first];
    WorkerLoad load;
    load.pid = track.first;
    load.worker = track.second;
    load.jobs = jobs.size();
    load.busy_us = covered_us(jobs);
    load.idle_us = std::max(0.0, process.span_us - load.busy_us);
    load.busy_fraction = process.span_us > 0 ? load.busy_us / process.span_us : 0.0;
    load.idle_fraction = process.span_us > 0 ? load.idle_us / process.span_us : 0.0;
    s.workers.push_back(load);
    ++process.workers;
    process.busy_us += load.busy_us;
    process.idle_us += load.idle_us;
  }
  for (auto& [pid, process] : processes) {
    process.pid = pid;
    if (const auto name = trace.process_names.find(pid); name != trace.process_names.end())
      process.name = name->second;
    const double capacity = process.span_us * static_cast<double>(process.workers);
    process.idle_fraction = capacity > 0 ? process.idle_us / capacity : 0.0;
    s.processes.push_back(process);
  }
  s.critical_path = critical_path(trace);
  if (!s.critical_path.jobs.empty()) {
    const double span = processes[s.critical_path.jobs.back().pid].span_us;
    s.critical_path.span_fraction = span > 0 ? s.critical_path.duration_us / span : 0.0;
  }
  s.longest = trace.jobs;
  const auto longer = [](const TraceJob& a, const TraceJob& b) {
    if (a.duration_us != b.duration_us) return a.duration_us > b.duration_us;
    if (a.start_us != b.start_us) return a.start_us < b.start_us;
    if (a.pid != b.pid) return a.pid < b.pid;
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

namespace {

// How the report names a process: its process_name ("rank 1" in a merge),
// else its pid. Looked up once per row, so built once: a trace of many
// processes must not make the report quadratic.
class ProcessLabels {
 public:
  explicit ProcessLabels(const TraceSummary& s) {
    for (const ProcessLoad& p : s.processes)
      if (!p.name.empty()) names_.try_emplace(p.pid, p.name);  // the first name given wins
  }
  std::string operator()(std::int64_t pid) const {
    const auto it = names_.find(pid);
    return it != names_.end() ? it->second : "pid " + std::to_string(pid);
  }

 private:
  std::unordered_map<std::int64_t, std::string> names_;
};

// A table of jobs; `processes` adds the column that tells ranks apart.
Table job_table(const ProcessLabels& process_label, const std::vector<TraceJob>& jobs, std::size_t shown,
                bool processes) {
  std::vector<std::string> header{"name", "worker", "start", "duration"};
  std::string align = "lrrr";
  if (processes) {
    header.insert(header.begin() + 1, "process");
    align = "llrrr";
  }
  Table table(header, align);
  for (std::size_t i = 0; i < std::min(shown, jobs.size()); ++i) {
    const TraceJob& job = jobs[i];
    std::vector<std::string> row{shown_name(job.name), std::to_string(job.worker),
                                 format_duration_us(job.start_us), format_duration_us(job.duration_us)};
    if (processes) row.insert(row.begin() + 1, process_label(job.pid));
    table.add_row(std::move(row));
  }
  return table;
}

nlohmann::json job_to_json(const TraceJob& job) {
  return {{"name", job.name},
          {"pid", job.pid},
          {"worker", job.worker},
          {"start_us", job.start_us},
          {"duration_us", job.duration_us}};
}

}  // namespace

void print_summary(std::ostream& out, const std::string& name, const TraceSummary& s,
                   std::size_t longest_count) {
  const bool several = s.processes.size() > 1;
  const ProcessLabels process_label(s);
  out << name << ": " << s.job_count << (s.job_count == 1 ? " job" : " jobs") << " on " << s.workers.size()
      << (s.workers.size() == 1 ? " worker" : " workers");
  if (several) out << " in " << s.processes.size() << " processes";
  if (s.job_count > 0) {
    out << ", span " << format_duration_us(s.span_us) << " (from " << format_duration_us(s.start_us) << " to "
        << format_duration_us(s.end_us) << ")";
  }
  out << '\n';
  if (several) {
    out << "processes (each on its own clock; idle: its workers' time outside their jobs, within its "
           "span):\n";
    Table processes({"process", "workers", "jobs", "span", "busy", "idle", "idle %"}, "lrrrrrr");
    for (const ProcessLoad& p : s.processes) {
      processes.add_row({process_label(p.pid), std::to_string(p.workers), std::to_string(p.jobs),
                         format_duration_us(p.span_us), format_duration_us(p.busy_us),
                         format_duration_us(p.idle_us), format_percent(p.idle_fraction)});
    }
    processes.print(out);
  }
  if (!s.workers.empty()) {
    out << "workers (busy: time covered by its jobs; idle: the rest of "
        << (several ? "its process's" : "the") << " span):\n";
    std::vector<std::string> header{"worker", "jobs", "busy", "busy %", "idle", "idle %"};
    if (several) header.insert(header.begin(), "process");
    Table workers(header, several ? "lrrrrrr" : "rrrrrr");
    for (const WorkerLoad& w : s.workers) {
      std::vector<std::string> row{std::to_string(w.worker),      std::to_string(w.jobs),
                                   format_duration_us(w.busy_us), format_percent(w.busy_fraction),
                                   format_duration_us(w.idle_us), format_percent(w.idle_fraction)};
      if (several) row.insert(row.begin(), process_label(w.pid));
      workers.add_row(std::move(row));
    }
    workers.print(out);
  }
  const CriticalPath& path = s.critical_path;
  if (!path.jobs.empty()) {
    out << "critical path: " << format_duration_us(path.duration_us) << " in " << path.jobs.size()
        << (path.jobs.size() == 1 ? " job, " : " jobs, ") << format_percent(path.span_fraction) << " of "
        << (several ? "its process's" : "the") << " span (";
    if (path.basis == "edges") {
      out << "along the trace's " << path.edges << " flow " << (path.edges == 1 ? "edge" : "edges");
    } else {
      out << "the trace has no flow edges: this is the heaviest chain of jobs each starting after the "
             "previous one ended, an upper bound on the graph's";
    }
    if (path.ignored_flows > 0) {
      out << "; ignored: " << path.ignored_flows << (path.ignored_flows == 1 ? " flow" : " flows")
          << " binding no job or pointing back in time";
    }
    out << "):\n";
    job_table(process_label, path.jobs, longest_count, several).print(out);
    if (path.jobs.size() > longest_count)
      out << "  ... " << path.jobs.size() - longest_count << " more (--top shows more, --json all)\n";
  }
  if (!s.longest.empty()) {
    out << "longest jobs:\n";
    job_table(process_label, s.longest, s.longest.size(), several).print(out);
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
  nlohmann::json processes = nlohmann::json::array();
  for (const ProcessLoad& p : s.processes) {
    processes.push_back({{"pid", p.pid},
                         {"name", p.name},
                         {"workers", p.workers},
                         {"jobs", p.jobs},
                         {"start_us", p.start_us},
                         {"end_us", p.end_us},
                         {"span_us", p.span_us},
                         {"busy_us", p.busy_us},
                         {"idle_us", p.idle_us},
                         {"idle_fraction", p.idle_fraction}});
  }
  nlohmann::json workers = nlohmann::json::array();
  for (const WorkerLoad& w : s.workers) {
    workers.push_back({{"pid", w.pid},
                       {"worker", w.worker},
                       {"jobs", w.jobs},
                       {"busy_us", w.busy_us},
                       {"busy_fraction", w.busy_fraction},
                       {"idle_us", w.idle_us},
                       {"idle_fraction", w.idle_fraction}});
  }
  nlohmann::json path_jobs = nlohmann::json::array();
  for (const TraceJob& job : s.critical_path.jobs) path_jobs.push_back(job_to_json(job));
  nlohmann::json longest = nlohmann::json::array();
  for (const TraceJob& job : s.longest) longest.push_back(job_to_json(job));
  nlohmann::json by_name = nlohmann::json::array();
  for (const NameTotal& t : s.by_name)
    by_name.push_back({{"name", t.name}, {"jobs", t.jobs}, {"total_us", t.total_us}});
  return {{"file", name},
          {"job_count", s.job_count},
          {"start_us", s.start_us},
          {"end_us", s.end_us},
          {"span_us", s.span_us},
          {"total_job_us", s.total_job_us},
          {"processes", std::move(processes)},
          {"workers", std::move(workers)},
          {"critical_path",
           {{"basis", s.critical_path.basis},
            {"edges", s.critical_path.edges},
            {"ignored_flows", s.critical_path.ignored_flows},
            {"duration_us", s.critical_path.duration_us},
            {"span_fraction", s.critical_path.span_fraction},
            {"jobs", std::move(path_jobs)}}},
          {"longest_jobs", std::move(longest)},
          {"time_by_name", std::move(by_name)}};
}

}  // namespace weft::tool

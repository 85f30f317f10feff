// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// `weft trace summary`: where the time went in an execution trace.
//
// Traces are Chrome trace-event JSON as the Executor writes them:
//   {"traceEvents": [{"name": "A", "cat": "cpu", "ph": "X", "ts": 12.5, "dur": 3.25,
//                     "pid": 1, "tid": 0, "args": {"domain": "cpu"}}, ...],
//    "displayTimeUnit": "ns", "otherData": {"weft_trace_version": 1, "workers": 2}}
// ts and dur are microseconds. Complete events (ph "X") are jobs; a worker is
// a (pid, tid) track, so the ranks of a merged trace (`weft trace merge`, one
// pid per rank) keep their workers apart. Workers also come from
// "thread_name" metadata and, in a one-process trace, otherData.workers.
// Flow events draw edges between jobs: ph "s"/"t"/"f" matched by (pid, cat,
// id), or X events with "bind_id" and "flow_out"/"flow_in". X events of
// "cat" "run" are a graph's runs, on tracks of their own: not jobs, and
// their tracks not workers. Every other event is skipped. A bare array of events (Chrome's other form) is
// read too.
//
//   const TraceSummary s = summarize(parse_trace(text), 10);
//   s.critical_path.duration_us;   // the heaviest chain of jobs, in measured time
//   s.workers[0].idle_us;          // its process's span minus its busy time
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace weft::tool {

struct TraceJob {
  std::string name;
  std::int64_t pid = 0;     // the event's pid; 0 when it has none
  std::int64_t worker = 0;  // the event's tid
  double start_us = 0;
  double duration_us = 0;
  // Flow v2: edges from every job with flow_out to every job with flow_in
  // and the same bind_id, in the same process.
  std::string bind_id;
  bool flow_in = false, flow_out = false;
};

inline double job_end(const TraceJob& job) noexcept { return job.start_us + job.duration_us; }
using Track = std::pair<std::int64_t, std::int64_t>;  // a worker: (pid, tid)

// A flow v1 event ("s" start, "t" step, "f" finish), bound to a job of its
// track: "s" and "t" to the job enclosing ts, "f" too when "bp" is "e", else
// to the next job that starts at or after ts.
struct TraceFlow {
  std::string key;  // cat and id: the events of one flow share it
  char phase = 's';
  bool binds_enclosing = true;
  std::int64_t pid = 0, worker = 0;
  double ts_us = 0;
};

struct Trace {
  std::vector<TraceJob> jobs;  // in file order
  std::vector<TraceJob> runs;  // "cat": "run" spans (a graph's runs), in file order
  std::vector<TraceFlow> flows;
  std::vector<std::pair<std::int64_t, std::int64_t>> named_workers;  // (pid, tid) of "thread_name" events
  std::map<std::int64_t, std::string> process_names;                 // "process_name" events, by pid
  std::int64_t workers = 0;  // otherData.workers; 0 when the trace does not say
  std::int64_t rank = -1;    // otherData.rank (a distributed run's process); -1 when it does not say
};

// Throws std::invalid_argument naming the event and field that is wrong
// ("trace JSON: traceEvents[3].dur: expected a number, got string"), or, for
// a syntax error, its line and column. parse_trace_document only parses;
// read_trace checks the document and reads it.
Trace parse_trace(std::string_view text);
nlohmann::json parse_trace_document(std::string_view text);
Trace read_trace(const nlohmann::json& document);
// The document's events: traceEvents, or the document itself (an array);
// read_trace has checked that it is one of them.
nlohmann::json& trace_events(nlohmann::json& document);

struct WorkerLoad {
  std::int64_t pid = 0;
  std::int64_t worker = 0;  // tid
  std::size_t jobs = 0;
  double busy_us = 0;        // time covered by at least one of its jobs (nested jobs count once)
  double busy_fraction = 0;  // of its process's span
  double idle_us = 0;        // its process's span minus busy_us
  double idle_fraction = 0;
};

// One process (a rank, in a merged trace): each counts time on its own
// clock, so its workers' idle time is measured against its own span.
struct ProcessLoad {
  std::int64_t pid = 0;
  std::string name;  // its "process_name" ("rank 1" in a merge); "" when it has none
  std::size_t workers = 0, jobs = 0;
  double start_us = 0, end_us = 0, span_us = 0;
  double busy_us = 0, idle_us = 0;  // summed over its workers
  double idle_fraction = 0;         // of workers x span
};

struct CriticalPath {
  // "edges": the longest chain along the trace's flow edges; "time": the
  // trace has none, so the heaviest chain of one process's jobs in which each
  // starts at or after the previous one's end (every dependency chain is one
  // such chain, so this bounds the graph's critical path from above).
  std::string basis = "time";
  std::size_t edges = 0;          // flow edges between two jobs
  std::size_t ignored_flows = 0;  // flows that bind to no job, or point back in time
  double duration_us = 0;         // summed durations of its jobs
  double span_fraction = 0;       // of the span of its process
  std::vector<TraceJob> jobs;     // first to last
};

struct NameTotal {
  std::string name;
  std::size_t jobs = 0;
  double total_us = 0;  // sum of the durations
};

struct TraceSummary {
  std::size_t job_count = 0;
  double start_us = 0;  // the first job's start
  double end_us = 0;    // the last job's end
  double span_us = 0;
  double total_job_us = 0;             // sum of all durations
  std::vector<ProcessLoad> processes;  // by pid
  std::vector<WorkerLoad> workers;     // every worker declared or seen, by (pid, tid)
  CriticalPath critical_path;
  std::vector<TraceJob> longest;   // longest first; ties: earlier start first
  std::vector<NameTotal> by_name;  // most time first; ties: by name
};

TraceSummary summarize(const Trace& trace, std::size_t longest_count);

// The text report lists at most `longest_count` jobs of the critical path;
// the JSON lists them all.
void print_summary(std::ostream& out, const std::string& name, const TraceSummary& summary,
                   std::size_t longest_count = 10);
nlohmann::json summary_to_json(const std::string& name, const TraceSummary& summary);

}  // namespace weft::tool

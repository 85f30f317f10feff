// `weft trace summary`: where the time went in an execution trace.
//
// Traces are Chrome trace-event JSON as the Executor writes them:
//   {"traceEvents": [{"name": "A", "cat": "cpu", "ph": "X", "ts": 12.5, "dur": 3.25,
//                     "pid": 1, "tid": 0, "args": {"domain": "cpu"}}, ...],
//    "displayTimeUnit": "ns", "otherData": {"weft_trace_version": 1, "workers": 2}}
// ts and dur are microseconds; tid is the worker. Only complete events
// (ph "X") are jobs; every other event ("M" thread names, ...) is skipped.
// A bare array of events (Chrome's other form) is read too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace weft::tool {

struct TraceJob {
  std::string name;
  std::int64_t worker = 0;  // the event's tid
  double start_us = 0;
  double duration_us = 0;
};

struct Trace {
  std::vector<TraceJob> jobs;  // in file order
  std::int64_t workers = 0;    // otherData.workers; 0 when the trace does not say
  std::int64_t rank = -1;      // otherData.rank (a distributed run's process); -1 when it does not say
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
  std::int64_t worker = 0;
  std::size_t jobs = 0;
  double busy_us = 0;        // time covered by at least one of its jobs (nested jobs count once)
  double busy_fraction = 0;  // of the span
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
  double total_job_us = 0;          // sum of all durations
  std::vector<WorkerLoad> workers;  // every worker declared or seen, by index
  std::vector<TraceJob> longest;    // longest first; ties: earlier start first
  std::vector<NameTotal> by_name;   // most time first; ties: by name
};

TraceSummary summarize(const Trace& trace, std::size_t longest_count);

void print_summary(std::ostream& out, const std::string& name, const TraceSummary& summary);
nlohmann::json summary_to_json(const std::string& name, const TraceSummary& summary);

}  // namespace weft::tool

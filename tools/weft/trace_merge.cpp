// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "trace_merge.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>
#include <weft/graph/json_document.hpp>

#include "trace_summary.hpp"

namespace weft::tool {

namespace {

// The metadata events merge writes for each process; an input's own are dropped.
bool names_process(const nlohmann::json& event) {
  if (event.at("ph") != "M") return false;
  const auto name = event.find("name");
  return name != event.end() && (*name == "process_name" || *name == "process_sort_index");
}

std::string dumped(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void TraceMerge::add(const std::string& name, std::string_view text) {
  nlohmann::json doc = parse_trace_document(text);
  const JsonDocumentRelease emptied_at_exit(doc);  // running out of memory below: bad_alloc, not an abort
  const Trace trace = read_trace(doc);             // checks every event
  const std::int64_t pid = trace.rank >= 0 ? trace.rank : static_cast<std::int64_t>(processes_.size());
  for (const Process& p : processes_) {
    if (p.pid == pid) {
      const std::string rank = "rank " + std::to_string(pid);
      throw std::invalid_argument(
          "trace JSON: " +
          (trace.rank >= 0
               ? "otherData.rank: " + rank + " is also " + p.name + "'s; give each rank's trace once"
               : "otherData says no rank, so its place among the inputs makes it " + rank + ", but " +
                     p.name + " is " + rank + "; give every input its otherData.rank, or none"));
    }
  }
  for (nlohmann::json& event : trace_events(doc)) {
    if (names_process(event)) continue;
    event["pid"] = pid;
    events_ += ",\n";
    events_ += dumped(event);
  }
  processes_.push_back(Process{pid, name});
}

void TraceMerge::write(std::ostream& out) const {
  nlohmann::json inputs = nlohmann::json::array();
  for (const Process& p : processes_) inputs.push_back({{"file", p.name}, {"pid", p.pid}});
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":"
      << dumped({{"weft_trace_version", 1}, {"merged", std::move(inputs)}}) << ",\n\"traceEvents\":[";
  const char* separator = "\n";
  for (const Process& p : processes_) {
    out << separator
        << dumped({{"name", "process_name"},
                   {"ph", "M"},
                   {"pid", p.pid},
                   {"tid", 0},
                   {"args", {{"name", "rank " + std::to_string(p.pid)}}}})
        << ",\n"
        << dumped({{"name", "process_sort_index"},
                   {"ph", "M"},
                   {"pid", p.pid},
                   {"tid", 0},
                   {"args", {{"sort_index", p.pid}}}});
    separator = ",\n";
  }
  out << events_ << "\n]}\n";
}

}  // namespace weft::tool

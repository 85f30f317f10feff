// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target: the weft program's trace reader (tools/weft/trace_summary)
// on arbitrary bytes.
//
// The contract (trace_summary.hpp): a trace that is not one is refused with
// std::invalid_argument naming the problem. So an invalid_argument is the
// expected outcome; any other exception, a crash, a sanitizer report, a
// summary holding a number that is not finite ("inf s", "-nan%"), or a
// summary whose JSON does not parse back is a finding. Build and run:
// tools/ci/fuzz.
#include <weft/graph/json_document.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "fuzz_contract.hpp"
#include "trace_summary.hpp"

namespace {

[[noreturn]] void finding(const char* what, const char* detail) {
  weft::fuzz::finding("fuzz_trace_json", what, detail);
}

void check_finite(double value, const char* what) {
  if (!std::isfinite(value)) finding("a summary figure is not finite", what);
}

// What the reader accepted must summarize into finite figures, print, and
// make JSON that reads back.
void check_accepted(const weft::tool::Trace& trace) {
  const weft::tool::TraceSummary s = weft::tool::summarize(trace, 10);
  for (double v : {s.start_us, s.end_us, s.span_us, s.total_job_us}) check_finite(v, "span or total");
  for (const weft::tool::WorkerLoad& w : s.workers) {
    check_finite(w.busy_us, "busy_us");
    check_finite(w.busy_fraction, "busy_fraction");
    check_finite(w.idle_us, "idle_us");
    check_finite(w.idle_fraction, "idle_fraction");
  }
  for (const weft::tool::ProcessLoad& p : s.processes) {
    for (double v : {p.span_us, p.busy_us, p.idle_us, p.idle_fraction})
      check_finite(v, "a process's figures");
  }
  check_finite(s.critical_path.duration_us, "critical_path.duration_us");
  check_finite(s.critical_path.span_fraction, "critical_path.span_fraction");
  // A path is a chain: each job starts no earlier than the one before it.
  for (std::size_t i = 1; i < s.critical_path.jobs.size(); ++i) {
    if (s.critical_path.jobs[i].start_us < s.critical_path.jobs[i - 1].start_us)
      finding("the critical path goes back in time", s.critical_path.jobs[i].name.c_str());
  }
  for (const weft::tool::NameTotal& t : s.by_name) check_finite(t.total_us, "total_us");
  std::ostringstream text;  // names are the input's, so the text itself is not checked
  weft::tool::print_summary(text, "fuzz", s);
  const std::string dumped =
      weft::tool::summary_to_json("fuzz", s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  try {
    (void)weft::parse_json_document(dumped, "summary JSON");
  } catch (const std::invalid_argument& e) {
    finding("summary JSON does not read back", e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  weft::fuzz::expect_accepted_or_refused("fuzz_trace_json",
                                         [&] { check_accepted(weft::tool::parse_trace(text)); });
  return 0;
}

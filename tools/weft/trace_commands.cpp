// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// `weft trace summary FILE` and `weft trace merge OUT IN...`: Chrome
// trace-event files written by the Executor.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "output_file.hpp"
#include "tool.hpp"
#include "trace_merge.hpp"
#include "trace_summary.hpp"

namespace weft::tool {

namespace {

constexpr const char* kTraceHelp = "a trace JSON file; - reads stdin";

// Refuses an output that is one of the inputs: it would be gone before the
// merge is written.
void check_output_is_not_an_input(const std::string& out, const std::vector<std::string>& inputs) {
  if (out == "-") return;  // stdout
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (out == in || (in != "-" && std::filesystem::equivalent(out, in, ec))) {
      throw CLI::ValidationError("OUT", "'" + out + "' is also an input; write the merge to another file");
    }
  }
}

void write_merge(const TraceMerge& merge, const std::string& out) {
  if (out == "-") {
    merge.write(std::cout);
    return;
  }
  try {
    // Replaced whole: an interrupted merge leaves the previous file.
    weft::examples::ReplacingFile replacing(out);
    std::ofstream file(replacing.write_path(), std::ios::binary | std::ios::trunc);
    if (!file) throw InputError(out + ": cannot write: " + std::strerror(errno));
    merge.write(file);
    file.close();
    if (!file) throw InputError(out + ": error while writing: " + std::strerror(errno));
    replacing.commit();
  } catch (const weft::examples::OutputError& e) {
    throw InputError(e.what());
  }
}

void add_merge(CLI::App& trace) {
  struct Options {
    std::string out;
    std::vector<std::string> inputs;
  };
  auto options = std::make_shared<Options>();
  CLI::App* merge = trace.add_subcommand(
      "merge",
      "Merge the traces of several processes (the ranks of a distributed run each write one) into one "
      "file with one process per input, for Perfetto or chrome://tracing: each input's events take "
      "its rank as their pid (otherData.rank when the file says it, else its place among the inputs, "
      "from 0) and a process named \"rank N\"; timestamps are kept (each process counts from its "
      "own start_trace()). Every input is read and checked before OUT is written.");
  merge->add_option("OUT", options->out, "the merged trace to write; - writes stdout")->required();
  merge->add_option("IN", options->inputs, "the traces to merge, in rank order; - reads stdin")->required();
  add_max_bytes_option(*merge);
  merge->callback([options] {
    check_output_is_not_an_input(options->out, options->inputs);
    TraceMerge merged;
    for (const std::string& in : options->inputs) {
      parse_input(in, "trace", [&](std::string_view text) { merged.add(display_name(in), text); });
    }
    write_merge(merged, options->out);
  });
}

void add_summary(CLI::App& trace) {
  struct Options {
    std::string file;
    std::size_t longest = 10;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* summary = trace.add_subcommand(
      "summary",
      "Where the time went: the span (first start to last end); per worker its jobs, busy and idle "
      "time and their shares of the span; the critical path, weighted by the measured durations; the "
      "longest jobs; and time by node name (most first). Jobs are the complete events (\"ph\": \"X\"; "
      "ts and dur in microseconds), but for a graph's runs (\"cat\": \"run\"). A worker is a (pid, tid) "
      "track: a merged trace (weft trace merge) "
      "gets a row per rank, each measured on its own clock. The critical path follows the trace's "
      "flow events (ph s/t/f, or bind_id with flow_in/flow_out) when it has them; without them it is "
      "the heaviest chain of one process's jobs in which each starts after the previous one ended, "
      "an upper bound on the graph's critical path.");
  summary->add_option("FILE", options->file, kTraceHelp)->required();
  summary
      ->add_option("--top", options->longest,
                   "how many of the longest jobs, and of the critical path's jobs, to list")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  summary->add_flag("--json", options->json, "print the summary as one JSON object");
  add_max_bytes_option(*summary);
  summary->callback([options] {
    const Trace parsed =
        parse_input(options->file, "trace", [](std::string_view text) { return parse_trace(text); });
    const TraceSummary s = summarize(parsed, options->longest);
    if (options->json) {
      std::cout << summary_to_json(display_name(options->file), s)
                       .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << '\n';
    } else {
      print_summary(std::cout, display_name(options->file), s, options->longest);
    }
  });
}

}  // namespace

void add_trace_commands(CLI::App& app) {
  CLI::App* trace = app.add_subcommand(
      "trace", "Inspect or merge execution traces (Chrome trace-event JSON written by the Executor)");
  trace->require_subcommand(1);
  add_summary(*trace);
  add_merge(*trace);
}

}  // namespace weft::tool

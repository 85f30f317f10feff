// `weft trace summary FILE`: a Chrome trace-event file written by the Executor.
#include <iostream>
#include <memory>
#include <new>
#include <string>

#include <weft/graph/json_document.hpp>

#include "tool.hpp"
#include "trace_summary.hpp"

namespace weft::tool {

void add_trace_commands(CLI::App& app) {
  CLI::App* trace = app.add_subcommand(
      "trace", "Inspect an execution trace (Chrome trace-event JSON written by the Executor)");
  trace->require_subcommand(1);

  struct Options {
    std::string file;
    std::size_t longest = 10;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* summary = trace->add_subcommand(
      "summary",
      "Where the time went: the span (first start to last end), per worker its jobs, busy time "
      "and busy share of the span, the longest jobs, and time by node name (most first). Jobs are "
      "the complete events (\"ph\": \"X\"; ts and dur in microseconds, tid the worker); other events "
      "are skipped.");
  summary->add_option("FILE", options->file, "a trace JSON file; - reads stdin")->required();
  summary->add_option("--top", options->longest, "how many of the longest jobs to list")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  summary->add_flag("--json", options->json, "print the summary as one JSON object");
  add_max_bytes_option(*summary);
  summary->callback([options] {
    const std::string text = read_input(options->file);
    Trace parsed;
    try {
      parsed = parse_trace(text);
    } catch (const std::bad_alloc&) {
      throw InputError(display_name(options->file) + ": not enough memory to load a trace of " +
                       std::to_string(text.size()) + " bytes");
    } catch (const std::exception& e) {
      throw InputError(display_name(options->file) + ": " + std::string(without_json_tag(e.what())));
    }
    const TraceSummary s = summarize(parsed, options->longest);
    if (options->json) {
      std::cout << summary_to_json(display_name(options->file), s)
                       .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << '\n';
    } else {
      print_summary(std::cout, display_name(options->file), s);
    }
  });
}

}  // namespace weft::tool

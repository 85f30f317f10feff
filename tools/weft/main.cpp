// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// weft: the command-line program. `weft --help` lists the commands; each
// command's --help describes it. Exit codes: tool.hpp (kExitCodesHelp).
#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <weft/backends/config.hpp>
#include <weft/graph/json_document.hpp>

#include "safe_output.hpp"
#include "tool.hpp"

#include <nlohmann/json.hpp>

namespace {

// Levenshtein distance, for "did you mean".
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The command `word` was probably meant to be: the closest sub-command of the
// deepest command parsed, when it is close enough to be a typo.
std::string closest_command(CLI::App& app, const std::string& word) {
  CLI::App* deepest = &app;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (CLI::App* parsed : deepest->get_subcommands()) {
      deepest = parsed;
      deeper = true;
      break;
    }
  }
  std::string best;
  std::size_t best_distance = 3;  // at most two edits
  for (const CLI::App* command : deepest->get_subcommands([](CLI::App*) { return true; })) {
    const std::size_t d = edit_distance(word, command->get_name());
    if (d < best_distance && d < command->get_name().size()) {
      best = command->get_name();
      best_distance = d;
    }
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace weft::tool;
  const SafeStandardStreams safe_streams;  // no raw control characters reach the terminal
  CLI::App app(
      "weft: inspect weft task graphs (JSON written by weft::Graph::to_json()) and execution traces "
      "(Chrome trace-event JSON written by the Executor); describe this build and machine (weft info).",
      "weft");
  app.footer(kExitCodesHelp);  // before the sub-commands, which copy it
  app.set_version_flag("--version", WEFT_VERSION_STRING);
  app.require_subcommand(1);
  add_graph_commands(app);
  add_trace_commands(app);
  add_info_command(app);
  try {
    app.parse(argc, argv);  // runs the chosen command's callback
  } catch (const CLI::ParseError& e) {
    // CLI11 reports a misspelt command only as "A subcommand is required":
    // name the words it could not place first.
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      const std::vector<std::string> unplaced = app.remaining(/*recurse=*/true);
      if (!unplaced.empty()) {
        std::cerr << "Unknown command or argument:";
        for (const std::string& word : unplaced) std::cerr << ' ' << word;
        std::cerr << '\n';
        if (const std::string meant = closest_command(app, unplaced.front()); !meant.empty())
          std::cerr << "Did you mean '" << meant << "'?\n";
      }
    }
    // --help and --version arrive here too, with exit code 0.
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const InputError& e) {
    std::cout.flush();
    std::cerr << e.what() << '\n';
    return kExitInvalidInput;
  } catch (const Reported& r) {
    return r.code;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "weft: " << weft::without_json_tag(e.what()) << '\n';
    return kExitInvalidInput;
  }
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "weft: cannot write to standard output\n";
    return kExitInvalidInput;
  }
  return kExitOk;
}

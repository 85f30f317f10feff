// weft: the command-line program. `weft --help` lists the commands; each
// command's --help describes it. Exit codes: tool.hpp (kExitCodesHelp).
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "tool.hpp"

#include <nlohmann/json.hpp>

int main(int argc, char** argv) {
  using namespace weft::tool;
  CLI::App app(
      "weft: inspect weft task graphs (JSON written by weft::Graph::to_json()) and execution traces "
      "(Chrome trace-event JSON written by the Executor).",
      "weft");
  app.footer(kExitCodesHelp);  // before the sub-commands, which copy it
  app.set_version_flag("--version", WEFT_VERSION);
  app.require_subcommand(1);
  add_graph_commands(app);
  add_trace_commands(app);
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
    std::cerr << "weft: " << e.what() << '\n';
    return kExitInvalidInput;
  }
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "weft: cannot write to standard output\n";
    return kExitInvalidInput;
  }
  return kExitOk;
}

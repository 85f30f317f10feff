// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the weft program's commands share: its exit codes, the error that
// means "this input is invalid", reading an input file, and the functions that
// register each family of sub-commands.
#pragma once

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

#include <weft/graph/json_document.hpp>

#include <CLI/CLI.hpp>

namespace weft::tool {

// The program's exit codes; --help and README.md list them too.
enum ExitCode : int {
  kExitOk = 0,
  kExitInvalidInput = 1,  // unreadable file, bad JSON, a graph or trace that fails validation;
                          // an output that cannot be written
  kExitUsage = 2,         // command-line errors reported by CLI11
};

inline constexpr const char* kExitCodesHelp =
    "Exit codes: 0 success; 1 invalid input (unreadable file, JSON syntax error, a graph or trace\n"
    "that fails validation, an output that cannot be written; the message on stderr names the file\n"
    "and the problem); 2 usage error (unknown command or option, missing argument).";

// A command's input is invalid (or its output cannot be written): main()
// prints what() on stderr and exits with kExitInvalidInput. The message
// starts with the file's name.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A command has already printed its errors and wants main() to exit with `code`.
struct Reported {
  ExitCode code;
};

// How messages name an input: the path, or "<stdin>" for "-".
std::string display_name(const std::string& path);

// Inputs larger than this are refused unless --max-bytes says otherwise.
inline constexpr std::uint64_t kDefaultMaxInputBytes = std::uint64_t{1} << 30;

// Loading JSON takes up to this many bytes of memory per byte of input
// (nlohmann's values, our documents' own structures; 10 to 32 measured).
inline constexpr std::uint64_t kLoadBytesPerInputByte = 32;

// Adds --max-bytes (the input limit) and --max-memory (what loading one
// input may take; default: the memory this process may use) to a command,
// both for the whole program.
void add_max_bytes_option(CLI::App& command);

// InputError naming `path` when loading `bytes` of JSON (a `what`) may take
// more than --max-memory: refused before the parse rather than run out of
// memory part way.
void check_load_memory(const std::string& path, const char* what, std::uint64_t bytes);

// The whole content of `path` ("-" reads standard input); InputError naming
// the file and the reason when it cannot be read, is larger than the input
// limit, or does not fit in memory.
std::string read_input(const std::string& path);

// parse(text) on the content of `path` (read_input); what it throws becomes
// an InputError naming the file: "a.json: not enough memory to load a trace
// of N bytes", or the file and the exception's message.
template <class Parse>
auto parse_input(const std::string& path, const char* what, Parse&& parse) {
  const std::string text = read_input(path);
  check_load_memory(path, what, text.size());
  try {
    return parse(std::string_view(text));
  } catch (const std::bad_alloc&) {
    throw InputError(display_name(path) + ": not enough memory to load a " + what + " of " +
                     std::to_string(text.size()) + " bytes");
  } catch (const std::exception& e) {
    throw InputError(display_name(path) + ": " + std::string(without_json_tag(e.what())));
  }
}

// `weft graph summary|dot|validate`, `weft trace summary|merge` and `weft info`.
void add_graph_commands(CLI::App& app);
void add_trace_commands(CLI::App& app);
void add_info_command(CLI::App& app);

}  // namespace weft::tool

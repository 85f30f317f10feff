// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What every example's main (and weft-bench's) shares: strict number checks
// for CLI11 options, and a main() wrapper that turns every exception into an
// exit code and a message on stderr, never an abort.
//
//   int main(int argc, char** argv) {
//     return weft::examples::run_main("heat2d", [&] {
//       std::size_t n = 256;
//       CLI::App app("heat2d: ...", "heat2d");
//       app.add_option("cells", n)->transform(weft::examples::whole_number<std::size_t>(4));
//       if (const auto code = weft::examples::parse(app, argc, argv)) return *code;
//       ...                                   // the run; exceptions become exit 1
//     });
//   }
//
// Exit codes: 0 success, 1 the run failed (an exception, an unwritable
// output), 2 usage error (CLI11's parse errors and UsageError).
#pragma once

#include <CLI/CLI.hpp>

#include "usage_error.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

namespace weft::examples {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

// The most worker threads an example accepts: far beyond any machine's cores,
// but a typo (100000) is a usage error rather than an attempt to start them.
constexpr int kMaxThreads = 4096;

// A CLI11 transform accepting a plain decimal integer in [low, high]: no sign
// for unsigned types, no spaces, no trailing characters, no octal or hex
// (CLI11 alone reads "-1" into a size_t as 2^64 - 1 and "010" as 8). It
// rewrites the text in canonical decimal form for CLI11 to convert.
template <class T>
CLI::Validator whole_number(T low, T high = std::numeric_limits<T>::max()) {
  const std::string range =
      "[" + std::to_string(low) + ", " +
      (high == std::numeric_limits<T>::max() ? std::string("...") : std::to_string(high)) + "]";
  return CLI::Validator(
      [low, high, range](std::string& text) -> std::string {
        T value{};
        const char* last = text.data() + text.size();
        const auto [end, error] = std::from_chars(text.data(), last, value);
        if (error == std::errc::result_out_of_range || (error == std::errc{} && end == last && value < low) ||
            (error == std::errc{} && end == last && value > high)) {
          return "'" + text + "' is out of range: need a whole number in " + range;
        }
        if (error != std::errc{} || end != last) return "'" + text + "' is not a whole number in " + range;
        text = std::to_string(value);
        return {};
      },
      "in " + range);
}

// A CLI11 check accepting a finite decimal number in [low, high], or in
// (low, high] when low_open: no NaN, no infinity, no trailing characters.
inline CLI::Validator finite_number(double low, double high, bool low_open = false) {
  const auto bound = [](double v) {
    if (v == std::numeric_limits<double>::max()) return std::string("...");
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return std::string(text);
  };
  const std::string range = std::string(low_open ? "(" : "[") + bound(low) + ", " + bound(high) + "]";
  return CLI::Validator(
      [low, high, low_open, range](std::string& text) -> std::string {
        double value = 0.0;
        const char* last = text.data() + text.size();
        const auto [end, error] = std::from_chars(text.data(), last, value);
        if (error != std::errc{} || end != last || !std::isfinite(value))
          return "'" + text + "' is not a finite number in " + range;
        if (value < low || value > high || (low_open && value == low))
          return "'" + text + "' is out of range: need a number in " + range;
        return {};
      },
      "in " + range);
}

// Parses the command line. Returns nothing when the program should go on,
// or the exit code when it should stop: 0 after --help, 2 after a usage
// error (on stderr: the program's name, the message, a pointer to --help).
// quiet: the same codes, printing nothing (the ranks of an MPI job other
// than rank 0, which prints for them).
inline std::optional<int> parse(CLI::App& app, int argc, char** argv, bool quiet = false) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help
      if (quiet) return kExitOk;
      return app.exit(e) == 0 ? kExitOk : kExitUsage;
    }
    if (!quiet) {
      std::fprintf(stderr, "%s: %s\nRun with --help for more information.\n", app.get_name().c_str(),
                   e.what());
    }
    return kExitUsage;
  }
  return std::nullopt;
}

namespace detail {

// "program: line" for every line of the message.
inline void print_error(const char* program, const char* prefix, const std::string& message) {
  std::size_t begin = 0;
  do {
    const std::size_t end = std::min(message.find('\n', begin), message.size());
    std::fprintf(stderr, "%s: %s%.*s\n", program, prefix, static_cast<int>(end - begin),
                 message.data() + begin);
    begin = end + 1;
  } while (begin < message.size());
}

}  // namespace detail

// Runs body() (which returns the exit code) and turns what escapes it into
// a message on stderr, each line starting with the program's name:
// UsageError exits 2, any other exception 1. A program whose standard
// output could not be written (a full disk, a closed pipe) also exits 1,
// saying so.
template <class Body>
int run_main(const char* program, Body&& body) noexcept {
  int code = kExitFailed;
  try {
    code = body();
  } catch (const UsageError& e) {
    detail::print_error(program, "", e.what());
    return kExitUsage;
  } catch (const std::bad_alloc& e) {
    // weft's allocation errors say what they could not allocate; a plain
    // std::bad_alloc only says "std::bad_alloc".
    const bool plain = std::strcmp(e.what(), std::bad_alloc().what()) == 0;
    detail::print_error(program, plain ? "out of memory: " : "", e.what());
    return kExitFailed;
  } catch (const std::exception& e) {
    detail::print_error(program, "", e.what());
    return kExitFailed;
  } catch (...) {
    std::fprintf(stderr, "%s: failed with an exception that is not a std::exception\n", program);
    return kExitFailed;
  }
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::fprintf(stderr, "%s: cannot write the standard output%s%s\n", program, errno != 0 ? ": " : "",
                 errno != 0 ? std::strerror(errno) : "");
    return kExitFailed;
  }
  return code;
}

}  // namespace weft::examples

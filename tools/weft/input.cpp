// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reading a command's input: a file, or standard input for "-", never more
// than the input limit (so /dev/zero or an endless pipe is an error, not a
// process the kernel kills).
#include "tool.hpp"

#include "memory_check.hpp"  // examples/: what this process may use

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <istream>
#include <new>
#include <optional>
#include <system_error>
#include <vector>

namespace weft::tool {

namespace {

std::uint64_t max_input_bytes = kDefaultMaxInputBytes;
std::uint64_t max_memory_bytes = 0;  // 0: the memory this process may use

std::string too_large(const std::string& name, const std::string& how_large) {
  return name + ": larger than the input limit of " + std::to_string(max_input_bytes) + " bytes (" +
         how_large + "); --max-bytes raises the limit";
}

// Reads `in` to its end, or throws once it holds more than the limit. A
// stream of unknown length is read in blocks joined once at the end, so
// reaching the limit copies nothing.
std::string read_stream(std::istream& in, const std::string& name, std::uint64_t expected_size) {
  constexpr std::size_t kBlock = std::size_t{1} << 20;
  std::vector<std::string> blocks;
  std::uint64_t size = 0;
  while (in) {
    std::string block(static_cast<std::size_t>(std::max<std::uint64_t>(expected_size + 1, kBlock)), '\0');
    expected_size = 0;  // a file that grew while we read: blocks from then on
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    block.resize(static_cast<std::size_t>(in.gcount()));
    size += block.size();
    if (size > max_input_bytes) throw InputError(too_large(name, "it goes on past it"));
    blocks.push_back(std::move(block));
  }
  if (in.bad()) throw InputError(name + ": cannot read: " + std::strerror(errno));
  if (blocks.size() == 1) return std::move(blocks.front());
  std::string text;
  text.reserve(static_cast<std::size_t>(size));
  for (const std::string& block : blocks) text += block;
  return text;
}

}  // namespace

void add_max_bytes_option(CLI::App& command) {
  command
      .add_option("--max-bytes", max_input_bytes,
                  "the most bytes an input may hold (suffixes k, m, g: powers of 1024); larger inputs "
                  "are refused before they fill the memory")
      ->transform(CLI::AsSizeValue(/*kb_is_1000=*/false))
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command
      .add_option("--max-memory", max_memory_bytes,
                  "the most memory loading one input may take (suffixes k, m, g: powers of 1024; default: "
                  "this machine's memory, or its control group's or ulimit -v's limit); an input that "
                  "may need more (" +
                      std::to_string(kLoadBytesPerInputByte) + " bytes a byte) is refused before loading")
      ->transform(CLI::AsSizeValue(/*kb_is_1000=*/false))
      ->check(CLI::PositiveNumber);
}

void check_load_memory(const std::string& path, const char* what, std::uint64_t bytes) {
  double allowed = static_cast<double>(max_memory_bytes);
  if (max_memory_bytes == 0) {
    const std::optional<double> usable = weft::examples::usable_memory_bytes();
    if (!usable) return;
    allowed = *usable;
  }
  const double needed = static_cast<double>(bytes) * static_cast<double>(kLoadBytesPerInputByte);
  if (needed <= allowed) return;
  throw InputError(display_name(path) + ": loading a " + what + " of " + std::to_string(bytes) +
                   " bytes may take up to " + weft::examples::gibibytes(needed) + " of memory (" +
                   std::to_string(kLoadBytesPerInputByte) + " bytes a byte), more than the " +
                   weft::examples::gibibytes(allowed) +
                   (max_memory_bytes == 0 ? " this process may use" : " of --max-memory") +
                   "; --max-memory raises the limit");
}

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

std::string read_input(const std::string& path) {
  const std::string name = display_name(path);
  try {
    if (path == "-") return read_stream(std::cin, name, 0);
    std::error_code ec;
    // An ifstream opens a directory without complaint and then reads nothing.
    if (std::filesystem::is_directory(path, ec))
      throw InputError(path + ": cannot read: it is a directory, expected a JSON file");
    std::uint64_t size = 0;
    if (std::filesystem::is_regular_file(path, ec)) {
      size = std::filesystem::file_size(path, ec);
      if (!ec && size > max_input_bytes) throw InputError(too_large(name, std::to_string(size) + " bytes"));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
    return read_stream(in, name, ec ? 0 : size);
  } catch (const std::bad_alloc&) {
    throw InputError(name + ": not enough memory to read it (--max-bytes sets a lower limit)");
  }
}

}  // namespace weft::tool

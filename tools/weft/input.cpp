// Reading a command's input: a file, or standard input for "-".
#include "tool.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <system_error>

namespace weft::tool {

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

std::string read_input(const std::string& path) {
  if (path == "-") {
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    if (std::cin.bad()) throw InputError("<stdin>: cannot read standard input");
    return text;
  }
  std::error_code ec;
  // An ifstream opens a directory without complaint and then reads nothing.
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path + ": cannot read: it is a directory, expected a JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(path + ": cannot read: " + std::strerror(errno));
  return text;
}

}  // namespace weft::tool

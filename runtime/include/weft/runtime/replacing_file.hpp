// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A file written whole or not at all. The writer fills a temporary file
// beside `path` and commit() renames it over `path` once the whole file is
// written and closed, so an interrupted or failed write leaves the previous
// file as it was (at worst a hidden ".NAME.XXXXXX" stays beside it). The
// destructor removes an uncommitted temporary. Paths that are no regular
// file (a device such as /dev/null, a pipe), and files in a folder that
// takes no new file, are written in place.
//
//   weft::ReplacingFile file(path);
//   std::FILE* f = std::fopen(file.write_path().c_str(), "wb");  // write, close, check
//   file.commit();                                               // path now holds it
#pragma once

#include <filesystem>
#include <string>

namespace weft {

class ReplacingFile {
 public:
  explicit ReplacingFile(std::string path);
  ReplacingFile(const ReplacingFile&) = delete;
  ReplacingFile& operator=(const ReplacingFile&) = delete;
  ~ReplacingFile();

  // Where to write now: the temporary, or `path` itself when it is no regular file.
  const std::string& write_path() const noexcept { return write_path_; }

  // Puts the written file in place of `path` (call after a successful
  // close); throws std::runtime_error naming `path` when it cannot.
  void commit();

 private:
  std::string path_;
  std::filesystem::path target_;
  std::string write_path_;
  std::string temporary_;  // empty: writing in place, or committed
};

}  // namespace weft

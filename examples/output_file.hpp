// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Output files of the examples and weft-bench: checked before a run starts
// and through close after it, so that a lost write is an error naming the
// file, never a silent success.
//
//   weft::examples::check_writable("out.json");  // before minutes of work: throws OutputError
//   ...                                           // the run
//   weft::examples::write_file("out.json", text); // flushed and closed, or throws OutputError
//
// check_writable() leaves nothing behind, whatever it finds: an existing file
// is opened for writing without truncating it (its contents do not change),
// a missing one is created exclusively (O_EXCL) and removed at once. It
// cannot foresee a disk that fills up later (/dev/full passes), which is
// why write_file() checks the stream again after close.
//
// A regular file is never written in place: write_file() goes through
// ReplacingFile (weft/runtime/replacing_file.hpp), which fills a temporary
// file beside it and renames that over it once the whole file is written
// and closed, so an interrupted or failed write leaves the previous file as
// it was.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <weft/runtime/replacing_file.hpp>

namespace weft::examples {

// An output file that cannot be written; the message names it.
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {

inline std::string output_failure(const std::string& what, const std::string& path, int error) {
  return what + " '" + path + "'" + (error != 0 ? std::string(": ") + std::strerror(error) : std::string());
}

}  // namespace detail

// Throws OutputError when `path` cannot be opened for writing now.
inline void check_writable(const std::string& path) {
  if (path.empty()) throw OutputError("cannot write '': the file name is empty");
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) throw OutputError("cannot write '" + path + "': it is a folder");
    if (S_ISFIFO(info.st_mode)) return;  // opening it would wait for a reader
    // O_NONBLOCK: a device or socket must not make the check wait.
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) throw OutputError(detail::output_failure("cannot write", path, errno));
    ::close(fd);
    return;
  }
  if (errno != ENOENT) throw OutputError(detail::output_failure("cannot write", path, errno));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd < 0) throw OutputError(detail::output_failure("cannot write", path, errno));
  ::close(fd);
  ::unlink(path.c_str());
}

// check_writable() on every non-empty path, reporting all the bad ones in
// one OutputError (one line each) rather than the first.
inline void check_all_writable(const std::vector<std::string>& paths) {
  std::string failures;
  for (const std::string& path : paths) {
    if (path.empty()) continue;
    try {
      check_writable(path);
    } catch (const OutputError& e) {
      failures += (failures.empty() ? "" : "\n") + std::string(e.what());
    }
  }
  if (!failures.empty()) throw OutputError(failures);
}

// weft::ReplacingFile (a temporary beside `path`, renamed over it by
// commit()), with a failed commit reported as an OutputError.
//
//   weft::examples::ReplacingFile file(path);
//   std::ofstream out(file.write_path(), std::ios::binary);  // write, close, check
//   file.commit();                                           // path now holds it
class ReplacingFile : public weft::ReplacingFile {
 public:
  using weft::ReplacingFile::ReplacingFile;
  void commit() {
    try {
      weft::ReplacingFile::commit();
    } catch (const std::runtime_error& e) {
      throw OutputError(e.what());
    }
  }
};

// Writes `text` to `path` (replacing it whole, see ReplacingFile) and checks
// the stream through close: a write that fails when the buffer is flushed is
// caught too.
inline void write_file(const std::string& path, std::string_view text) {
  ReplacingFile replacing(path);
  errno = 0;
  std::ofstream file(replacing.write_path(), std::ios::binary | std::ios::trunc);
  if (!file) throw OutputError(detail::output_failure("cannot open", path, errno));
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  file.close();
  if (file.fail()) throw OutputError(detail::output_failure("error while writing", path, errno));
  replacing.commit();
}

}  // namespace weft::examples

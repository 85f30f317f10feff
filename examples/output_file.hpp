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
// A regular file is never written in place: ReplacingFile has the writer fill
// a temporary file beside it and renames that over it only once the whole
// file is written and closed, so an interrupted or failed write leaves the
// previous file as it was (and at worst a hidden ".NAME.XXXXXX" beside it).
// Other paths (a device such as /dev/null, a pipe), and files in a folder
// that takes no new file, are written directly.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// The file a writer fills in place of `path`: a temporary beside it, renamed
// over it by commit(); removed unless committed.
//
//   weft::examples::ReplacingFile file(path);
//   std::ofstream out(file.write_path(), std::ios::binary);  // write, close, check
//   file.commit();                                           // path now holds it
class ReplacingFile {
 public:
  explicit ReplacingFile(std::string path) : path_(std::move(path)), write_path_(path_) {
    std::error_code ec;
    const std::filesystem::path target = std::filesystem::weakly_canonical(path_, ec);
    const std::filesystem::file_status status = std::filesystem::status(target, ec);
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
      return;                                              // a device, a pipe
    target_ = ec ? std::filesystem::path(path_) : target;  // a symbolic link: replace what it names
    std::string pattern = (target_.parent_path() / ("." + target_.filename().string() + ".XXXXXX")).string();
    errno = 0;
    const int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd < 0) return;  // a folder we may not add to (the file itself may still be writable): in place
    // mkostemp makes the file private (0600); give it the mode the file has,
    // or the one a new file would get.
    mode_t mode = 0;
    struct stat info {};
    if (std::filesystem::exists(status) && ::stat(target_.c_str(), &info) == 0) {
      mode = info.st_mode & 07777;
    } else {
      const mode_t mask = ::umask(0);
      ::umask(mask);
      mode = 0666 & ~mask;
    }
    ::fchmod(fd, mode);
    ::close(fd);
    write_path_ = temporary_ = pattern;
  }
  ReplacingFile(const ReplacingFile&) = delete;
  ReplacingFile& operator=(const ReplacingFile&) = delete;
  ~ReplacingFile() {
    if (!temporary_.empty()) ::unlink(temporary_.c_str());
  }

  // Where to write now: the temporary, or `path` itself when it is no regular file.
  const std::string& write_path() const noexcept { return write_path_; }

  // Puts the written file in place of `path` (call after a successful close).
  void commit() {
    if (temporary_.empty()) return;
    errno = 0;
    if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
      throw OutputError(detail::output_failure("cannot replace", path_, errno));
    }
    temporary_.clear();
  }

 private:
  std::string path_;
  std::filesystem::path target_;
  std::string write_path_;
  std::string temporary_;  // empty: writing in place, or committed
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

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/runtime/replacing_file.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace weft {

ReplacingFile::ReplacingFile(std::string path) : path_(std::move(path)), write_path_(path_) {
  std::error_code ec;
  const std::filesystem::path target = std::filesystem::weakly_canonical(path_, ec);
  const std::filesystem::file_status status = std::filesystem::status(target, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    return;                                              // a device, a pipe
  target_ = ec ? std::filesystem::path(path_) : target;  // a symbolic link: replace what it names
  std::string pattern = (target_.parent_path() / ("." + target_.filename().string() + ".XXXXXX")).string();
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

ReplacingFile::~ReplacingFile() {
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

void ReplacingFile::commit() {
  if (temporary_.empty()) return;
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
    throw std::runtime_error("cannot replace '" + path_ + "': " + std::strerror(errno));
  }
  temporary_.clear();
}

}  // namespace weft

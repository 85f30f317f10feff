// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ReplacingFile: a file written whole or not at all, beside its path.
#include <weft/runtime/replacing_file.hpp>

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace {

namespace fs = std::filesystem;

// A fresh, empty folder for one case; removed with what it holds.
struct Folder {
  fs::path path;
  explicit Folder(const char* name) : path(fs::temp_directory_path() / name) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Folder() { fs::remove_all(path); }
  std::size_t files() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(path), {}));
  }
};

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

}  // namespace

TEST_CASE("ReplacingFile.the_path_changes_only_at_commit_and_keeps_its_mode") {
  Folder folder("weft_replacing_file_commit");
  const std::string path = (folder.path / "out.json").string();
  write(path, "old");
  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  {
    weft::ReplacingFile file(path);
    CHECK(file.write_path() != path);
    CHECK(fs::path(file.write_path()).parent_path() == folder.path);  // beside it: rename stays on one disk
    write(file.write_path(), "new");
    CHECK(read(path) == "old");  // untouched while the new one is written
    file.commit();
  }
  CHECK(read(path) == "new");
  CHECK((fs::status(path).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  CHECK(folder.files() == 1);  // no temporary left
}

TEST_CASE("ReplacingFile.without_commit_the_previous_file_stays_and_the_temporary_goes") {
  Folder folder("weft_replacing_file_abandon");
  const std::string path = (folder.path / "out.json").string();
  write(path, "old");
  {
    weft::ReplacingFile file(path);
    write(file.write_path(), "half a fi");  // the writer failed part way
  }
  CHECK(read(path) == "old");
  CHECK(folder.files() == 1);
}

TEST_CASE("ReplacingFile.a_new_file_appears_at_commit") {
  Folder folder("weft_replacing_file_new");
  const std::string path = (folder.path / "fresh.json").string();
  weft::ReplacingFile file(path);
  write(file.write_path(), "text");
  CHECK_FALSE(fs::exists(path));
  file.commit();
  CHECK(read(path) == "text");
}

TEST_CASE("ReplacingFile.a_symbolic_link_keeps_pointing_at_the_replaced_file") {
  Folder folder("weft_replacing_file_link");
  const fs::path target = folder.path / "target.json", link = folder.path / "link.json";
  write(target.string(), "old");
  fs::create_symlink(target, link);
  weft::ReplacingFile file(link.string());
  write(file.write_path(), "new");
  file.commit();
  CHECK(fs::is_symlink(link));
  CHECK(read(target) == "new");
}

TEST_CASE("ReplacingFile.a_device_is_written_in_place") {
  weft::ReplacingFile file("/dev/null");
  CHECK(file.write_path() == "/dev/null");
  CHECK_NOTHROW(file.commit());
}

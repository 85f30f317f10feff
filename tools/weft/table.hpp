// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Plain-text tables for the commands' reports: columns padded to their widest
// cell, numbers aligned on the right.
//
//   Table t({"worker", "jobs"}, "rr");
//   t.add_row({"0", "12"});
//   t.print(std::cout);     // "  worker  jobs\n       0    12\n"
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace weft::tool {

class Table {
 public:
  // `align` holds one letter per column: 'l' (left) or 'r' (right); columns
  // beyond it are left-aligned.
  Table(std::vector<std::string> header, std::string align);

  void add_row(std::vector<std::string> cells);
  bool empty() const noexcept { return rows_.empty(); }
  // Every row (header first, when there is one) on its own line, each
  // prefixed by `indent`; columns separated by two spaces.
  void print(std::ostream& out, const std::string& indent = "  ") const;

 private:
  std::vector<std::string> header_;
  std::string align_;
  std::vector<std::vector<std::string>> rows_;
};

// A duration given in microseconds, in the largest unit that keeps it >= 1:
// "250 ns", "12.500 us", "3.250 ms", "1.200 s".
std::string format_duration_us(double microseconds);
// A fraction as a percentage with one decimal: "66.7%".
std::string format_percent(double fraction);

}  // namespace weft::tool

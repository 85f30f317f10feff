// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace weft::tool {

Table::Table(std::vector<std::string> header, std::string align)
    : header_(std::move(header)), align_(std::move(align)) {}

void Table::add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

void Table::print(std::ostream& out, const std::string& indent) const {
  std::vector<std::size_t> width;
  const auto measure = [&](const std::vector<std::string>& row) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  const auto print_row = [&](const std::vector<std::string>& row) {
    std::string line = indent;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string padding(width[c] - row[c].size(), ' ');
      const bool right = c < align_.size() && align_[c] == 'r';
      if (c > 0) line += "  ";
      line += right ? padding + row[c] : row[c] + padding;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  if (!header_.empty()) print_row(header_);
  for (const auto& row : rows_) print_row(row);
}

std::string format_duration_us(double microseconds) {
  char text[64];
  const double magnitude = std::fabs(microseconds);
  if (!std::isfinite(microseconds)) {
    std::snprintf(text, sizeof text, "%s", std::isnan(microseconds) ? "unknown" : "overflow");
  } else if (magnitude >= 1e15) {
    std::snprintf(text, sizeof text, "%.3e s", microseconds / 1e6);  // %f would print 300 digits
  } else if (magnitude >= 1e6) {
    std::snprintf(text, sizeof text, "%.3f s", microseconds / 1e6);
  } else if (magnitude >= 1e3) {
    std::snprintf(text, sizeof text, "%.3f ms", microseconds / 1e3);
  } else if (magnitude >= 1.0) {
    std::snprintf(text, sizeof text, "%.3f us", microseconds);
  } else {
    std::snprintf(text, sizeof text, "%.0f ns", microseconds * 1e3);
  }
  return text;
}

std::string format_percent(double fraction) {
  char text[32];
  if (!std::isfinite(fraction)) return "unknown";
  std::snprintf(text, sizeof text, "%.1f%%", fraction * 100.0);
  return text;
}

}  // namespace weft::tool

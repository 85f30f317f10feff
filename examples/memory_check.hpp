// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Refusing a run whose arrays cannot fit in this machine's memory, before
// it starts. Linux overcommits: a 78 GB field allocates at once and the run
// then faults its pages in for a minute until the OOM killer ends it. Each
// example adds up what its sizes need and calls check_fits_in_memory();
// --ignore-memory-limit (add_memory_check_flag) runs it anyway.
//
//   bool ignore = false;
//   weft::examples::add_memory_check_flag(app, ignore);
//   ...                                       // after parsing
//   weft::examples::check_fits_in_memory("2 fields of 4096x4096 doubles",
//                                        2.0 * 4096 * 4096 * 8, ignore);  // UsageError: exit 2
#pragma once

#include <CLI/CLI.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>

#include "usage_error.hpp"

namespace weft::examples {

// The memory this process may use, and what sets it: the machine's physical
// memory or, when lower, its control group's limit (a container, a batch
// job's allocation) or its address-space limit (ulimit -v).
struct UsableMemory {
  enum class Limit { physical, control_group, address_space };
  double bytes = 0;
  Limit limit = Limit::physical;
};

// nullopt where no limit can be read.
inline std::optional<UsableMemory> usable_memory() {
  std::optional<UsableMemory> usable;
  const auto lower = [&](double bytes, UsableMemory::Limit limit) {
    if (!usable || bytes < usable->bytes) usable = UsableMemory{bytes, limit};
  };
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0)
    lower(static_cast<double>(pages) * static_cast<double>(page_size), UsableMemory::Limit::physical);
  // cgroup v2 says "max" for no limit; v1 says a number near 2^63.
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream file(path);
    std::uint64_t limit = 0;
    if (!(file >> limit) || limit == 0) continue;
    lower(static_cast<double>(limit), UsableMemory::Limit::control_group);
  }
  rlimit address_space{};
  if (getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY)
    lower(static_cast<double>(address_space.rlim_cur), UsableMemory::Limit::address_space);
  return usable;
}

inline std::optional<double> usable_memory_bytes() {
  const std::optional<UsableMemory> usable = usable_memory();
  return usable ? std::optional<double>(usable->bytes) : std::nullopt;
}

// "23.5 GiB", "146 MiB" or "216 KiB".
inline std::string gibibytes(double bytes) {
  char text[48];
  if (bytes >= 1024.0 * 1024.0 * 1024.0) {
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  } else if (bytes >= 1024.0 * 1024.0) {
    std::snprintf(text, sizeof text, "%.0f MiB", bytes / (1024.0 * 1024.0));
  } else {
    std::snprintf(text, sizeof text, "%.0f KiB", bytes / 1024.0);
  }
  return text;
}

inline void add_memory_check_flag(CLI::App& app, bool& ignore) {
  app.add_flag("--ignore-memory-limit", ignore,
               "run even when the fields need more memory than this machine (or its control group) has");
}

// Throws UsageError when `bytes` (what `what` needs, in all) exceed the
// memory this process may use, unless `ignore`.
inline void check_fits_in_memory(const std::string& what, double bytes, bool ignore) {
  if (ignore) return;
  const std::optional<UsableMemory> usable = usable_memory();
  if (!usable || bytes <= usable->bytes) return;
  const std::string available = gibibytes(usable->bytes);
  std::string limit = "this machine has " + available + " of memory";
  if (usable->limit == UsableMemory::Limit::control_group)
    limit = "this process's control group allows it " + available + " of memory";
  if (usable->limit == UsableMemory::Limit::address_space)
    limit = "this process's address-space limit (ulimit -v) is " + available;
  throw UsageError("the run needs about " + gibibytes(bytes) + " for " + what + ", but " + limit +
                   " (it would swap or be killed part way); choose smaller sizes, or "
                   "--ignore-memory-limit to run anyway");
}

}  // namespace weft::examples

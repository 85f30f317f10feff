// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// `weft trace merge`: one Chrome trace from the traces of several processes
// (the ranks of a distributed run each write their own), one process per
// input, so Perfetto shows the ranks one above the other.
//
//   TraceMerge merge;
//   merge.add("trace.0.json", text0);   // process 0, or otherData.rank when the file says it
//   merge.add("trace.1.json", text1);
//   merge.write(std::cout);
//
// Each input's events keep their fields (timestamps included: each process
// counts from its own start_trace()) but take the process's pid; its own
// process_name and process_sort_index events give way to "rank N".
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace weft::tool {

class TraceMerge {
 public:
  // Adds the trace `text` as the next process. Throws std::invalid_argument
  // as parse_trace() does, and when its rank is another input's.
  void add(const std::string& name, std::string_view text);
  void write(std::ostream& out) const;

 private:
  struct Process {
    std::int64_t pid = 0;
    std::string name;  // the input's
  };
  std::vector<Process> processes_;
  std::string events_;  // every input's events, each after ",\n"
};

}  // namespace weft::tool

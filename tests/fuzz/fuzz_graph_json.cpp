// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target: Graph::from_json_text on arbitrary bytes.
//
// The contract (docs/graph-json.md): bad input is refused with
// std::invalid_argument naming the problem, and nothing else happens. So an
// invalid_argument is the expected outcome; any other exception, a crash, a
// sanitizer report, or a graph that does not survive a dump and reload
// unchanged is a finding. Build and run: tools/ci/fuzz.
#include <weft/graph/graph.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "fuzz_contract.hpp"

namespace {

[[noreturn]] void finding(const char* what, const char* detail) {
  weft::fuzz::finding("fuzz_graph_json", what, detail);
}

// A graph the loader accepted must dump, reload and dump again identically,
// and every inspection must work on it.
void check_accepted(const weft::Graph& graph) {
  const nlohmann::json dumped = graph.to_json();
  const weft::Graph reloaded = weft::Graph::from_json(dumped);
  if (reloaded.to_json() != dumped) finding("round trip", "a reloaded dump differs from the dump");
  if (graph.to_dot().empty()) finding("to_dot", "empty DOT output");
  if (graph.levels().size() != graph.size()) finding("levels", "one level per node expected");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  weft::fuzz::expect_accepted_or_refused("fuzz_graph_json",
                                         [&] { check_accepted(weft::Graph::from_json_text(text)); });
  return 0;
}

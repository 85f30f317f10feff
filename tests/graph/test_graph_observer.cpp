// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Observers on graph runs: every node once per run, known by its graph's
// name for it, its partition and device, between its run's begin and end.
#include <weft/graph/graph.hpp>
#include <weft/runtime/observer.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../executor_configs.hpp"

namespace {

struct Recorder : weft::Observer {
  struct Entry {
    char what;  // 'R' run begin, 'b' node begin, 'e' node end, 'r' run end
    weft::NodeEvent node;
    weft::RunEvent run;
  };
  std::mutex mutex;
  std::vector<Entry> entries;
  void add(Entry e) {
    std::lock_guard<std::mutex> lock(mutex);
    entries.push_back(e);
  }
  void on_run_begin(const weft::RunEvent& e) noexcept override { add({'R', {}, e}); }
  void on_run_end(const weft::RunEvent& e) noexcept override { add({'r', {}, e}); }
  void on_node_begin(const weft::NodeEvent& e) noexcept override { add({'b', e, {}}); }
  void on_node_end(const weft::NodeEvent& e) noexcept override { add({'e', e, {}}); }
};

}  // namespace

TEST_CASE("GraphObserver.each_node_once_per_run_with_its_name_partition_and_device.virtual_devices") {
  weft::Tensor<double, 1> x({4}, 1000);
  weft::Graph g(weft::ExecutionKind::Gpu);
  g.emplace([] {}).named("start");
  g.then_split([](auto& it) { *it = 1.0; }, x).named("fill");  // fill.0 ... fill.3, one per partition
  weft::Executor executor(weft::test::with_virtual_devices(1, 4));
  auto recorder = std::make_shared<Recorder>();
  executor.attach(recorder);
  executor.run_n(g, 3).wait().get();
  executor.detach(recorder);

  std::vector<std::string> per_run(3);  // what each run saw, in order: R b e ... r
  std::vector<std::vector<std::string>> names(3);
  for (const Recorder::Entry& e : recorder->entries) {
    const std::int64_t run = e.what == 'R' || e.what == 'r' ? e.run.run : e.node.run;
    REQUIRE(run >= 0);
    REQUIRE(run < 3);
    per_run[static_cast<std::size_t>(run)] += e.what;
    CHECK((e.what == 'R' || e.what == 'r' ? e.run.graph : e.node.graph) == &g);
    if (e.what != 'e') continue;
    const std::string name = e.node.name;
    names[static_cast<std::size_t>(run)].push_back(name);
    if (name == "start") {
      CHECK(e.node.node == 0);
      CHECK(e.node.partition == -1);
    } else {
      REQUIRE(name.size() == 6);  // fill.<p>
      const int p = name[5] - '0';
      CHECK(e.node.partition == p);
      CHECK(e.node.device == p);  // one virtual device per partition
    }
  }
  for (std::size_t run = 0; run < 3; ++run) {
    CAPTURE(run);
    CHECK(per_run[run].front() == 'R');
    CHECK(per_run[run].back() == 'r');
    CHECK(per_run[run].size() == 2 + 2 * 5);
    std::sort(names[run].begin(), names[run].end());
    CHECK(names[run] == std::vector<std::string>{"fill.0", "fill.1", "fill.2", "fill.3", "start"});
  }
}

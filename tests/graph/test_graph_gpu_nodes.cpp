// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GPU nodes (on_gpu, on_gpu_copy) as the graph sees them without a GPU:
// their shape, their errors, and the clear refusal to run where no CUDA
// device can be used. tests/cuda/graph_gpu_test.cu runs them on a GPU.
#include <weft/backends/cuda_devices.hpp>
#include <weft/graph/graph.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

#include "../executor_configs.hpp"
#include "../test_support.hpp"

namespace {

void queue_nothing(weft::GpuStream /*stream*/, int /*value*/) {}

}  // namespace

TEST_CASE("Graph.gpu_nodes_are_gpu_nodes_on_their_device_whatever_the_graph_kind") {
  weft::Graph g(weft::ExecutionKind::Cpu);
  g.emplace([] {}).named("host");
  g.then(weft::on_gpu(1, queue_nothing, 7)).named("kernel");
  g.then(weft::on_gpu_copy(0, 1, queue_nothing, 8)).named("download");
  g.then(weft::ExecutionKind::Cpu, weft::on_gpu(0, queue_nothing, 9)).named("forced");
  const nlohmann::json doc = g.to_json();
  CHECK(doc["nodes"][0]["execution_kind"] == "cpu");
  CHECK(doc["nodes"][1]["execution_kind"] == "gpu");
  CHECK(doc["nodes"][1]["device"] == 1);
  CHECK(doc["nodes"][2]["execution_kind"] == "gpu");
  CHECK(doc["nodes"][2]["device"] == 0);
  CHECK(doc["nodes"][3]["execution_kind"] == "gpu");  // on_gpu wins over the operation's kind
  CHECK(g.levels() == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("Graph.gpu_node_arguments_are_checked_when_made") {
  CHECK(weft::test::invalid_argument_message([] { (void)weft::on_gpu(-1, queue_nothing, 1); }) ==
        "weft::on_gpu: device -1 (expected a CUDA device ordinal >= 0)");
  CHECK(weft::test::invalid_argument_message([] { (void)weft::on_gpu_copy(0, 2, queue_nothing, 1); }) ==
        "weft::on_gpu_copy: copy stream 2 (expected 0 to 1)");
  CHECK(weft::test::invalid_argument_message([] { (void)weft::on_gpu_copy(0, -1, queue_nothing, 1); }) ==
        "weft::on_gpu_copy: copy stream -1 (expected 0 to 1)");
}

TEST_CASE("Graph.gpu_nodes_without_a_usable_gpu_are_refused_before_anything_runs") {
  if (!weft::discover_cuda_devices().devices.empty()) {
    MESSAGE("a GPU is present: tests/cuda/graph_gpu_test.cu runs GPU nodes instead");
    return;
  }
  int host_runs = 0;
  weft::Graph g;
  g.emplace([&] { ++host_runs; });
  g.then(weft::on_gpu(0, queue_nothing, 1)).named("kernel");
  weft::Executor executor(weft::test::with_virtual_devices(1, 1));
  // The message names the node, the device and why CUDA cannot be used
  // (no backend compiled in, or no driver or device).
  CHECK_THROWS_WITH_AS(executor.run(g), doctest::Contains("Graph: GPU node 1 cannot run on device 0: "),
                       std::runtime_error);
  CHECK(host_runs == 0);
}

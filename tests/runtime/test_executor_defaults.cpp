// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a default Executor starts: a host virtual device and one GPU-priority
// worker without a CUDA device, WEFT_NUM_THREADS for the CPU workers, and
// explicit configs kept as they are.
#include <weft/runtime/executor.hpp>
#include <weft/runtime/task_group.hpp>
#include <weft/runtime/work_graph_policy.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include "../executor_configs.hpp"
#include "../test_support.hpp"

namespace {

// Sets (or, for null, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    if (value == nullptr) {
      ::unsetenv(name);
    } else {
      ::setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    if (saved_) {
      ::setenv(name_, saved_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

weft::WorkerCounts plan(const weft::ExecutorConfig& config, int cores, int cuda_devices = 0,
                        const char* num_threads = nullptr) {
  return weft::plan_workers(config, cores, cuda_devices, num_threads);
}

}  // namespace

TEST_CASE("ExecutorDefaults.num_threads_parses_a_positive_count") {
  CHECK_FALSE(weft::parse_num_threads(nullptr).has_value());
  CHECK_FALSE(weft::parse_num_threads("").has_value());  // set but empty: unset
  CHECK(weft::parse_num_threads("1") == 1);
  CHECK(weft::parse_num_threads("12") == 12);
  CHECK(weft::parse_num_threads("007") == 7);
  CHECK(weft::parse_num_threads("4096") == weft::kMaxNumThreads);
}

TEST_CASE("ExecutorDefaults.num_threads_refuses_what_is_not_a_count_naming_the_variable_and_value") {
  for (const char* bad :
       {"0", "-1", "+4", "4097", "99999999999999999999", "abc", "4x", " 4", "4 ", "1.5", "0x10"}) {
    CAPTURE(bad);
    const std::string message = weft::test::invalid_argument_message([&] { weft::parse_num_threads(bad); });
    CHECK(message.find(std::string("WEFT_NUM_THREADS='") + bad + "'") != std::string::npos);
    CHECK(message.find("from 1 to 4096") != std::string::npos);
  }
}

TEST_CASE("ExecutorDefaults.only_a_config_with_automatic_worker_counts_gets_a_virtual_device") {
  CHECK(weft::planned_virtual_devices(weft::ExecutorConfig{}) == 1);
  CHECK(weft::planned_virtual_devices(weft::ExecutorConfig::cpu_only(4)) == 0);
  weft::ExecutorConfig cpu_set;
  cpu_set.cpu_workers = 4;  // what the task-DAG benchmarks set
  CHECK(weft::planned_virtual_devices(cpu_set) == 0);
  weft::ExecutorConfig gpu_set;
  gpu_set.gpu_workers = 2;
  CHECK(weft::planned_virtual_devices(gpu_set) == 0);
  weft::ExecutorConfig explicit_devices;
  explicit_devices.cpu_workers = 2;
  explicit_devices.virtual_devices = 3;
  CHECK(weft::planned_virtual_devices(explicit_devices) == 3);
}

TEST_CASE("ExecutorDefaults.plan_keeps_one_worker_per_core_with_one_gpu_priority_worker") {
  const weft::ExecutorConfig defaults;
  CHECK(plan(defaults, 8).cpu == 7);
  CHECK(plan(defaults, 8).gpu == 1);
  CHECK(plan(defaults, 1).cpu == 1);  // at least one CPU worker
  CHECK(plan(defaults, 1).gpu == 1);
  // CUDA devices replace the virtual one: one more GPU worker than devices.
  CHECK(plan(defaults, 8, 2).gpu == 3);
  CHECK(plan(defaults, 8, 2).cpu == 5);
}

TEST_CASE("ExecutorDefaults.plan_keeps_explicit_configs_as_they_are") {
  CHECK(plan(weft::ExecutorConfig::cpu_only(4), 8).cpu == 4);
  CHECK(plan(weft::ExecutorConfig::cpu_only(4), 8).gpu == 0);
  weft::ExecutorConfig cpu_set;
  cpu_set.cpu_workers = 4;
  CHECK(plan(cpu_set, 8).cpu == 4);
  CHECK(plan(cpu_set, 8).gpu == 0);     // no GPU, no virtual device asked for: as before
  CHECK(plan(cpu_set, 8, 1).gpu == 2);  // CUDA devices still bring GPU workers
  weft::ExecutorConfig devices;
  devices.cpu_workers = 3;
  devices.virtual_devices = 2;
  CHECK(plan(devices, 8).gpu == 3);  // one more than the devices, as in Ripple
  weft::ExecutorConfig bad;
  bad.virtual_devices = -2;
  CHECK_THROWS_AS(plan(bad, 8), std::invalid_argument);
  weft::ExecutorConfig none = weft::ExecutorConfig::cpu_only(0);
  CHECK_THROWS_WITH_AS(plan(none, 8), doctest::Contains("at least one worker"), std::invalid_argument);
}

TEST_CASE("ExecutorDefaults.plan_takes_the_cpu_workers_from_num_threads_unless_the_config_sets_them") {
  const weft::ExecutorConfig defaults;
  CHECK(plan(defaults, 8, 0, "3").cpu == 3);
  CHECK(plan(defaults, 8, 0, "3").gpu == 1);
  CHECK(plan(defaults, 2, 0, "16").cpu == 16);  // more than the cores: asked for
  CHECK(plan(defaults, 8, 0, "").cpu == 7);
  CHECK_THROWS_WITH_AS(plan(defaults, 8, 0, "many"), doctest::Contains("WEFT_NUM_THREADS='many'"),
                       std::invalid_argument);
  weft::ExecutorConfig cpu_set;
  cpu_set.cpu_workers = 2;
  CHECK(plan(cpu_set, 8, 0, "3").cpu == 2);
  CHECK(plan(cpu_set, 8, 0, "many").cpu == 2);  // not consulted, so not an error
}

TEST_CASE("ExecutorDefaults.default_executor_runs_gpu_jobs_without_a_gpu") {
  const ScopedEnv unset("WEFT_NUM_THREADS", nullptr);
  weft::Executor executor;
  if (executor.devices().gpu_count() > 0) return;  // a CUDA machine: its GPUs are used instead
  CHECK(executor.gpu_worker_count() == 1);
  CHECK(executor.devices().device_count() == 1);
  CHECK(executor.devices().uses_virtual_devices());
  CHECK(executor.cpu_worker_count() >= 1);
  std::atomic<int> on_gpu_worker{0};
  weft::TaskGroup group(executor);
  for (int i = 0; i < 50; ++i) {
    group.run(
        [&] {
          const weft::WorkerContext* self = weft::Executor::current_worker();
          if (self != nullptr && self->domain() == weft::Domain::Gpu) on_gpu_worker.fetch_add(1);
        },
        weft::Domain::Gpu);
  }
  group.wait();
  CHECK(on_gpu_worker.load() == 50);
}

TEST_CASE("ExecutorDefaults.the_gpu_priority_worker_runs_cpu_jobs_while_it_has_no_gpu_work.2threads") {
  weft::ExecutorConfig config;  // one CPU worker and the lone GPU-priority worker
  config.cpu_workers = 1;
  config.virtual_devices = 1;
  config.gpu_workers = 1;
  weft::Executor executor(config);
  REQUIRE(executor.worker_count() == 2);
  // Two CPU jobs that each wait until both run at once: only if the
  // GPU-priority worker takes one. The second is submitted once the first
  // runs, so that it wakes whichever worker is left.
  std::atomic<int> running{0};
  std::atomic<int> met{0};
  const auto meet = [&] {
    running.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (running.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    if (running.load() == 2) met.fetch_add(1);
  };
  weft::TaskGroup group(executor);
  group.run(meet);
  while (running.load() == 0) std::this_thread::yield();
  group.run(meet);
  group.wait();
  CHECK(met.load() == 2);
}

TEST_CASE("ExecutorDefaults.weft_num_threads_sets_the_cpu_workers_of_a_default_executor.3threads") {
  const ScopedEnv three("WEFT_NUM_THREADS", "3");
  weft::Executor defaults;
  CHECK(defaults.cpu_worker_count() == 3);
  if (defaults.devices().gpu_count() == 0) CHECK(defaults.gpu_worker_count() == 1);

  weft::ExecutorConfig cpu_set;
  cpu_set.cpu_workers = 2;  // an explicit count wins
  weft::Executor explicit_count(cpu_set);
  CHECK(explicit_count.cpu_worker_count() == 2);

  weft::Executor cpu_only(weft::test::cpu_only(1));
  CHECK(cpu_only.cpu_worker_count() == 1);
  CHECK(cpu_only.gpu_worker_count() == 0);
}

TEST_CASE("ExecutorDefaults.a_bad_weft_num_threads_is_an_error_at_construction") {
  for (const char* bad : {"0", "-2", "4097", "eight", "2threads"}) {
    CAPTURE(bad);
    const ScopedEnv env("WEFT_NUM_THREADS", bad);
    const std::string message = weft::test::invalid_argument_message([] { weft::Executor executor; });
    CHECK(message.find(std::string("WEFT_NUM_THREADS='") + bad + "'") != std::string::npos);
    // A config that sets cpu_workers does not read it.
    CHECK_NOTHROW(weft::Executor(weft::test::cpu_only(1)));
  }
}

TEST_CASE("ExecutorDefaults.cpu_only_keeps_no_gpu_workers_and_the_error_names_the_fix") {
  weft::Executor executor(weft::test::cpu_only(2));
  CHECK(executor.gpu_worker_count() == 0);
  CHECK(executor.devices().device_count() == 0);
  weft::TaskGroup group(executor);
  const std::string message =
      weft::test::thrown_message<std::logic_error>([&] { group.run([] {}, weft::Domain::Gpu); });
  CHECK(message.find("GPU-priority workers") != std::string::npos);
  CHECK(message.find("ExecutorConfig::gpu_workers = 0") != std::string::npos);
  CHECK(message.find("virtual_devices = 1 (a host virtual device: no GPU needed) and gpu_workers = "
                     "ExecutorConfig::automatic") != std::string::npos);
  CHECK(message.find("Domain::Cpu") != std::string::npos);
  group.wait();
}

TEST_CASE("ExecutorDefaults.a_config_that_sets_cpu_workers_is_told_why_it_has_no_virtual_device") {
  weft::ExecutorConfig config;
  config.cpu_workers = 1;
  config.use_cuda = false;
  weft::Executor executor(config);
  CHECK(executor.gpu_worker_count() == 0);
  weft::TaskGroup group(executor);
  const std::string message =
      weft::test::thrown_message<std::logic_error>([&] { group.run([] {}, weft::Domain::Gpu); });
  CHECK(message.find("ExecutorConfig::virtual_devices = 0") != std::string::npos);
  CHECK(message.find("both worker counts automatic") != std::string::npos);
  CHECK(message.find("give it some with ExecutorConfig::virtual_devices = 1 (") != std::string::npos);
  group.wait();
}

TEST_CASE("ExecutorDefaults.a_work_graph_names_its_first_gpu_node_and_the_fix") {
  weft::Crs<int> dag;
  dag.row_map = {0, 1, 2, 2};  // 0 -> 1 -> 2
  dag.entries = {1, 2};
  const weft::WorkGraphPolicy<int> policy(dag, {weft::Domain::Cpu, weft::Domain::Gpu, weft::Domain::Gpu});
  weft::Executor executor(weft::test::cpu_only(1));
  const std::string message =
      weft::test::thrown_message<std::logic_error>([&] { weft::parallel_for(executor, policy, [](int) {}); });
  CHECK(message.find("WorkGraphPolicy: node 1 (the first of Domain::Gpu)") != std::string::npos);
  CHECK(message.find("gpu_workers = ExecutorConfig::automatic") != std::string::npos);
  // And with the default executor it runs.
  weft::Executor defaults;
  std::atomic<int> ran{0};
  weft::parallel_for(defaults, policy, [&](int) { ran.fetch_add(1); });
  CHECK(ran.load() == 3);
}

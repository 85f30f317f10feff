// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// `weft info [--json]`: what this build of weft contains and what it would
// do on this machine: version, build options, the hwloc topology, CUDA
// devices (or why none), host virtual devices, and the workers and devices a
// default weft::Executor would start. Read through the layers' public API,
// so the report is what a program linked against this build sees.
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <weft/backends/config.hpp>
#include <weft/backends/cuda_devices.hpp>
#include <weft/backends/device_registry.hpp>
#include <weft/runtime/executor_config.hpp>
#include <weft/runtime/topology.hpp>

#include <nlohmann/json.hpp>

#include "table.hpp"
#include "tool.hpp"

// Known only to CMake; tools/weft/CMakeLists.txt passes them in.
#ifndef WEFT_TOOL_MPI_LAYER
#error "WEFT_TOOL_MPI_LAYER (1 when the mpi layer is built) must be defined by the build"
#endif
#ifndef WEFT_TOOL_SANITIZER
#define WEFT_TOOL_SANITIZER ""
#endif
#ifndef WEFT_TOOL_BUILD_TYPE
#define WEFT_TOOL_BUILD_TYPE ""
#endif
#ifndef WEFT_TOOL_COMPILER
#define WEFT_TOOL_COMPILER ""
#endif

namespace weft::tool {

namespace {

struct TopologyInfo {
  bool usable = false;
  std::string warning;
  int packages = 0, numa_nodes = 0, cores = 0, pus = 0, l3_caches = 0;
};

struct ExecutorPlan {
  int cores = 0;  // what the Executor divides among its workers
  bool cores_from_hwloc = false;
  std::optional<std::string> num_threads;  // WEFT_NUM_THREADS, when set
  WorkerCounts workers;
  std::vector<DeviceInfo> devices;
  std::string cuda_note;  // why no CUDA device is used (empty when some are)
  std::string error;      // why it would not start (empty when it would)
};

struct Info {
  TopologyInfo topology;
  CudaDiscovery cuda;
  std::string cuda_error;  // discovery threw (a bad WEFT_CUDA_LOGICAL_DEVICES)
  ExecutorPlan executor;
};

TopologyInfo read_topology() {
  const Topology& topo = Topology::system();
  TopologyInfo info{
      topo.usable(), topo.warning(), topo.package_count(), topo.numa_node_count(), topo.core_count(), 0, 0};
  std::set<int> l3_groups;
  for (const CoreInfo& core : topo.cores()) {
    info.pus += static_cast<int>(core.os_cpus.size());
    if (core.l3_group >= 0) l3_groups.insert(core.l3_group);
  }
  info.l3_caches = static_cast<int>(l3_groups.size());
  return info;
}

// What Executor(ExecutorConfig{}) would start: the same inputs its
// constructor gives plan_workers (runtime/src/executor.cpp).
ExecutorPlan plan_default_executor(const TopologyInfo& topology) {
  ExecutorPlan plan;
  plan.cores_from_hwloc = topology.usable;
  plan.cores =
      topology.usable ? topology.cores : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const char* num_threads = std::getenv(kNumThreadsVariable);
  if (num_threads != nullptr && *num_threads != '\0') plan.num_threads = num_threads;
  try {
    const ExecutorConfig config;
    const DeviceRegistry registry(planned_virtual_devices(config), config.use_cuda);
    plan.devices = registry.devices();
    plan.cuda_note = registry.cuda_note();
    plan.workers = plan_workers(config, plan.cores, registry.gpu_count(), num_threads);
  } catch (const std::exception& e) {
    plan.error = e.what();
  }
  return plan;
}

Info gather() {
  Info info;
  info.topology = read_topology();
  try {
    info.cuda = discover_cuda_devices();
  } catch (const std::exception& e) {
    info.cuda_error = e.what();
  }
  info.executor = plan_default_executor(info.topology);
  return info;
}

// ---- what the build says about itself ----

std::string build_type() {
  const std::string type = WEFT_TOOL_BUILD_TYPE;
  return type.empty() ? "none (CMAKE_BUILD_TYPE empty)" : type;
}

std::string sanitizer() {
  const std::string name = WEFT_TOOL_SANITIZER;
  if (name == "thread") return "thread (ThreadSanitizer)";
  if (name == "address") return "address (AddressSanitizer + UndefinedBehaviorSanitizer)";
  return name.empty() ? "none" : name;
}

std::string plural(int count, const std::string& word) {
  return std::to_string(count) + ' ' + word + (count == 1 ? "" : "s");
}

std::string gib(std::size_t bytes) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << static_cast<double>(bytes) / double(1 << 30) << " GiB";
  return out.str();
}

std::string device_names(const std::vector<DeviceInfo>& devices) {
  std::string names;
  for (const DeviceInfo& d : devices) names += (names.empty() ? "" : ", ") + d.name;
  return names;
}

// ---- text ----

void print_build(std::ostream& out) {
  Table table({}, "ll");
  table.add_row({"type", build_type()});
  table.add_row({"compiler", WEFT_TOOL_COMPILER});
  table.add_row({"CUDA backend", cuda_backend_compiled() ? "compiled" : "not compiled"});
  table.add_row({"MPI layer", WEFT_TOOL_MPI_LAYER ? "built (weft::mpi)" : "not built"});
  table.add_row({"sanitizer", sanitizer()});
  out << "build:\n";
  table.print(out);
}

void print_topology(std::ostream& out, const TopologyInfo& topo) {
  if (!topo.usable) {
    out << "topology (hwloc): unknown (" << topo.warning << ")\n";
    return;
  }
  Table table({}, "lr");
  table.add_row({"packages", std::to_string(topo.packages)});
  table.add_row({"NUMA nodes", std::to_string(topo.numa_nodes)});
  table.add_row({"cores", std::to_string(topo.cores)});
  table.add_row({"PUs", std::to_string(topo.pus)});
  table.add_row({"L3 caches", std::to_string(topo.l3_caches)});
  out << "topology (hwloc):\n";
  table.print(out);
}

void print_cuda(std::ostream& out, const Info& info) {
  if (!info.cuda_error.empty()) {
    out << "CUDA devices: unknown (" << info.cuda_error << ")\n";
    return;
  }
  if (info.cuda.devices.empty()) {
    out << "CUDA devices: none (" << info.cuda.note << ")\n";
    return;
  }
  out << "CUDA devices: " << info.cuda.devices.size() << " on " << plural(info.cuda.physical_devices, "GPU")
      << '\n';
  Table table({"id", "name", "memory", "compute", "GPU"}, "rllrr");
  for (const DeviceInfo& d : info.cuda.devices) {
    table.add_row(
        {std::to_string(d.id), d.name, gib(d.total_memory),
         std::to_string(d.compute_capability_major) + '.' + std::to_string(d.compute_capability_minor),
         std::to_string(d.physical_id)});
  }
  table.print(out);
}

void print_virtual_devices(std::ostream& out, const ExecutorPlan& plan) {
  const bool virtual_ones = !plan.devices.empty() && plan.devices.front().kind == DeviceKind::HostVirtual;
  out << "host virtual devices: ";
  if (!plan.error.empty())
    out << "unknown\n";
  else if (virtual_ones)
    out << plan.devices.size() << " (" << device_names(plan.devices)
        << "): GPU-kind work runs there, since no CUDA device is used\n";
  else
    out << "0 (a default Executor uses the CUDA devices)\n";
}

void print_executor(std::ostream& out, const ExecutorPlan& plan) {
  out << "default Executor:\n";
  if (!plan.error.empty()) {
    out << "  would not start: " << plan.error << '\n';
    return;
  }
  const std::string cpu_source = plan.num_threads ? std::string(kNumThreadsVariable) + '=' + *plan.num_threads
                                                  : "one per core, less the GPU-priority workers";
  Table table({}, "lrl");
  table.add_row({"CPU workers", std::to_string(plan.workers.cpu), "(" + cpu_source + ")"});
  table.add_row({"GPU-priority workers", std::to_string(plan.workers.gpu), ""});
  table.add_row(
      {"cores", std::to_string(plan.cores), plan.cores_from_hwloc ? "(hwloc)" : "(hardware threads)"});
  table.add_row({"devices", std::to_string(plan.devices.size()), device_names(plan.devices)});
  table.print(out);
}

void print_text(std::ostream& out, const Info& info) {
  out << "weft " << WEFT_VERSION_STRING << '\n';
  print_build(out);
  print_topology(out, info.topology);
  print_cuda(out, info);
  print_virtual_devices(out, info.executor);
  print_executor(out, info.executor);
}

// ---- JSON ----

nlohmann::json device_json(const DeviceInfo& d) {
  nlohmann::json device = {{"id", d.id},
                           {"kind", to_string(d.kind)},
                           {"name", d.name},
                           {"total_memory", d.total_memory},
                           {"physical_id", d.physical_id}};
  if (d.kind == DeviceKind::Cuda)
    device["compute_capability"] =
        std::to_string(d.compute_capability_major) + '.' + std::to_string(d.compute_capability_minor);
  return device;
}

nlohmann::json devices_json(const std::vector<DeviceInfo>& devices) {
  nlohmann::json list = nlohmann::json::array();
  for (const DeviceInfo& d : devices) list.push_back(device_json(d));
  return list;
}

nlohmann::json info_to_json(const Info& info) {
  const TopologyInfo& topo = info.topology;
  const ExecutorPlan& plan = info.executor;
  nlohmann::json executor = {{"cores", plan.cores},
                             {"cores_from_hwloc", plan.cores_from_hwloc},
                             {"num_threads", plan.num_threads ? nlohmann::json(*plan.num_threads) : nullptr},
                             {"cpu_workers", plan.workers.cpu},
                             {"gpu_workers", plan.workers.gpu},
                             {"devices", devices_json(plan.devices)},
                             {"cuda_note", plan.cuda_note}};
  if (!plan.error.empty()) executor["error"] = plan.error;
  nlohmann::json cuda = {{"devices", devices_json(info.cuda.devices)},
                         {"physical_devices", info.cuda.physical_devices},
                         {"note", info.cuda_error.empty() ? info.cuda.note : info.cuda_error}};
  return {{"version",
           {{"string", WEFT_VERSION_STRING},
            {"major", WEFT_VERSION_MAJOR},
            {"minor", WEFT_VERSION_MINOR},
            {"patch", WEFT_VERSION_PATCH}}},
          {"build",
           {{"type", WEFT_TOOL_BUILD_TYPE},
            {"compiler", WEFT_TOOL_COMPILER},
            {"cuda_backend", cuda_backend_compiled()},
            {"mpi_layer", WEFT_TOOL_MPI_LAYER != 0},
            {"sanitizer", WEFT_TOOL_SANITIZER}}},
          {"topology",
           {{"usable", topo.usable},
            {"warning", topo.warning},
            {"packages", topo.packages},
            {"numa_nodes", topo.numa_nodes},
            {"cores", topo.cores},
            {"pus", topo.pus},
            {"l3_caches", topo.l3_caches}}},
          {"cuda", cuda},
          {"executor", executor}};
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* info = app.add_subcommand(
      "info",
      "Describe this build of weft and this machine: version, build options (CUDA backend, MPI layer, "
      "sanitizer, build type), the hwloc topology, CUDA devices (or why none), host virtual devices, "
      "and the workers and devices a default weft::Executor would start (WEFT_NUM_THREADS sets its "
      "CPU workers). Exits 1, after the report, when a default Executor would not start.");
  info->add_flag("--json", *json, "print the report as one JSON object");
  info->callback([json] {
    const Info report = gather();
    if (*json)
      std::cout << info_to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    else
      print_text(std::cout, report);
    const std::string& error = !report.cuda_error.empty() ? report.cuda_error : report.executor.error;
    if (!error.empty()) {
      std::cout.flush();
      std::cerr << "weft info: a default Executor would not start: " << error << '\n';
      throw Reported{kExitInvalidInput};
    }
  });
}

}  // namespace weft::tool

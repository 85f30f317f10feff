// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/runtime/topology.hpp>

#include <hwloc.h>

#include <sstream>
#include <stdexcept>

namespace weft {

struct Topology::Handle {
  hwloc_topology_t topo = nullptr;
  ~Handle() {
    if (topo != nullptr) hwloc_topology_destroy(topo);
  }
};

Topology::Topology() = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
Topology::~Topology() = default;

const Topology& Topology::system() {
  static const Topology topo = detect();
  return topo;
}

namespace {

int ancestor_index(hwloc_topology_t topo, hwloc_obj_t obj, hwloc_obj_type_t type) {
  hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(topo, type, obj);
  return a != nullptr ? static_cast<int>(a->logical_index) : -1;
}

}  // namespace

Topology Topology::detect() {
  Topology result;
  auto handle = std::make_unique<Handle>();
  if (hwloc_topology_init(&handle->topo) != 0 || hwloc_topology_load(handle->topo) != 0) {
    result.warning_ = "hwloc could not load the machine topology; workers run unpinned";
    return result;
  }
  hwloc_topology_t topo = handle->topo;
  const int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  const int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  result.numa_nodes_ = numa > 0 ? numa : 0;
  const int packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  result.packages_ = packages > 0 ? packages : 0;
  for (int c = 0; c < cores; ++c) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(c));
    if (core == nullptr || core->cpuset == nullptr) continue;
    CoreInfo info;
    info.index = static_cast<int>(result.cores_.size());
    unsigned cpu = 0;
    hwloc_bitmap_foreach_begin(cpu, core->cpuset) info.os_cpus.push_back(static_cast<int>(cpu));
    hwloc_bitmap_foreach_end();
    info.l2_group = ancestor_index(topo, core, HWLOC_OBJ_L2CACHE);
    info.l3_group = ancestor_index(topo, core, HWLOC_OBJ_L3CACHE);
    for (int n = 0; n < numa; ++n) {
      hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(n));
      if (node != nullptr && node->cpuset != nullptr && hwloc_bitmap_isincluded(core->cpuset, node->cpuset)) {
        info.numa_node = n;
        break;
      }
    }
    if (!info.os_cpus.empty()) result.cores_.push_back(std::move(info));
  }
  if (result.cores_.empty()) {
    result.warning_ = "hwloc found no processor cores; workers run unpinned";
    return result;
  }
  result.handle_ = std::move(handle);
  return result;
}

int Topology::cache_distance(int a, int b) const {
  if (a < 0 || b < 0 || a >= core_count() || b >= core_count()) {
    throw std::out_of_range("Topology::cache_distance: core " +
                            std::to_string(a < 0 || a >= core_count() ? a : b) + " outside 0.." +
                            std::to_string(core_count() - 1));
  }
  if (a == b) return 0;
  const CoreInfo& x = cores_[static_cast<std::size_t>(a)];
  const CoreInfo& y = cores_[static_cast<std::size_t>(b)];
  if (x.l2_group >= 0 && x.l2_group == y.l2_group) return 1;
  if (x.l3_group >= 0 && x.l3_group == y.l3_group) return 2;
  if (x.numa_node >= 0 && x.numa_node == y.numa_node) return 3;
  return 4;
}

bool Topology::pin_current_thread(int core, std::string* why) const {
  if (!usable() || handle_ == nullptr) {
    if (why != nullptr) *why = warning_.empty() ? "no usable topology" : warning_;
    return false;
  }
  const CoreInfo& info = cores_[static_cast<std::size_t>(core % core_count())];
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  for (int cpu : info.os_cpus) hwloc_bitmap_set(set, static_cast<unsigned>(cpu));
  const int rc = hwloc_set_cpubind(handle_->topo, set, HWLOC_CPUBIND_THREAD);
  hwloc_bitmap_free(set);
  if (rc != 0) {
    if (why != nullptr) *why = "hwloc_set_cpubind refused core " + std::to_string(info.index);
    return false;
  }
  return true;
}

std::string Topology::describe() const {
  std::ostringstream out;
  if (!usable()) {
    out << "topology unknown (" << warning_ << ")";
    return out.str();
  }
  out << core_count() << " cores, " << numa_nodes_ << " NUMA node(s)";
  return out.str();
}

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The machine's layout as hwloc sees it: physical cores, which cores share a
// cache, NUMA nodes; and pinning a thread to a core.
//
//   const weft::Topology& topo = weft::Topology::system();
//   topo.core_count();                 // physical cores
//   topo.cache_distance(0, 1);         // 1: share an L2, 2: share an L3, ...
//   topo.pin_current_thread(0);        // false (and a reason) if it cannot
//
// Where hwloc sees nothing useful (a container that hides the topology, say),
// usable() is false, warning() says why, and callers run unpinned.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace weft {

struct CoreInfo {
  int index = 0;             // 0..core_count()-1, hwloc's logical order
  std::vector<int> os_cpus;  // the OS processor numbers of its hardware threads
  int l2_group = -1;         // cores with the same l2_group share an L2 (-1: unknown)
  int l3_group = -1;         // likewise for the L3
  int numa_node = -1;        // the NUMA node whose memory is local (-1: unknown)
};

class Topology {
 public:
  // The topology of this machine, read once on first use.
  static const Topology& system();

  // Reads the topology now (system() caches one of these).
  static Topology detect();

  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  ~Topology();

  bool usable() const noexcept { return !cores_.empty(); }
  const std::string& warning() const noexcept { return warning_; }
  int core_count() const noexcept { return static_cast<int>(cores_.size()); }
  int numa_node_count() const noexcept { return numa_nodes_; }
  int package_count() const noexcept { return packages_; }  // processor sockets (0: unknown)
  const std::vector<CoreInfo>& cores() const noexcept { return cores_; }

  // 0: same core; 1: share an L2; 2: share an L3; 3: same NUMA node; 4: farther.
  int cache_distance(int core_a, int core_b) const;

  // Binds the calling thread to core `core % core_count()`. Returns false when
  // the topology is unusable or the OS refused; `why` then says what failed.
  bool pin_current_thread(int core, std::string* why = nullptr) const;

  std::string describe() const;  // one line a person reads

 private:
  Topology();
  struct Handle;
  std::unique_ptr<Handle> handle_;
  std::vector<CoreInfo> cores_;
  int numa_nodes_ = 0;
  int packages_ = 0;
  std::string warning_;
};

}  // namespace weft

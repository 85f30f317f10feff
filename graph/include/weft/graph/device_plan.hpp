// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What each device runs of one pass of a graph, grouped into segments: the
// device nodes (GPU nodes, tensor operations on a device) of one device
// that no host node and no other device's node separates. A segment is
// what one launch per device covers (docs/device_plans.md); the plan is
// plain data, built from the graph alone, the same with or without a GPU.
//
//   weft::DevicePlan plan = graph.device_plan();
//   plan.counts(0).launches;  // segments device 0 runs a pass
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weft {

struct DeviceSegment {
  int device = -1;  // the weft device (logical, or a host virtual device)
  // Host nodes on the longest path from a root to the segment: segments of
  // one phase are separated by no host node.
  int phase = 0;
  // Changes of device on the longest path within the phase: a node that
  // waits for another device's node goes to a later round than it.
  int round = 0;
  // The node whose condition's choice it runs in (the target of a weak
  // edge), -1 for a segment every pass runs. A choice's segment runs only
  // when chosen: it has a callback and is in no device's `previous` chain.
  std::int32_t choice = -1;
  std::vector<std::int32_t> nodes;  // in an order that keeps every edge among them
  std::vector<int> waits_for;       // segments of other devices it waits for (their events), ascending
  // The device's segment before it in launch order (-1: none): a device
  // runs the segments every pass runs one after another, in launch order,
  // on one stream.
  int previous = -1;
  bool records = false;  // another device's segment waits for it (an event at its end)
  // A host callback after it: it is the last segment of its device a host
  // node waits for, or its device's last (the pass's end waits for it).
  bool callback = false;
};

struct DevicePlanCounts {
  int launches = 0;   // segments: one launch each
  int records = 0;    // events recorded for other devices
  int waits = 0;      // waits for other devices' events
  int callbacks = 0;  // host callbacks (a host node or the pass's end waits)
  int nodes = 0;      // device nodes the segments hold
};

struct DevicePlan {
  // In launch order: every segment after the segments it waits for, and
  // after every host node and segment before it in the graph.
  std::vector<DeviceSegment> segments;
  // Per node of the graph: the index of its segment, -1 for a host node.
  std::vector<int> segment_of;

  // Per pass, for one device (all of them with -1).
  DevicePlanCounts counts(int device = -1) const;
  // The devices that have segments, ascending.
  std::vector<int> devices() const;
  // One line per segment:
  // "segment 5: device 0 phase 2 round 1: 8 nodes, waits for 3 4, callback".
  std::string describe() const;
};

}  // namespace weft

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime layer: Chase-Lev deques, hwloc topology, the work-stealing
// Executor with CPU- and GPU-priority workers, task groups, the static
// work-DAG (Crs, transpose_crs, WorkGraphPolicy, parallel_for), the dynamic
// task-DAG (TaskScheduler, Future), and Promise for completing futures from
// outside it.
#pragma once

#include <weft/memory/memory.hpp>
#include <weft/runtime/chase_lev_deque.hpp>
#include <weft/runtime/crs.hpp>
#include <weft/runtime/event_count.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/executor_config.hpp>
#include <weft/runtime/future.hpp>
#include <weft/runtime/job.hpp>
#include <weft/runtime/promise.hpp>
#include <weft/runtime/replacing_file.hpp>
#include <weft/runtime/task.hpp>
#include <weft/runtime/task_group.hpp>
#include <weft/runtime/task_scheduler.hpp>
#include <weft/runtime/topology.hpp>
#include <weft/runtime/trace.hpp>
#include <weft/runtime/utf8.hpp>
#include <weft/runtime/wait_scope.hpp>
#include <weft/runtime/work_graph_node_call.hpp>
#include <weft/runtime/work_graph_policy.hpp>
#include <weft/runtime/worker_stats.hpp>

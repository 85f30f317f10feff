// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// weft: a task-graph-first runtime for heterogeneous nodes.
//
//   #include <weft/weft.hpp>
//
//   weft::Executor executor;                    // CPU workers, pinned if asked
//   weft::Crs<int> dag = ...;                   // row i: the work items after i
//   weft::parallel_for(executor, weft::WorkGraphPolicy(dag),
//                      [&](int i) { /* runs after all its predecessors */ });
//
// This header gathers every layer: backends, memory, runtime, views, graph.
#pragma once

#include <weft/backends/backends.hpp>
#include <weft/graph/graph.hpp>
#include <weft/memory/memory.hpp>
#include <weft/runtime/runtime.hpp>
#include <weft/views/views.hpp>

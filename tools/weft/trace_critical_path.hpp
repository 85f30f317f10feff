// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// critical_path(trace): the heaviest chain of a trace's jobs by measured
// duration, along its flow events' edges when it has some, else in time
// (trace_critical_path.cpp says how). Part of weft trace summary.
#pragma once

#include "trace_summary.hpp"

namespace weft::tool {

CriticalPath critical_path(const Trace& trace);

}  // namespace weft::tool

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A future that outlives its TaskScheduler: dropping it afterwards would
// free its block through the scheduler, gone by then. With lifetimes
// checked (a debug build, or WEFT_CHECK_LIFETIMES=1) the scheduler's
// destructor aborts first, saying why (tests/runtime/CMakeLists.txt runs
// it and expects that message).
#include <cstdio>
#include <optional>

#include <weft/runtime/task_scheduler.hpp>

namespace {

struct Answer {
  using value_type = int;
  void operator()(weft::TaskMember&, int& out) { out = 42; }
};

}  // namespace

int main() {
  weft::Executor executor(weft::ExecutorConfig::cpu_only(1));
  weft::TaskScheduler::memory_pool pool(weft::HostSpace{}, 1 << 16);
  weft::Future<int> kept;
  {
    weft::TaskScheduler scheduler(executor, pool);
    kept = weft::host_spawn(weft::TaskSingle(scheduler), Answer{});
    weft::wait(scheduler);
    std::printf("the task answered %d; now the scheduler goes, the future stays\n", kept.get());
    std::fflush(stdout);
  }
  std::printf("the scheduler went and nothing noticed\n");
  return 0;
}

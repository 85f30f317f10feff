// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A rank that dies in the middle of a run: the others are waiting for its
// messages. mpiexec must end the job, non-zero, within a bounded time
// (tests/mpi/expect_job_failure.cmake), never hang.
#include <cstdio>
#include <cstdlib>

#include <weft/graph/graph.hpp>
#include <weft/mpi/session.hpp>

int main(int argc, char** argv) {
  weft::mpi::Session mpi(argc, argv);
  const int dying = mpi.size() - 1;
  weft::Executor executor(weft::ExecutorConfig::cpu_only(1));
  weft::Tensor<double, 1> a(weft::distributed(mpi.world()), {4}, 1, 64);
  weft::Tensor<double, 1> b(weft::distributed(mpi.world()), {4}, 1, 64);
  int passes = 0;
  weft::Graph g;
  g.then([&] {
    if (mpi.rank() == dying && ++passes == 3) std::_Exit(3);  // no MPI_Finalize, no message
  });
  g.then_split([](auto& in, auto& out) { *out = *in.offset(weft::dim_x, -1) + *in.offset(weft::dim_x, 1); },
               weft::concurrent_padded_access(a), b);
  executor.run_n(g, 1000).get();
  std::puts("rank_death: the run ended although a rank died");
  return 0;
}

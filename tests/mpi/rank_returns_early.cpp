// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A rank that returns early: rank 0 never runs a graph the others run, and
// goes on to end MPI. The others must fail after the session's pass
// timeout, naming what they waited for, and the job must then end, none
// of its ranks left waiting in MPI_Finalize. Prints one line per rank and
// exits 0 only when each rank saw what it should.
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <weft/graph/graph.hpp>
#include <weft/mpi/session.hpp>

int main(int argc, char** argv) {
  int status = 0;
  {
    weft::mpi::Session mpi(argc, argv);
    mpi.set_pass_timeout(std::chrono::seconds(2));
    weft::Executor executor(weft::ExecutorConfig::cpu_only(1));
    weft::Tensor<double, 1> a(weft::distributed(mpi.world()), {4}, 1, 64);
    weft::Tensor<double, 1> b(weft::distributed(mpi.world()), {4}, 1, 64);
    weft::Graph g;
    g.split([](auto& it) { *it = static_cast<double>(it.global_index(0)); }, a);
    g.then_split([](auto& in, auto& out) { *out = *in.offset(weft::dim_x, -1) + *in.offset(weft::dim_x, 1); },
                 weft::concurrent_padded_access(a), b);
    if (mpi.rank() == 0) {
      std::printf("rank 0: returns without running the graph\n");
    } else {
      try {
        executor.run(g).get();
        std::printf("rank %d: the run ended although rank 0 never ran it\n", mpi.rank());
        status = 1;
      } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        const bool named = what.find("waited 2 s for the other ranks of MPI_COMM_WORLD") != std::string::npos;
        std::printf("rank %d: %s\n", mpi.rank(), e.what());
        status = named ? 0 : 1;
      }
    }
  }  // graphs, then the session: MPI_Finalize
  std::fflush(stdout);
  return status;
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The MPI suites' main: one weft::mpi::Session around doctest, so that
// every rank runs the same test cases in the same order (each case is
// collective). Run through mpiexec (tests/mpi/CMakeLists.txt).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "mpi_test_support.hpp"

namespace weft::test {
mpi::Session* session = nullptr;
}

int main(int argc, char** argv) {
  weft::mpi::Session mpi(argc, argv);
  weft::test::session = &mpi;
  doctest::Context context(argc, argv);
  const int failed = context.run();
  // Every rank's verdict: a case failing on one rank fails the job.
  int any = failed != 0 ? 1 : 0;
  mpi.call([&] { MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); });
  return any;
}

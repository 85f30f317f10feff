// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The examples on the ranks of an MPI job (built when WEFT_EXAMPLES_MPI):
// MpiRanks offers ranks.hpp's calls over a weft::mpi::Session, and
// run_main_on_ranks is run_main (cli_support.hpp) for a program that
// mpirun started:
//
//   int main(int argc, char** argv) {
//   #if WEFT_EXAMPLES_MPI
//     if (weft::examples::launched_by_mpi())
//       return weft::examples::run_main_on_ranks("heat2d", argc, argv,
//                                                [&](const auto& ranks) { return run(argc, argv, ranks); });
//   #endif
//     return weft::examples::run_main("heat2d", [&] { return run(argc, argv, OneProcess{}); });
//   }
//
// A program started without mpirun never initialises MPI. Under mpirun,
// rank 0 prints what the program prints, an error is printed by the rank
// it happened on (rank 0 for the errors every rank has: a usage error, a
// failed graph run), and every rank exits with the worst exit code of all.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include <weft/mpi/gather.hpp>
#include <weft/mpi/session.hpp>

#include "cli_support.hpp"
#include "ranks.hpp"

namespace weft::examples {

// Whether an MPI launcher started this process (Open MPI's mpirun, Hydra's
// mpiexec, a PMIx launcher such as srun --mpi=pmix); read before MPI starts.
inline bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

class MpiRanks {
 public:
  explicit MpiRanks(const mpi::Session& session) : session_(&session) {}

  int rank() const noexcept { return session_->rank(); }
  int size() const noexcept { return session_->size(); }
  bool root() const noexcept { return rank() == 0; }
  std::shared_ptr<RankGroup> group() const { return session_->world(); }

  template <class T, std::size_t D>
  Tensor<T, D> gather(const Tensor<T, D>& tensor) const {
    return mpi::gather(*session_, tensor, 0);
  }

  template <class F>
  void together(F&& f) const {
    int code = kExitOk;
    std::exception_ptr error;
    try {
      std::forward<F>(f)();
    } catch (const UsageError&) {
      code = kExitUsage;
      error = std::current_exception();
    } catch (...) {
      code = kExitFailed;
      error = std::current_exception();
    }
    const std::vector<int> codes = every_rank(code);
    for (int r = 0; r < size(); ++r) {
      if (codes[static_cast<std::size_t>(r)] == kExitOk) continue;
      if (r == rank()) std::rethrow_exception(error);
      throw ReportedByRank(r, codes[static_cast<std::size_t>(r)]);
    }
  }

  // The highest of every rank's exit code. Collective.
  int worst(int code) const {
    int worst = code;
    session_->call([&] { MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); });
    return worst;
  }

 private:
  std::vector<int> every_rank(int value) const {
    std::vector<int> values(static_cast<std::size_t>(size()));
    session_->call([&] { MPI_Allgather(&value, 1, MPI_INT, values.data(), 1, MPI_INT, MPI_COMM_WORLD); });
    return values;
  }

  const mpi::Session* session_;
};

// run_main (cli_support.hpp) on every rank of an MPI job: starts a
// weft::mpi::Session, runs body(const MpiRanks&) and ends MPI after it.
// Errors on ranks other than 0 start with "program (rank r):".
template <class Body>
int run_main_on_ranks(const char* program, int& argc, char**& argv, Body&& body) noexcept {
  std::optional<mpi::Session> session;
  const int started = run_main(program, [&] {
    session.emplace(argc, argv);
    return kExitOk;
  });
  if (started != kExitOk) return started;
  const MpiRanks ranks(*session);
  const std::string name = ranks.root()
                               ? std::string(program)
                               : std::string(program) + " (rank " + std::to_string(ranks.rank()) + ")";
  int code = run_main(name.c_str(), [&] {
    try {
      return body(ranks);
    } catch (const ReportedByRank& e) {
      return e.exit_code();
    }
  });
  try {
    code = ranks.worst(code);
    session.reset();  // MPI_Finalize
  } catch (const std::exception& e) {
    detail::print_error(name.c_str(), "", e.what());
    code = kExitFailed;
  }
  return code;
}

}  // namespace weft::examples

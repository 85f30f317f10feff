// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// weft::mpi::Session: MPI for weft's distributed graphs (docs/distributed.md).
//
//   int main(int argc, char** argv) {
//     weft::mpi::Session mpi(argc, argv);                  // MPI_Init_thread, progress thread
//     weft::Tensor<double, 2> u(weft::distributed(mpi.world()), {1, 8}, 1, nx, ny);
//     weft::Graph g;                                       // the same graph on every rank
//     g.split(step, weft::concurrent_padded_access(u), v);  // halos cross ranks as messages
//     executor.run_n(g, 100).get();                        // throws on every rank if one fails
//     auto whole = weft::mpi::gather(mpi, u, 0);           // rank 0: every block
//   }
//
// One progress thread makes every MPI call weft needs: workers hand it
// messages and never block in MPI, and it completes the graph's message
// nodes as their requests finish (as CUDA callbacks complete GPU nodes). So
// MPI_THREAD_SERIALIZED suffices; the constructor asks for it and throws
// std::runtime_error, naming the level the library gives, if it cannot
// have it. Make MPI calls of your own through call(), which runs them on
// that thread. Destroy graphs, tensors and executors that use the session
// before the session (it ends MPI).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <weft/runtime/rank_group.hpp>

namespace weft::mpi {

namespace detail {
class Progress;
}

class Session {
 public:
  // Initialises MPI (unless the program already did, with at least
  // MPI_THREAD_SERIALIZED) and starts the progress thread.
  Session(int& argc, char**& argv);
  Session();  // without arguments
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  // Stops the progress thread; finalises MPI if this session initialised it.
  ~Session();

  // Every rank (MPI_COMM_WORLD), for weft::distributed().
  std::shared_ptr<RankGroup> world() const { return world_; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  // The rank among those on the same machine (which GPU to drive).
  int local_rank() const noexcept { return local_rank_; }
  // The thread level MPI gave, as its name ("MPI_THREAD_SERIALIZED").
  const std::string& thread_level() const noexcept { return thread_level_; }

  // How long a pass of a distributed graph waits on other ranks with
  // nothing arriving before it fails, naming the ranks it did not hear from
  // (a rank that runs fewer passes, stopped early, or hangs); the graph's
  // later runs then fail at once. Default: WEFT_MPI_PASS_TIMEOUT (seconds)
  // if set, else 300 s; 0 waits for ever. Throws std::invalid_argument for a
  // negative or non-finite limit. Takes effect from the next pass.
  void set_pass_timeout(std::chrono::duration<double> limit);
  std::chrono::duration<double> pass_timeout() const noexcept;

  // Runs f on the progress thread and waits: for MPI calls of your own.
  void call(const std::function<void()>& f) const;
  // Requests completed so far (every message, control messages included).
  std::size_t requests_completed() const;
  // The graphs' data messages (padding and partials; not the pass-status
  // control messages) this rank sent and received, and those not done yet.
  struct MessageCounts {
    std::uint64_t sent = 0, received = 0;
    std::uint64_t bytes_sent = 0, bytes_received = 0;
    std::uint64_t outstanding = 0;
  };
  MessageCounts message_counts() const;

 private:
  void start(int* argc, char*** argv);

  std::shared_ptr<detail::Progress> progress_;
  std::shared_ptr<RankGroup> world_;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  bool finalize_ = false;
  std::string thread_level_;
};

}  // namespace weft::mpi

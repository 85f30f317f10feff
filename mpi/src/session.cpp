// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/mpi/session.hpp>

#include <stdexcept>
#include <string>

#include <mpi.h>

#include "mpi_group.hpp"
#include "progress.hpp"

namespace weft::mpi {

namespace {

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "an unknown thread level";
  }
}

}  // namespace

Session::Session(int& argc, char**& argv) { start(&argc, &argv); }
Session::Session() { start(nullptr, nullptr); }

void Session::start(int* argc, char*** argv) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  int provided = MPI_THREAD_SINGLE;
  if (initialised) {
    MPI_Query_thread(&provided);
  } else {
    MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
    finalize_ = true;
  }
  thread_level_ = level_name(provided);
  if (provided < MPI_THREAD_SERIALIZED) {
    if (finalize_) MPI_Finalize();
    throw std::runtime_error(std::string("weft::mpi::Session: MPI gives ") + thread_level_ +
                             "; weft needs MPI_THREAD_SERIALIZED (its progress thread makes MPI calls "
                             "while the main thread runs); use an MPI library built with thread support");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_free(&local);
  // From here on only the progress thread calls MPI, until the destructor.
  progress_ = std::make_shared<detail::Progress>();
  world_ = std::make_shared<detail::MpiGroup>(progress_, MPI_COMM_WORLD, "MPI_COMM_WORLD", rank_, size_,
                                              local_rank_);
}

Session::~Session() {
  // Channels still open (graphs not destroyed yet) post their closing to a
  // stopped thread, which drops it.
  progress_->stop();
  if (finalize_) MPI_Finalize();
}

void Session::call(const std::function<void()>& f) const {
  progress_->call([&f] { f(); });
}

Session::MessageCounts Session::message_counts() const {
  return progress_->call([p = progress_.get()] {
    const detail::Progress::Counts& c = p->counts;
    return MessageCounts{c.sent, c.received, c.bytes_sent, c.bytes_received, c.outstanding};
  });
}

std::size_t Session::requests_completed() const {
  return progress_->call([p = progress_.get()] { return p->completed(); });
}

}  // namespace weft::mpi

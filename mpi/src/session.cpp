// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/mpi/session.hpp>

#include <cmath>
#include <cstdlib>
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
  if (const char* text = std::getenv("WEFT_MPI_PASS_TIMEOUT")) {
    char* end = nullptr;
    const double seconds = std::strtod(text, &end);
    if (end == text || *end != '\0' || !std::isfinite(seconds) || seconds < 0) {
      progress_->stop();
      if (finalize_) MPI_Finalize();
      throw std::invalid_argument(std::string("weft::mpi::Session: WEFT_MPI_PASS_TIMEOUT is \"") + text +
                                  "\"; give seconds, a number 0 or above (0: no limit)");
    }
    progress_->pass_timeout_s.store(seconds, std::memory_order_relaxed);
  }
}

void Session::set_pass_timeout(std::chrono::duration<double> limit) {
  if (!std::isfinite(limit.count()) || limit.count() < 0) {
    throw std::invalid_argument("weft::mpi::Session::set_pass_timeout: " + std::to_string(limit.count()) +
                                " s; give 0 or more seconds (0: no limit)");
  }
  progress_->pass_timeout_s.store(limit.count(), std::memory_order_relaxed);
}

std::chrono::duration<double> Session::pass_timeout() const noexcept {
  return std::chrono::duration<double>(progress_->pass_timeout_s.load(std::memory_order_relaxed));
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

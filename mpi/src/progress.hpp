// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The progress thread: the one thread that makes MPI calls once a Session
// has started (so MPI_THREAD_SERIALIZED suffices). Other threads post work
// to it; it starts requests, tests them and calls their completions.
// Internal to the mpi layer.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <mpi.h>

namespace weft::mpi::detail {

class Progress {
 public:
  Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress();

  // Runs f on the progress thread, soon, in the order posted. After stop()
  // it is dropped (and false returned).
  bool post(std::function<void()> f);
  // Runs f there and waits for its result (rethrowing its exception).
  template <class F>
  auto call(F f) -> decltype(f()) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto result = task.get_future();
    if (!post([&task] { task(); })) throw std::logic_error("weft::mpi: the session has ended");
    return result.get();
  }
  // Progress thread only: watches `request` and calls done(status) once it
  // completes. Returns a ticket for cancel().
  std::uint64_t watch(MPI_Request request, std::function<void(const MPI_Status&)> done);
  // Progress thread only: MPI_Cancel on the watched request `ticket`, if it
  // has not completed yet (a completed request's handle may already name a
  // new one, so handles are never cancelled directly).
  void cancel(std::uint64_t ticket);
  // Progress thread only: f runs on every turn of the loop until removed.
  void add_poller(const void* key, std::function<void()> f);
  void remove_poller(const void* key);
  // Ends the thread (requests still watched are abandoned). Idempotent.
  void stop();
  bool on_progress_thread() const noexcept { return std::this_thread::get_id() == thread_.get_id(); }

  // Turns of the loop and requests completed, for benchmarks and tests.
  std::size_t completed() const noexcept { return completed_; }
  // Data messages (Session::MessageCounts), progress thread only.
  struct Counts {
    std::uint64_t sent = 0, received = 0, bytes_sent = 0, bytes_received = 0, outstanding = 0;
  };
  Counts counts;
  // Session::set_pass_timeout (seconds; 0: none), read as each pass begins.
  std::atomic<double> pass_timeout_s{300.0};

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::function<void()>> posted_;
  bool stopping_ = false;
  // Progress thread only:
  std::vector<MPI_Request> requests_;
  std::vector<std::function<void(const MPI_Status&)>> dones_;
  std::vector<std::uint64_t> tickets_;
  std::uint64_t next_ticket_ = 0;
  // Shared, so a turn calls each without copying the callable.
  std::vector<std::pair<const void*, std::shared_ptr<std::function<void()>>>> pollers_;
  std::size_t completed_ = 0;
  std::thread thread_;
};

}  // namespace weft::mpi::detail

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "progress.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>

namespace weft::mpi::detail {

namespace {

// A completion that throws would leave ranks waiting for each other: stop
// the job instead, saying why.
template <class F, class... A>
void run_guarded(const F& f, const char* what, A&&... a) noexcept {
  try {
    f(std::forward<A>(a)...);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft::mpi: %s threw: %s\n", what, e.what());
    MPI_Abort(MPI_COMM_WORLD, 70);
  } catch (...) {
    std::fprintf(stderr, "weft::mpi: %s threw\n", what);
    MPI_Abort(MPI_COMM_WORLD, 70);
  }
}

}  // namespace

Progress::Progress() : thread_([this] { loop(); }) {}

Progress::~Progress() { stop(); }

bool Progress::post(std::function<void()> f) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return false;
    posted_.push_back(std::move(f));
  }
  wake_.notify_one();
  return true;
}

std::uint64_t Progress::watch(MPI_Request request, std::function<void(const MPI_Status&)> done) {
  requests_.push_back(request);
  dones_.push_back(std::move(done));
  tickets_.push_back(next_ticket_);
  return next_ticket_++;
}

void Progress::cancel(std::uint64_t ticket) {
  for (std::size_t i = 0; i < tickets_.size(); ++i) {
    if (tickets_[i] == ticket) {
      MPI_Cancel(&requests_[i]);  // it completes (cancelled or not) through done
      return;
    }
  }
}

void Progress::add_poller(const void* key, std::function<void()> f) {
  pollers_.emplace_back(key, std::make_shared<std::function<void()>>(std::move(f)));
}

void Progress::remove_poller(const void* key) {
  for (auto it = pollers_.begin(); it != pollers_.end(); ++it) {
    if (it->first == key) {
      pollers_.erase(it);
      return;
    }
  }
}

void Progress::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void Progress::loop() {
  std::vector<std::function<void()>> batch;
  std::vector<int> indices;
  std::vector<MPI_Status> statuses;
  // Completed requests' callbacks, taken out before they run (they may
  // watch more); kept across turns so that a warm loop allocates nothing.
  std::vector<std::pair<std::function<void(const MPI_Status&)>, MPI_Status>> finished;
  int idle = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // Nothing in flight: sleep until something is posted.
      wake_.wait(lock,
                 [&] { return stopping_ || !posted_.empty() || !requests_.empty() || !pollers_.empty(); });
      if (stopping_ && posted_.empty()) return;
      batch.swap(posted_);
    }
    bool progressed = !batch.empty();
    for (auto& f : batch) run_guarded(f, "a posted call");
    batch.clear();
    for (std::size_t k = 0; k < pollers_.size(); ++k) {
      const std::shared_ptr<std::function<void()>> f = pollers_[k].second;  // it may remove itself
      run_guarded(*f, "a poller");
    }
    if (!requests_.empty()) {
      const int n = static_cast<int>(requests_.size());
      indices.resize(requests_.size());
      statuses.resize(requests_.size());
      int done = 0;
      MPI_Testsome(n, requests_.data(), &done, indices.data(), statuses.data());
      if (done != MPI_UNDEFINED && done > 0) {
        progressed = true;
        completed_ += static_cast<std::size_t>(done);
        // Take the completed ones out first: their completions may watch more.
        finished.clear();
        for (int k = 0; k < done; ++k) {
          const auto i = static_cast<std::size_t>(indices[static_cast<std::size_t>(k)]);
          finished.emplace_back(std::move(dones_[i]), statuses[static_cast<std::size_t>(k)]);
        }
        std::size_t kept = 0;
        for (std::size_t i = 0; i < requests_.size(); ++i) {
          if (requests_[i] == MPI_REQUEST_NULL) continue;
          requests_[kept] = requests_[i];
          dones_[kept] = std::move(dones_[i]);
          tickets_[kept] = tickets_[i];
          ++kept;
        }
        requests_.resize(kept);
        dones_.resize(kept);
        tickets_.resize(kept);
        for (auto& [f, status] : finished) run_guarded(f, "a completion", status);
        finished.clear();
      }
    }
    if (progressed) {
      idle = 0;
    } else if (++idle > 64) {
      // Waiting on the network: give the workers the core, briefly at first.
      if (idle < 2048) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }
  }
}

}  // namespace weft::mpi::detail

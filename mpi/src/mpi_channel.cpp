// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A graph's RankChannel over MPI (docs/distributed.md, "Passes"):
//
// Messages: non-blocking sends and receives on the channel's own
// communicator; data tags are 1 + epoch-slot * tags + tag, where the epoch
// advances after every failed pass, so a message a failed pass left behind
// can never match one of a later pass. Tag 0 carries control messages.
//
// Passes: each rank sends every other rank exactly one status per pass
// (ok, failed with its message, cancelled, or failed because another rank
// did), early when it fails or is cancelled, else when its pass ends. A
// status also carries the pass's place (run and pass numbers) and whether
// the rank goes on to another pass, so ranks whose counts or predicates
// differ all fail together instead of waiting for each other. A rank's
// pass is over once its own has ended and it holds every other rank's
// status for it. A failure heard of cancels this rank's pending receives
// and gives up its pending sends, so no rank waits for a message that will
// not come. A pass that waits on other ranks longer than the session's pass
// timeout with nothing arriving fails, naming the ranks not heard from, and
// leaves the channel broken: its later passes fail at once.
#include "mpi_group.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <future>
#include <list>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include <weft/runtime/task.hpp>

namespace weft::mpi::detail {

namespace {

constexpr int kControlTag = 0;
constexpr std::size_t kControlBytes = 4096;

enum class Status : std::uint8_t { Ok = 0, Failed = 1, Cancelled = 2, Follows = 3 };

// This rank's operations given up because another rank failed: not an
// error of its own.
struct PeerFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Control {
  std::uint64_t pass = 0;  // the channel's passes, from 1
  Status status = Status::Ok;
  RankChannel::PassPlace place;
  bool another = false;  // the rank goes on to another pass of the run (Ok only)
  std::string message;

  static constexpr std::size_t kHeader = 26;
  std::vector<char> encode() const {
    std::vector<char> out(kHeader + std::min(message.size(), kControlBytes - kHeader));
    std::memcpy(out.data(), &pass, 8);
    out[8] = static_cast<char>(status);
    std::memcpy(out.data() + 9, &place.run, 8);
    std::memcpy(out.data() + 17, &place.pass, 8);
    out[25] = another ? 1 : 0;
    std::memcpy(out.data() + kHeader, message.data(), out.size() - kHeader);
    return out;
  }
  static Control decode(const char* data, int bytes) {
    Control c;
    std::memcpy(&c.pass, data, 8);
    c.status = static_cast<Status>(data[8]);
    std::memcpy(&c.place.run, data + 9, 8);
    std::memcpy(&c.place.pass, data + 17, 8);
    c.another = data[25] != 0;
    c.message.assign(data + kHeader, static_cast<std::size_t>(bytes) - kHeader);
    return c;
  }
  // What the rank did, for a disagreement: "pass 3 of run 1, then stops".
  std::string describe_place() const {
    return "pass " + std::to_string(place.pass) + " of run " + std::to_string(place.run) +
           (another ? ", then goes on" : ", then stops");
  }
};

// A timeout as people write it: "2", "0.5", "300".
std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

struct PassStatuses {
  int heard = 0;                    // statuses received from other ranks
  std::map<int, Control> failures;  // by rank: the ones that are not Ok
  std::map<int, Control> oks;       // by rank: the Ok ones (their places)
};

// When the ranks' Ok statuses differ in place or in going on, what each
// did, grouped ("ranks 0, 2: pass 3 of run 1, then stops; rank 1: ...");
// empty when they agree. Every rank holds the same statuses, so every rank
// words it alike.
std::string disagreement(const std::map<int, Control>& all) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (const auto& [r, c] : all) {
    const std::string what = c.describe_place();
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == what; });
    if (it == groups.end()) {
      groups.push_back({what, {r}});
    } else {
      it->second.push_back(r);
    }
  }
  if (groups.size() < 2) return {};
  std::string out;
  for (const auto& [what, ranks] : groups) {
    if (!out.empty()) out += "; ";
    out += ranks.size() == 1 ? "rank " : "ranks ";
    for (std::size_t k = 0; k < ranks.size(); ++k) out += (k == 0 ? "" : ", ") + std::to_string(ranks[k]);
    out += ": " + what;
  }
  return out;
}

// Everything the progress thread touches, shared with the callbacks it
// runs, so that the channel handle may go away first.
struct Core : std::enable_shared_from_this<Core> {
  std::shared_ptr<Progress> progress;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1, tags = 1, epoch_slots = 1;
  std::uint64_t epoch = 0;
  std::chrono::duration<double> timeout{0.0};  // 0: wait for ever
  std::string broken;                          // set by a timeout: every later pass fails with it

  // The pass (progress thread only).
  std::uint64_t pass = 0;
  RankChannel::PassPlace place;
  bool another = false;
  bool active = false;
  int receives_waiting = 0;  // receives posted to MPI, not completed yet
  std::chrono::steady_clock::time_point last_heard;
  std::string timed_out;  // this pass gave up waiting: why
  bool status_sent = false;
  bool failure_known = false;
  std::string failure_what;  // for the operations given up
  const std::atomic<bool>* cancel = nullptr;
  bool local_ended = false;
  std::exception_ptr local_error;
  MessageDone end_done = nullptr;
  void* end_context = nullptr;
  std::map<std::uint64_t, PassStatuses> statuses;
  struct Pending {
    std::uint64_t id;
    std::uint64_t ticket;  // Progress::cancel
    MessageDone done;
    void* context;
    bool receive;
  };
  std::list<Pending> pending;  // this pass's operations, to give up on failure
  std::uint64_t next_id = 0;

  // Takes operation `id` out of the pending ones (false: given up already).
  bool take(std::uint64_t id, Pending& out) {
    for (auto it = pending.begin(); it != pending.end(); ++it) {
      if (it->id == id) {
        out = *it;
        pending.erase(it);
        return true;
      }
    }
    return false;
  }

  // Control messages in.
  std::vector<char> control_in = std::vector<char>(kControlBytes);
  std::uint64_t control_ticket = 0;
  bool closed = false;

  // Send buffers to lend (any thread).
  std::mutex spare_mutex;
  std::map<std::size_t, std::vector<std::vector<std::byte>>> spare;

  int data_tag(int tag) const {
    return 1 + static_cast<int>(epoch % static_cast<std::uint64_t>(epoch_slots)) * tags + tag;
  }

  void give_back(std::vector<std::byte> buffer) {
    std::lock_guard<std::mutex> lock(spare_mutex);
    auto& list = spare[buffer.size()];
    if (list.size() < 64) list.push_back(std::move(buffer));
  }

  void post_control_receive() {
    MPI_Request request;
    MPI_Irecv(control_in.data(), static_cast<int>(kControlBytes), MPI_CHAR, MPI_ANY_SOURCE, kControlTag, comm,
              &request);
    control_ticket = progress->watch(
        request, [self = shared_from_this()](const MPI_Status& s) { self->control_arrived(s); });
  }

  void control_arrived(const MPI_Status& s) {
    int cancelled = 0;
    MPI_Test_cancelled(&s, &cancelled);
    if (cancelled || closed) return;
    int bytes = 0;
    MPI_Get_count(&s, MPI_CHAR, &bytes);
    Control c = Control::decode(control_in.data(), bytes);
    const int from = s.MPI_SOURCE;
    post_control_receive();
    last_heard = std::chrono::steady_clock::now();
    // A status for a pass already over: one that this rank gave up waiting for.
    if (c.pass < pass || (c.pass == pass && !active)) return;
    PassStatuses& p = statuses[c.pass];
    ++p.heard;
    if (c.status == Status::Ok) {
      p.oks.emplace(from, std::move(c));
    } else {
      const std::string what = "rank " + std::to_string(from) + ": " + c.message;
      const bool now = active && c.pass == pass;
      p.failures.emplace(from, std::move(c));
      if (now) hear_failure(what);
    }
    try_finish();
  }

  void send_status(Status status, const std::string& message) {
    if (status_sent) return;
    status_sent = true;
    Control c{pass, status, place, another && status == Status::Ok, message};
    auto bytes = std::make_shared<std::vector<char>>(c.encode());
    for (int r = 0; r < size; ++r) {
      if (r == rank) continue;
      MPI_Request request;
      MPI_Isend(bytes->data(), static_cast<int>(bytes->size()), MPI_CHAR, r, kControlTag, comm, &request);
      progress->watch(request, [bytes](const MPI_Status&) {});
    }
  }

  // A failure of this pass is known here: stop waiting for messages.
  void hear_failure(const std::string& what) {
    if (failure_known) return;
    failure_known = true;
    failure_what = what;
    for (auto it = pending.begin(); it != pending.end();) {
      if (it->receive) {
        progress->cancel(it->ticket);  // its completion reports it
        ++it;
      } else {
        // A send the peer may never receive: complete it now; the request
        // runs on unwatched by this pass (its buffer stays with it).
        it->done(it->context, std::make_exception_ptr(PeerFailure("gave up sending: " + what)));
        it = pending.erase(it);
      }
    }
  }

  void begin(const std::atomic<bool>* cancel_flag, RankChannel::PassPlace at) {
    ++pass;
    place = at;
    another = false;
    active = true;
    status_sent = false;
    failure_known = false;
    local_ended = false;
    local_error = nullptr;
    timed_out.clear();
    timeout = std::chrono::duration<double>(progress->pass_timeout_s.load(std::memory_order_relaxed));
    last_heard = std::chrono::steady_clock::now();
    cancel = cancel_flag;
    if (!broken.empty()) {
      hear_failure(broken);
      return;
    }
    const auto it = statuses.find(pass);
    if (it != statuses.end() && !it->second.failures.empty()) {
      const auto& [from, c] = *it->second.failures.begin();
      hear_failure("rank " + std::to_string(from) + ": " + c.message);
    }
    if (cancel != nullptr || timeout.count() > 0) {
      progress->add_poller(this, [self = shared_from_this()] { self->poll(); });
    }
  }

  // Each turn of the progress loop during a pass: cancellation, and the wait on other ranks.
  void poll() {
    if (!active) return;
    if (!local_ended && cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      send_status(Status::Cancelled, "cancelled");
      hear_failure("rank " + std::to_string(rank) + " cancelled the run");
    }
    const bool waiting = receives_waiting > 0 || local_ended;
    if (!waiting || timeout.count() <= 0 || !timed_out.empty()) return;
    if (std::chrono::steady_clock::now() - last_heard < timeout) return;
    give_up_waiting();
  }

  // The pass waited `timeout` with nothing arriving: fail it (telling the
  // ranks that are alive), and break the channel, since a rank that never
  // answered may still send this pass's messages.
  void give_up_waiting() {
    const PassStatuses& p = statuses[pass];
    std::string silent;
    int count = 0;
    for (int r = 0; r < size; ++r) {
      if (r == rank || p.oks.count(r) != 0 || p.failures.count(r) != 0) continue;
      silent += (count++ == 0 ? "" : ", ") + std::to_string(r);
    }
    timed_out =
        "rank " + std::to_string(rank) + " waited " + seconds_text(timeout.count()) + " s in pass " +
        std::to_string(place.pass) + " of run " + std::to_string(place.run) + " and heard nothing from " +
        (count == 1 ? "rank " : "ranks ") +
        (count == 0 ? std::string("the ranks it receives from") : silent) +
        " (a rank that ran fewer passes or runs, stopped early, or hangs); the limit is the session's "
        "pass timeout (WEFT_MPI_PASS_TIMEOUT, Session::set_pass_timeout)";
    broken = "weft::mpi: an earlier pass of this graph timed out (" + timed_out +
             "), so its messages cannot be trusted; build the graph again";
    send_status(Status::Failed, timed_out);
    hear_failure(timed_out);
    try_finish();
  }

  void fail(const std::string& what) {
    if (!active || local_ended) return;
    send_status(Status::Failed, what);
    hear_failure("rank " + std::to_string(rank) + ": " + what);
  }

  void end(std::exception_ptr error, bool goes_on, MessageDone done, void* context) {
    local_ended = true;
    another = goes_on;
    local_error = std::move(error);
    end_done = done;
    end_context = context;
    Status status = Status::Ok;
    std::string message;
    if (local_error) {
      try {
        std::rethrow_exception(local_error);
      } catch (const PeerFailure& e) {
        status = Status::Follows;
        message = e.what();
      } catch (const Cancelled& e) {
        status = Status::Cancelled;
        message = e.what();
      } catch (const std::exception& e) {
        status = Status::Failed;
        message = e.what();
      } catch (...) {
        status = Status::Failed;
        message = "an exception that is not a std::exception";
      }
    }
    send_status(status, message);
    try_finish();
  }

  void try_finish() {
    if (!active || !local_ended) return;
    PassStatuses& p = statuses[pass];
    if (p.heard < size - 1 && timed_out.empty() && broken.empty()) return;
    std::exception_ptr error;
    bool own = false;
    if (local_error) {
      try {
        std::rethrow_exception(local_error);
      } catch (const PeerFailure&) {
      } catch (...) {
        own = true;
      }
    }
    if (!timed_out.empty()) {
      error = std::make_exception_ptr(std::runtime_error("weft::mpi: " + timed_out));
    } else if (!broken.empty()) {
      error = std::make_exception_ptr(std::runtime_error(broken));
    } else if (own) {
      error = local_error;
    } else {
      // The first original failure by rank; one that only followed another's last.
      const Control* chosen = nullptr;
      int chosen_rank = -1;
      for (const auto& [r, c] : p.failures) {
        if (c.status == Status::Follows) continue;
        chosen = &c;
        chosen_rank = r;
        break;
      }
      if (chosen != nullptr && chosen->status == Status::Cancelled) {
        error = std::make_exception_ptr(
            Cancelled("the graph run was cancelled on rank " + std::to_string(chosen_rank)));
      } else if (chosen != nullptr) {
        error = std::make_exception_ptr(
            std::runtime_error("rank " + std::to_string(chosen_rank) + ": " + chosen->message));
      } else if (local_error) {
        error = local_error;
      } else if (!p.failures.empty()) {
        error = std::make_exception_ptr(std::runtime_error(p.failures.begin()->second.message));
      } else {
        // Every rank's pass succeeded: they must also be at the same place and agree on what comes next.
        std::map<int, Control> all = p.oks;
        all[rank] = Control{pass, Status::Ok, place, another, {}};
        const std::string differ = disagreement(all);
        if (!differ.empty()) {
          error = std::make_exception_ptr(std::logic_error(
              "weft::mpi: the ranks disagree on the graph's passes: " + differ +
              "; every rank must run the same runs, each for the same passes (run_n counts, run_until "
              "and conditional() predicates must agree)"));
        }
      }
    }
    statuses.erase(pass);
    if (error) ++epoch;  // every rank saw the same statuses: all move on together
    active = false;
    progress->remove_poller(this);
    pending.clear();
    const MessageDone done = end_done;
    void* context = end_context;
    done(context, error);
  }

  void send(int to, int tag, std::vector<std::byte> data, MessageDone done, void* context) {
    if (failure_known) {
      give_back(std::move(data));
      done(context, std::make_exception_ptr(PeerFailure("did not send: " + failure_what)));
      return;
    }
    auto buffer = std::make_shared<std::vector<std::byte>>(std::move(data));
    MPI_Request request;
    MPI_Isend(buffer->data(), static_cast<int>(buffer->size()), MPI_BYTE, to, data_tag(tag), comm, &request);
    Progress::Counts& counts = progress->counts;
    ++counts.sent;
    counts.bytes_sent += buffer->size();
    ++counts.outstanding;
    const std::uint64_t id = next_id++;
    pending.push_back(Pending{id, 0, done, context, false});
    pending.back().ticket =
        progress->watch(request, [self = shared_from_this(), buffer, id](const MPI_Status&) {
          self->last_heard = std::chrono::steady_clock::now();
          self->give_back(std::move(*buffer));
          --self->progress->counts.outstanding;
          Pending op;
          if (self->take(id, op)) op.done(op.context, nullptr);  // else given up already
        });
  }

  void receive(int from, int tag, void* data, std::size_t bytes, MessageDone done, void* context) {
    if (failure_known) {
      done(context, std::make_exception_ptr(PeerFailure("did not receive: " + failure_what)));
      return;
    }
    MPI_Request request;
    MPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, from, data_tag(tag), comm, &request);
    ++progress->counts.outstanding;
    ++receives_waiting;
    const std::uint64_t id = next_id++;
    pending.push_back(Pending{id, 0, done, context, true});
    pending.back().ticket =
        progress->watch(request, [self = shared_from_this(), id, bytes, from, tag](const MPI_Status& s) {
          self->received(id, s, bytes, from, tag);
        });
  }

  void received(std::uint64_t id, const MPI_Status& s, std::size_t bytes, int from, int tag) {
    Progress::Counts& counts = progress->counts;
    --counts.outstanding;
    --receives_waiting;
    last_heard = std::chrono::steady_clock::now();
    int cancelled = 0;
    MPI_Test_cancelled(&s, &cancelled);
    int got = 0;
    if (!cancelled) {
      MPI_Get_count(&s, MPI_BYTE, &got);
      ++counts.received;
      counts.bytes_received += static_cast<std::uint64_t>(got);
    }
    Pending op;
    if (!take(id, op)) return;
    if (cancelled) {
      op.done(op.context, std::make_exception_ptr(PeerFailure("did not receive: " + failure_what)));
    } else if (static_cast<std::size_t>(got) != bytes) {
      op.done(op.context,
              std::make_exception_ptr(std::runtime_error(
                  "weft::mpi: message " + std::to_string(tag) + " from rank " + std::to_string(from) +
                  " has " + std::to_string(got) + " bytes, expected " + std::to_string(bytes))));
    } else {
      op.done(op.context, nullptr);
    }
  }

  void close() {
    closed = true;
    progress->remove_poller(this);
    // The control receive is still posted: cancel it (its completion drops
    // the last reference), and free the communicator, which MPI does once
    // its last operation completed.
    progress->cancel(control_ticket);
    MPI_Comm_free(&comm);
  }
};

class MpiChannel final : public RankChannel {
 public:
  explicit MpiChannel(std::shared_ptr<Core> core) : core_(std::move(core)) {}
  ~MpiChannel() override {
    // Runs after the progress thread ended (the session is gone): nothing to free.
    core_->progress->post([core = core_] { core->close(); });
  }

  std::vector<std::byte> lend(std::size_t bytes) override {
    {
      std::lock_guard<std::mutex> lock(core_->spare_mutex);
      auto it = core_->spare.find(bytes);
      if (it != core_->spare.end() && !it->second.empty()) {
        std::vector<std::byte> buffer = std::move(it->second.back());
        it->second.pop_back();
        return buffer;
      }
    }
    return std::vector<std::byte>(bytes);
  }
  void send(int to, int tag, std::vector<std::byte> data, MessageDone done, void* context) override {
    check_tag(tag);
    post([core = core_, to, tag, data = std::move(data), done, context]() mutable {
      core->send(to, tag, std::move(data), done, context);
    });
  }
  void receive(int from, int tag, void* data, std::size_t bytes, MessageDone done, void* context) override {
    check_tag(tag);
    post([core = core_, from, tag, data, bytes, done, context] {
      core->receive(from, tag, data, bytes, done, context);
    });
  }
  void begin_pass(const std::atomic<bool>* cancel, PassPlace place) override {
    post([core = core_, cancel, place] { core->begin(cancel, place); });
  }
  void fail_pass(const std::string& what) noexcept override {
    try {
      post([core = core_, what] { core->fail(what); });
    } catch (...) {
      // Out of memory: the status at the pass's end still tells the others.
    }
  }
  void end_pass(std::exception_ptr local_error, bool another, MessageDone done, void* context) override {
    post([core = core_, local_error, another, done, context] {
      core->end(local_error, another, done, context);
    });
  }
  std::vector<std::string> all_gather(const std::string& mine) override;

 private:
  void check_tag(int tag) const {
    if (tag < 0 || tag >= core_->tags) {
      throw std::out_of_range("weft::mpi: message tag " + std::to_string(tag) + " outside [0, " +
                              std::to_string(core_->tags) + ")");
    }
  }
  void post(std::function<void()> f) {
    if (!core_->progress->post(std::move(f)))
      throw std::logic_error("weft::mpi: the session has ended; graphs over its ranks cannot run");
  }
  std::shared_ptr<Core> core_;
};

std::vector<std::string> MpiChannel::all_gather(const std::string& mine) {
  // Non-blocking collectives on the progress thread, so that other graphs'
  // messages keep moving meanwhile; this thread waits for the result.
  struct Gather {
    std::shared_ptr<Core> core;
    int length = 0;
    std::string mine;
    std::vector<int> lengths, offsets;
    std::vector<char> all;
    std::promise<std::vector<std::string>> result;
  };
  auto g = std::make_shared<Gather>();
  g->core = core_;
  g->mine = mine;
  g->length = static_cast<int>(mine.size());
  g->lengths.resize(static_cast<std::size_t>(core_->size));
  auto answer = g->result.get_future();
  post([g] {
    MPI_Request request;
    MPI_Iallgather(&g->length, 1, MPI_INT, g->lengths.data(), 1, MPI_INT, g->core->comm, &request);
    g->core->progress->watch(request, [g](const MPI_Status&) {
      g->offsets.assign(g->lengths.size(), 0);
      int total = 0;
      for (std::size_t r = 0; r < g->lengths.size(); ++r) {
        g->offsets[r] = total;
        total += g->lengths[r];
      }
      g->all.resize(static_cast<std::size_t>(total) + 1);
      MPI_Request second;
      MPI_Iallgatherv(g->mine.data(), g->length, MPI_CHAR, g->all.data(), g->lengths.data(),
                      g->offsets.data(), MPI_CHAR, g->core->comm, &second);
      g->core->progress->watch(second, [g](const MPI_Status&) {
        std::vector<std::string> out;
        for (std::size_t r = 0; r < g->lengths.size(); ++r)
          out.emplace_back(g->all.data() + g->offsets[r], static_cast<std::size_t>(g->lengths[r]));
        g->result.set_value(std::move(out));
      });
    });
  });
  return answer.get();
}

}  // namespace

std::unique_ptr<RankChannel> MpiGroup::open_channel(int tags) {
  auto core = std::make_shared<Core>();
  core->progress = progress_;
  core->rank = rank_;
  core->size = size_;
  core->tags = tags < 1 ? 1 : tags;
  struct Dup {
    int* tag_ub = nullptr;
    int found = 0;
    std::promise<void> done;
  };
  auto dup = std::make_shared<Dup>();
  auto done = dup->done.get_future();
  if (!progress_->post([core, dup, comm = comm_] {
        MPI_Comm_get_attr(comm, MPI_TAG_UB, &dup->tag_ub, &dup->found);
        MPI_Request request;
        MPI_Comm_idup(comm, &core->comm, &request);
        core->progress->watch(request, [dup, core](const MPI_Status&) { dup->done.set_value(); });
      })) {
    throw std::logic_error("weft::mpi: the session has ended; graphs over its ranks cannot run");
  }
  // Every rank opens the channel: one that never runs the graph leaves the
  // others here. The duplicate stays posted (MPI cannot take it back).
  const double limit = progress_->pass_timeout_s.load(std::memory_order_relaxed);
  if (limit > 0 && done.wait_for(std::chrono::duration<double>(limit)) != std::future_status::ready) {
    throw std::runtime_error(
        "weft::mpi: rank " + std::to_string(rank_) + " waited " + seconds_text(limit) +
        " s for the other ranks of " + describe() +
        " to begin the graph's first run (a rank that runs fewer graphs, stopped early, or "
        "hangs); the limit is the session's pass timeout (WEFT_MPI_PASS_TIMEOUT, "
        "Session::set_pass_timeout)");
  }
  done.get();
  const long long upper = dup->found && dup->tag_ub != nullptr ? *dup->tag_ub : 32767;
  const long long slots = (upper - 1) / core->tags;
  if (slots < 1) {
    throw std::length_error("weft::mpi: the graph needs " + std::to_string(core->tags) +
                            " message tags, more than MPI_TAG_UB (" + std::to_string(upper) + ") allows");
  }
  core->epoch_slots = static_cast<int>(std::min<long long>(slots, 1 << 20));
  progress_->post([core] { core->post_control_receive(); });
  return std::make_unique<MpiChannel>(core);
}

}  // namespace weft::mpi::detail

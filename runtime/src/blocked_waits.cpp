// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/runtime/detail/blocked_waits.hpp>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>

#include <weft/runtime/detail/task_header.hpp>
#include <weft/runtime/wait_scope.hpp>

namespace weft::detail {

namespace {

// Every registered wait, under one lock: registration and the cycle check
// are one step, so of two waits that close a cycle together the second
// sees the first.
struct Registry {
  std::mutex mutex;
  std::vector<const BlockedWait*> waits;
};

Registry& registry() {
  // Never destroyed: a thread may still wait while static destructors run.
  static Registry* const r = new Registry;
  return *r;
}

bool holds(const std::vector<const WaitScope*>& scopes, const WaitScope* s) {
  return std::find(scopes.begin(), scopes.end(), s) != scopes.end();
}

}  // namespace

BlockedWait::BlockedWait(const WaitScope& awaited, const TaskHeader& task)
    : awaited_(&awaited),
      done_{[](const void* t) noexcept { return static_cast<const TaskHeader*>(t)->is_complete(); }, &task} {
  register_or_throw(false);
}

BlockedWait::BlockedWait(const WaitScope& awaited, Done done) : awaited_(&awaited), done_(done) {
  register_or_throw(true);
}

void BlockedWait::register_or_throw(bool for_group) {
  WaitScope::for_each_entered([this](const WaitScope* s) { inside_.push_back(s); });
  if (inside_.empty()) return;  // nothing can wait for this thread's work
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  // Follow the waits from the awaited scope: whose work is blocked in it,
  // and what that work waits for, until one reaches this thread's scopes.
  // A wait whose work is done is about to return and leads nowhere; one
  // that is not cannot be done before the work blocked in it returns.
  std::vector<const WaitScope*> reached{awaited_};
  std::vector<bool> followed(r.waits.size(), false);
  for (std::size_t i = 0; i < reached.size(); ++i) {
    if (holds(inside_, reached[i])) {
      const std::string running = reached[i]->description(for_group ? "other work" : "a graph");
      if (for_group) {
        throw std::logic_error("TaskGroup::wait: a wait cycle across threads: this thread runs " + running +
                               " and waits for " + awaited_->description("a task group") +
                               ", which waits, through waits blocked on other threads, for " + running +
                               ", so none of them could ever return; break the cycle, or wait for the "
                               "group outside the work it waits for");
      }
      throw std::logic_error("Future::wait: a wait cycle across threads: this thread runs a node of " +
                             running + " and waits for a run of " + awaited_->description("another graph") +
                             ", which waits, through waits blocked on other threads, for a run of " +
                             running +
                             ", so none of them could ever return; break the cycle, or wait for the runs "
                             "outside the graphs");
    }
    for (std::size_t k = 0; k < r.waits.size(); ++k) {
      const BlockedWait& w = *r.waits[k];
      if (followed[k] || w.done_.check(w.done_.subject) || !holds(w.inside_, reached[i])) continue;
      followed[k] = true;
      reached.push_back(w.awaited_);
    }
  }
  r.waits.push_back(this);
  registered_ = true;
}

BlockedWait::~BlockedWait() {
  if (!registered_) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.waits.erase(std::find(r.waits.begin(), r.waits.end(), this));
}

}  // namespace weft::detail

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The timeline thread of device_timeline.hpp: a queue that CUDA callbacks
// post to (linked through the spans, so posting never allocates) and one
// thread that delivers what they post, in order.
#include "device_timeline.hpp"

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>

namespace weft::detail {
namespace {

class Timeline {
 public:
  Timeline() : thread_([this] { loop(); }) {}

  void post(DeviceSpan& span) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      span.next = nullptr;
      (tail_ != nullptr ? tail_->next : head_) = &span;
      tail_ = &span;
      ++posted_;
    }
    wake_.notify_one();
  }

  void drain() noexcept {
    if (std::this_thread::get_id() == thread_.get_id()) return;
    std::unique_lock<std::mutex> lock(mutex_);
    const std::uint64_t target = posted_;
    drained_.wait(lock, [&] { return delivered_ >= target; });
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return head_ != nullptr; });
      DeviceSpan* span = head_;
      head_ = span->next;
      if (head_ == nullptr) tail_ = nullptr;
      lock.unlock();
      deliver(*span);
      lock.lock();
      ++delivered_;
      drained_.notify_all();
    }
  }

  static void deliver(DeviceSpan& span) noexcept {
    const int status = span.status;
    // The span lets go of the list before the node may complete (and end
    // its run), so a detached observer goes with its last run.
    if (const std::shared_ptr<const ObserverList> observers = std::move(span.observers); status == 0) {
      try {
        DeviceSpanEvent e = span.event;
        e.begin_ns = stream_ops::event_time_ns(span.began, e.device);
        e.end_ns = stream_ops::event_time_ns(span.ended, e.device);
        if (e.end_ns < e.begin_ns) e.end_ns = e.begin_ns;  // each is placed within ~1 us
        observers->device_span(e);
      } catch (const std::exception&) {
        // The device failed since the work was done: no span; the error
        // shows in the next call that uses it.
      }
    }
    if (!span.completes) return;
    int expected = DeviceSpan::kCalling;
    // acq_rel: publishes status to the call, or sees how the call ended.
    if (span.call.compare_exchange_strong(expected, DeviceSpan::kArrived, std::memory_order_acq_rel)) return;
    if (expected == DeviceSpan::kReturned) span.complete(span.node, status);
    // kThrew: the call failed, and the engine completed the node with its error.
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  DeviceSpan* head_ = nullptr;
  DeviceSpan* tail_ = nullptr;
  std::uint64_t posted_ = 0;
  std::uint64_t delivered_ = 0;
  std::thread thread_;  // last: starts once the rest is ready
};

// Made by the first observed GPU node and never destroyed: a thread
// blocked on it at exit is harmless, and CUDA callbacks may still post
// while the process tears down. acquire/release: for the object's contents.
std::atomic<Timeline*> the_timeline{nullptr};

}  // namespace

void start_device_timeline() {
  if (the_timeline.load(std::memory_order_acquire) != nullptr) return;
  static std::once_flag once;
  std::call_once(once, [] { the_timeline.store(new Timeline, std::memory_order_release); });
}

void post_device_span(void* data, int status) {
  auto* span = static_cast<DeviceSpan*>(data);
  span->status = status;
  // Started by the call that queued this callback.
  the_timeline.load(std::memory_order_acquire)->post(*span);
}

void call_returned(DeviceSpan& span, bool threw) noexcept {
  if (!span.completes) return;
  int expected = DeviceSpan::kCalling;
  // acq_rel: pairs with the thread's exchange in deliver().
  if (span.call.compare_exchange_strong(expected, threw ? DeviceSpan::kThrew : DeviceSpan::kReturned,
                                        std::memory_order_acq_rel))
    return;
  // The span was delivered while the call ran: the node completes here
  // (unless the call failed, and the engine completes it with that error).
  if (!threw) span.complete(span.node, span.status);
}

void drain_device_timeline() noexcept {
  if (Timeline* t = the_timeline.load(std::memory_order_acquire)) t->drain();
}

}  // namespace weft::detail

#include "runtime/time/virtual_clock.h"

namespace tidemark {

void VirtualClock::AdvanceTo(Timestamp time_ms) {
  Timestamp cur = now_.load(std::memory_order_acquire);
  while (time_ms > cur && !now_.compare_exchange_weak(cur, time_ms, std::memory_order_acq_rel)) {
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (Wakeup* w : wakeups_) {
    w->Signal();
  }
}

void VirtualClock::RegisterWakeup(Wakeup* wakeup) {
  std::lock_guard<std::mutex> lock(mu_);
  wakeups_.push_back(wakeup);
}

ProcessingTimeService::TimerId VirtualProcessingTimeService::RegisterTimer(Timestamp time_ms,
                                                                           Callback callback) {
  const TimerId id = next_id_++;
  timers_.emplace(std::make_pair(time_ms, id), std::move(callback));
  return id;
}

void VirtualProcessingTimeService::CancelTimer(TimerId id) {
  for (auto it = timers_.begin(); it != timers_.end(); ++it) {
    if (it->first.second == id) {
      timers_.erase(it);
      return;
    }
  }
}

void VirtualProcessingTimeService::AdvanceTo(Timestamp time_ms) {
  while (!timers_.empty() && timers_.begin()->first.first <= time_ms) {
    clock_.AdvanceTo(timers_.begin()->first.first);
    FireDueTimers();
  }
  clock_.AdvanceTo(time_ms);
}

void VirtualProcessingTimeService::FireDueTimers() {
  const Timestamp now = clock_.Now();
  while (!timers_.empty() && timers_.begin()->first.first <= now) {
    auto node = timers_.extract(timers_.begin());
    node.mapped()(node.key().first);
  }
}

}  // namespace tidemark

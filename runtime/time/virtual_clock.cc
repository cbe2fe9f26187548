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
  return timers_.Register(time_ms, std::move(callback));
}

void VirtualProcessingTimeService::CancelTimer(TimerId id) { timers_.Cancel(id); }

void VirtualProcessingTimeService::AdvanceTo(Timestamp time_ms) {
  while (timers_.NextTime() <= time_ms) {
    clock_.AdvanceTo(timers_.NextTime());
    FireDueTimers();
  }
  clock_.AdvanceTo(time_ms);
}

void VirtualProcessingTimeService::FireDueTimers() { timers_.FireDue(clock_.Now()); }

}  // namespace tidemark

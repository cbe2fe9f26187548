#include "runtime/time/virtual_clock.h"

namespace tidemark {

ProcessingTimeService::TimerId VirtualProcessingTimeService::RegisterTimer(Timestamp time_ms,
                                                                           Callback callback) {
  return timers_.Register(time_ms, std::move(callback));
}

void VirtualProcessingTimeService::CancelTimer(TimerId id) {
  timers_.Cancel(id);
}

bool VirtualProcessingTimeService::FireDueTimers() {
  const Timestamp now = clock_.Now();
  if (timers_.NextTime() > now) {
    return false;
  }
  timers_.FireDue(now);
  return true;
}

}  // namespace tidemark

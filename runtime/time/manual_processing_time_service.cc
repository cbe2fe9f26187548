#include "runtime/time/manual_processing_time_service.h"

namespace tidemark {

ProcessingTimeService::TimerId ManualProcessingTimeService::RegisterTimer(Timestamp time_ms,
                                                                          Callback callback) {
  return timers_.Register(time_ms, std::move(callback));
}

void ManualProcessingTimeService::CancelTimer(TimerId id) {
  timers_.Cancel(id);
}

void ManualProcessingTimeService::AdvanceTo(Timestamp time_ms) {
  if (time_ms > now_) {
    now_ = time_ms;
  }
  FireDueTimers();
}

void ManualProcessingTimeService::FireDueTimers() {
  timers_.FireDue(now_);
}

}  // namespace tidemark

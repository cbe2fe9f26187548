#include "runtime/time/manual_processing_time_service.h"

namespace tidemark {

ProcessingTimeService::TimerId ManualProcessingTimeService::RegisterTimer(Timestamp time_ms,
                                                                          Callback callback) {
  TimerId id = next_id_++;
  timers_.emplace(std::make_pair(time_ms, id), std::move(callback));
  return id;
}

void ManualProcessingTimeService::CancelTimer(TimerId id) {
  for (auto it = timers_.begin(); it != timers_.end(); ++it) {
    if (it->first.second == id) {
      timers_.erase(it);
      return;
    }
  }
}

void ManualProcessingTimeService::AdvanceTo(Timestamp time_ms) {
  if (time_ms > now_) {
    now_ = time_ms;
  }
  FireDueTimers();
}

void ManualProcessingTimeService::FireDueTimers() {
  while (!timers_.empty() && timers_.begin()->first.first <= now_) {
    auto node = timers_.extract(timers_.begin());
    node.mapped()(node.key().first);
  }
}

}  // namespace tidemark

#include "runtime/time/processing_time_service.h"

#include <utility>

namespace tidemark {

ProcessingTimeService::TimerId ProcessingTimeService::RegisterTimerAfter(Timestamp time_ms,
                                                                         Callback callback) {
  // Flink's ProcessingTimeServiceUtil#getProcessingTimeDelay: T >= now waits until T + 1 ms, a
  // past T runs at once. kMaxTimestamp never comes, so it needs no offset (and must not overflow).
  const Timestamp now = GetCurrentProcessingTime();
  const Timestamp due = time_ms >= now && time_ms < kMaxTimestamp ? time_ms + 1 : time_ms;
  return RegisterTimer(
      due, [time_ms, callback = std::move(callback)](Timestamp /*due*/) { callback(time_ms); });
}

}  // namespace tidemark

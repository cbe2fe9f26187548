#pragma once

#include <atomic>
#include <memory>
#include <unordered_map>

#include "runtime/mailbox/task_mailbox.h"
#include "runtime/time/processing_time_service.h"
#include "runtime/time/timer_thread.h"

namespace tidemark {

/// Wall-clock processing time (ms since the epoch, like Flink's System.currentTimeMillis) with
/// timers on the shared `TimerThread`. A due timer posts a Mail; the callback runs on the
/// task's mailbox thread. Mirrors Flink's `SystemProcessingTimeService`.
/// Threading: methods on the owning task's mailbox thread.
/// Lifetime: the TimerThread and the mailbox must outlive pending timers (stop the TimerThread
/// before destroying tasks).
class SystemProcessingTimeService : public ProcessingTimeService {
 public:
  SystemProcessingTimeService(TimerThread& timer_thread, TaskMailbox& mailbox)
      : timer_thread_(timer_thread), mailbox_(mailbox) {}

  Timestamp GetCurrentProcessingTime() override;
  TimerId RegisterTimer(Timestamp time_ms, Callback callback) override;
  void CancelTimer(TimerId id) override;

 private:
  TimerThread& timer_thread_;
  TaskMailbox& mailbox_;
  TimerId next_id_ = 1;
  // Pending timers' callbacks, mailbox thread only; a cancelled timer's mail finds nothing.
  std::unordered_map<TimerId, Callback> pending_;
};

}  // namespace tidemark

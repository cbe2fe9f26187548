#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "runtime/io/wakeup.h"
#include "runtime/time/processing_time_service.h"
#include "runtime/time/timer_queue.h"

namespace tidemark {

/// The job-wide virtual processing-time clock (`pipeline.clock: virtual`), starting at 0 ms.
/// Only sources move it, by their pacing: before emitting a record due at T a source advances the
/// clock to T, and every task fires its timers due by T before it goes on. With one source task
/// the whole run is a pure function of the job, independent of machine load.
/// Thread-safe: `Now` from any thread; `AdvanceTo` from source task threads; tasks register their
/// Wakeup before the job starts.
class VirtualClock {
 public:
  Timestamp Now() const { return now_.load(std::memory_order_acquire); }
  /// Moves the clock forward (never back) and wakes every registered task.
  void AdvanceTo(Timestamp time_ms);
  void RegisterWakeup(Wakeup* wakeup);

 private:
  std::atomic<Timestamp> now_{0};
  std::mutex mu_;
  std::vector<Wakeup*> wakeups_;
};

/// A task's view of the `VirtualClock`: timers live in the task and run on its mailbox thread when
/// the task calls `FireDueTimers` (the StreamTask does so on every loop turn).
/// Threading: mailbox thread only.
class VirtualProcessingTimeService : public ProcessingTimeService {
 public:
  explicit VirtualProcessingTimeService(VirtualClock& clock) : clock_(clock) {}

  Timestamp GetCurrentProcessingTime() override { return clock_.Now(); }
  TimerId RegisterTimer(Timestamp time_ms, Callback callback) override;
  void CancelTimer(TimerId id) override;

  /// Runs every timer due at the clock's current time, in (time, registration) order.
  void FireDueTimers();

  /// Moves the job's clock to `time_ms` in steps: it stops at each of this task's timers due on
  /// the way and runs it with the clock standing at the timer's time, so a callback that reads
  /// the clock (idleness checks, re-arming periodic timers) sees its own time, not the end of the
  /// jump. Used by sources pacing under the virtual clock.
  void AdvanceTo(Timestamp time_ms);
  VirtualClock& clock() { return clock_; }

 private:
  VirtualClock& clock_;
  TimerQueue timers_;
};

}  // namespace tidemark

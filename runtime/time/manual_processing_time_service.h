#pragma once

#include <utility>

#include "runtime/time/processing_time_service.h"
#include "runtime/time/timer_queue.h"

namespace tidemark {

/// A `ProcessingTimeService` whose clock only moves when a test (or the virtual clock driver)
/// calls `AdvanceTo`. Due timers run synchronously inside `AdvanceTo`, in (time, registration)
/// order, including timers registered by callbacks that are already due.
/// Mirrors Flink's `TestProcessingTimeService`, which its operator test harnesses use:
/// `RegisterTimerAfter(T)` is due at T, not T + 1 ms, because the harness's
/// `setProcessingTime(T)` (`TestProcessingTimeService#setCurrentTime`) runs every timer <= T; the
/// scenario cases, written from those harnesses, rely on it.
/// Single-threaded: not thread-safe.
class ManualProcessingTimeService : public ProcessingTimeService {
 public:
  explicit ManualProcessingTimeService(Timestamp start_ms = 0) : now_(start_ms) {}

  Timestamp GetCurrentProcessingTime() override { return now_; }
  TimerId RegisterTimer(Timestamp time_ms, Callback callback) override;
  void CancelTimer(TimerId id) override;
  /// Due at `time_ms` itself (Flink's `TestProcessingTimeService`; see the class comment).
  TimerId RegisterTimerAfter(Timestamp time_ms, Callback callback) override {
    return RegisterTimer(time_ms, std::move(callback));
  }

  /// Moves the clock to `time_ms` (no-op if it is not ahead) and runs every timer due by then.
  void AdvanceTo(Timestamp time_ms);
  void AdvanceBy(int64_t delta_ms) { AdvanceTo(now_ + delta_ms); }

  /// Runs timers already due at the current time (used after callbacks register "now" timers).
  void FireDueTimers();

  size_t NumPendingTimers() const { return timers_.size(); }
  /// Time of the earliest pending timer, or kMaxTimestamp when none.
  Timestamp NextTimerTime() const { return timers_.NextTime(); }

 private:
  Timestamp now_;
  TimerQueue timers_;
};

}  // namespace tidemark

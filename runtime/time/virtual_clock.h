#pragma once

#include <atomic>
#include <utility>

#include "runtime/time/processing_time_service.h"
#include "runtime/time/timer_queue.h"

namespace tidemark {

/// The job-wide virtual processing-time clock (`pipeline.clock: virtual`), starting at 0 ms: a
/// discrete-event clock. It moves only when every task of the job is quiescent (inputs drained,
/// no runnable mail, no due timer, sources waiting for their next arrival), and then jumps to the
/// earliest pending processing-time timer of the whole job (a source's next arrival, which it
/// registers as a timer through `SourceReaderContext::WakeUpAt`; a periodic watermark emission;
/// an operator's timer). The job driver (`JobExecution` under the virtual clock) runs every task
/// on one thread in a fixed order, decides quiescence and calls `AdvanceTo`, so a run is a pure
/// function of the job, for any number of sources, subtasks and tasks, however loaded the machine.
/// The order, at every instant (design.md): the sources first, source by source in job order,
/// each subtask 0 first, then the other tasks; each instant starts again at the first task, and
/// each task reads its input channels from the first one again.
/// Processing-time timers of operators (`ProcessingTimeService::RegisterTimerAfter`) fire as in
/// Flink's running job: the timer for T once the clock has passed T, at T + 1 ms.
/// Thread-safe: `Now` from any thread (metrics, traces); `AdvanceTo` from the driver thread only.
class VirtualClock {
 public:
  Timestamp Now() const { return now_.load(std::memory_order_acquire); }
  /// Moves the clock forward (never back).
  void AdvanceTo(Timestamp time_ms) {
    if (time_ms > now_.load(std::memory_order_relaxed)) {
      now_.store(time_ms, std::memory_order_release);
    }
  }

 private:
  std::atomic<Timestamp> now_{0};
};

/// A task's view of the `VirtualClock`: timers live in the task and run on its thread when the
/// task calls `FireDueTimers` (the StreamTask does so on every turn of its mailbox loop).
/// Threading: the task's thread only (under the virtual clock: the job driver's thread).
class VirtualProcessingTimeService : public ProcessingTimeService {
 public:
  explicit VirtualProcessingTimeService(VirtualClock& clock) : clock_(clock) {}

  Timestamp GetCurrentProcessingTime() override { return clock_.Now(); }
  TimerId RegisterTimer(Timestamp time_ms, Callback callback) override;
  void CancelTimer(TimerId id) override;

  /// Runs every timer due at the clock's current time, in (time, registration) order. Returns
  /// true when any ran.
  bool FireDueTimers();
  /// Time of this task's earliest pending timer (kMaxTimestamp: none): the task's next event.
  Timestamp NextTimerTime() const { return timers_.NextTime(); }
  VirtualClock& clock() { return clock_; }

 private:
  VirtualClock& clock_;
  TimerQueue timers_;
};

}  // namespace tidemark

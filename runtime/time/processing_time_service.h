#pragma once

#include <cstdint>
#include <functional>

#include "runtime/core/timestamp.h"

namespace tidemark {

/// Processing time for one task: a clock (ms) and one-shot timers whose callbacks run on the
/// task's mailbox thread. Mirrors Flink's `ProcessingTimeService`.
///
/// Implementations: `SystemProcessingTimeService` (wall clock, Asio `steady_timer`s that post
/// mails), `ManualProcessingTimeService` (tests: time moves only by `AdvanceTo`), and the virtual
/// clock
/// (`pipeline.clock: virtual`), where a source's pacing advances time.
///
/// Threading: every method is called from the owning task's mailbox thread only; callbacks run
/// there too, never concurrently with operator code.
class ProcessingTimeService {
 public:
  using TimerId = uint64_t;
  /// Called with the timer's registered time (not the current time), as in Flink.
  using Callback = std::function<void(Timestamp timer_time_ms)>;

  virtual ~ProcessingTimeService() = default;

  /// Current processing time in ms.
  virtual Timestamp GetCurrentProcessingTime() = 0;

  /// Runs `callback` once processing time reaches `time_ms` (at once, on the next mailbox turn, if
  /// it already has). Timers due at the same time run in registration order.
  virtual TimerId RegisterTimer(Timestamp time_ms, Callback callback) = 0;

  /// Cancels a pending timer; a timer that already ran or was cancelled is ignored.
  virtual void CancelTimer(TimerId id) = 0;

  /// A timer as Flink's running job fires it (`SystemProcessingTimeService#registerTimer`, whose
  /// delay is `ProcessingTimeServiceUtil#getProcessingTimeDelay`, FLINK-9857): a timer for a time
  /// T that has not passed (T >= now) runs only once processing time has passed T, at T + 1 ms, so
  /// that every record arriving at processing time T is processed before it, as every record of
  /// event time <= T comes before a watermark T; a timer for a time already passed (T < now) runs
  /// at once (on the next mailbox turn). `callback` receives T, not the time it runs at. Timers
  /// of the `InternalTimerService` (keyed process functions, processing-time triggers) use it.
  /// `ManualProcessingTimeService` overrides it with the semantics of Flink's test harness
  /// (`TestProcessingTimeService#setCurrentTime(T)` runs every timer <= T): due at T.
  /// Returns an id for `CancelTimer`.
  virtual TimerId RegisterTimerAfter(Timestamp time_ms, Callback callback);
};

}  // namespace tidemark

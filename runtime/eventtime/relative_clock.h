#pragma once

#include <chrono>
#include <cstdint>

#include "runtime/time/processing_time_service.h"

namespace tidemark {

/// A monotonic clock that only measures elapsed time; its absolute value means nothing. Mirrors
/// Flink's `org.apache.flink.util.clock.RelativeClock`. Used by `IdlenessTimer` (idleness
/// countdowns) and, through `PausableRelativeClock`, by sources whose idleness clock must stop
/// during backpressure and while a split is paused for watermark alignment.
///
/// Units: nanoseconds (`GetRelativeTimeNanos`) and milliseconds (`GetRelativeTimeMillis`).
/// Threading: implementations state their own; the ones in this file are mailbox-thread-only
/// unless noted.
class RelativeClock {
 public:
  virtual ~RelativeClock() = default;
  /// Current relative time in ns. Never decreases.
  virtual int64_t GetRelativeTimeNanos() const = 0;
  /// Current relative time in ms (`GetRelativeTimeNanos() / 1'000'000`, truncated).
  virtual int64_t GetRelativeTimeMillis() const { return GetRelativeTimeNanos() / 1'000'000; }
};

/// The process's monotonic clock (`std::chrono::steady_clock`). Thread-safe.
class SystemRelativeClock final : public RelativeClock {
 public:
  int64_t GetRelativeTimeNanos() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

/// A clock that moves only when told to (tests, scenario cases). Starts at `start_nanos`.
/// Not thread-safe.
class ManualRelativeClock final : public RelativeClock {
 public:
  explicit ManualRelativeClock(int64_t start_nanos = 0) : now_nanos_(start_nanos) {}

  int64_t GetRelativeTimeNanos() const override { return now_nanos_; }

  /// Moves the clock forward; a negative delta is ignored (a relative clock never goes back).
  void AdvanceNanos(int64_t delta_nanos) {
    if (delta_nanos > 0) {
      now_nanos_ += delta_nanos;
    }
  }
  void AdvanceMillis(int64_t delta_ms) { AdvanceNanos(delta_ms * 1'000'000); }

 private:
  int64_t now_nanos_;
};

/// Processing time of a task seen as a relative clock, so that idleness in
/// `TimestampsAndWatermarksOperator` follows the task's `ProcessingTimeService` (manual in tests,
/// virtual under `pipeline.clock: virtual`).
///
/// The value is `(processing time + 1 ms)` in ns: `IdlenessTimer` treats relative time 0 as "no
/// countdown running" (as Flink does), and a manual service starting at 0 must not hit that
/// sentinel. Only differences are ever used, so the offset changes nothing else.
/// Ownership: borrows `service`, which must outlive the clock. Mailbox thread only.
class ProcessingTimeRelativeClock final : public RelativeClock {
 public:
  explicit ProcessingTimeRelativeClock(ProcessingTimeService& service) : service_(service) {}

  int64_t GetRelativeTimeNanos() const override {
    return (service_.GetCurrentProcessingTime() + 1) * 1'000'000;
  }

 private:
  ProcessingTimeService& service_;
};

}  // namespace tidemark

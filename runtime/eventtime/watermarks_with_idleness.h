#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "runtime/eventtime/relative_clock.h"
#include "runtime/eventtime/watermark_generator.h"

namespace tidemark {

/// Decides whether an input has been quiet for longer than a timeout. Mirrors Flink's
/// `WatermarksWithIdleness.IdlenessTimer`.
///
/// Rules (SEMANTICS.md §1): `Activity()` counts events. `CheckIfIdle()` is the only place time is
/// looked at:
/// - if there was activity since the previous check, the countdown is reset (not running) and the
///   result is false;
/// - else, if no countdown is running, the first quiet check *starts* it at the current clock time
///   (not at the last event) and the result is false;
/// - else the input is idle iff `now - start > timeout` (strictly greater).
/// A relative clock value of 0 means "no countdown running" (Flink's sentinel), so a clock that
/// reads exactly 0 at the first quiet check starts the countdown one check later.
///
/// Ownership: borrows `clock`, which must outlive the timer. Threading: mailbox thread only.
class IdlenessTimer {
 public:
  /// Throws `InvalidArgument` unless `timeout > 0`.
  IdlenessTimer(const RelativeClock& clock, std::chrono::milliseconds timeout);

  void Activity() { ++counter_; }
  [[nodiscard]] bool CheckIfIdle();

  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  const RelativeClock& clock_;
  std::chrono::milliseconds timeout_;
  int64_t max_idle_nanos_;
  uint64_t counter_ = 0;
  uint64_t last_counter_ = 0;
  int64_t start_of_inactivity_nanos_ = 0;  ///< 0: no countdown running
};

/// Wraps a generator and marks the output idle when no records arrived for `timeout`. Mirrors
/// Flink's `WatermarksWithIdleness` (`WatermarkStrategy.withIdleness`).
///
/// - `OnEvent`: forwards to the wrapped generator, reports activity, clears the idle latch; it
///   never emits anything by itself.
/// - `OnPeriodicEmit`: if the `IdlenessTimer` says idle, calls `MarkIdle()` once per idle phase
/// (the
///   latch) and skips the wrapped generator's periodic emit; otherwise calls the wrapped generator.
/// - It never calls `MarkActive()`: the stream becomes active again through the next watermark the
///   output actually forwards (`WatermarkToDataOutput` emits ACTIVE before it).
///
/// Idleness is only evaluated in periodic emits, so it is detected at the first periodic emit after
/// the timeout has passed. Ownership: owns `inner`; borrows `clock` (must outlive this object).
/// Threading: mailbox thread only.
class WatermarksWithIdleness final : public WatermarkGenerator {
 public:
  /// Throws `InvalidArgument` unless `timeout > 0`; TM_CHECKs `inner` non-null.
  WatermarksWithIdleness(std::unique_ptr<WatermarkGenerator> inner,
                         std::chrono::milliseconds timeout, const RelativeClock& clock);

  void OnEvent(const StreamRecord& record, Timestamp event_timestamp,
               WatermarkOutput& output) override;
  void OnPeriodicEmit(WatermarkOutput& output) override;
  bool InspectsRecordOnEvent() const override { return inner_->InspectsRecordOnEvent(); }
  /// The inner generator's state (the idleness timer starts again: idleness is processing time).
  void SnapshotState(StateWriter& writer) const override { inner_->SnapshotState(writer); }
  void RestoreState(StateReader& reader) override { inner_->RestoreState(reader); }
  std::optional<int64_t> CurrentOutOfOrdernessMs() const override {
    return inner_->CurrentOutOfOrdernessMs();
  }

  /// Whether the last periodic emit declared the input idle (and no event came since).
  bool IsIdleNow() const { return idle_now_; }

 private:
  std::unique_ptr<WatermarkGenerator> inner_;
  IdlenessTimer timer_;
  bool idle_now_ = false;
};

}  // namespace tidemark

#pragma once

#include <chrono>

#include "runtime/eventtime/watermark_generator.h"

namespace tidemark {

/// Periodic generator for streams whose records are out of order by at most a fixed bound B.
/// Mirrors Flink's `BoundedOutOfOrdernessWatermarks`.
///
/// Keeps the largest timestamp seen, `max_ts`, which starts at `MIN + B + 1` so that the watermark
/// before the first record is exactly `kMinTimestamp` (no underflow). `OnEvent` only updates
/// `max_ts` and never emits; every `OnPeriodicEmit` emits `max_ts - B - 1`, also when it did not
/// change (suppressing repeats is the output's job, e.g. `WatermarkToDataOutput`).
/// The `- 1` makes the watermark a promise about timestamps `<= watermark`: a record at exactly
/// `max_ts - B` may still come.
///
/// Threading: mailbox thread only. Cost: O(1) per event.
class BoundedOutOfOrdernessWatermarks : public WatermarkGenerator {
 public:
  /// Throws `InvalidArgument` if `max_out_of_orderness` is negative.
  explicit BoundedOutOfOrdernessWatermarks(std::chrono::milliseconds max_out_of_orderness);

  void OnEvent(const StreamRecord& record, Timestamp event_timestamp, WatermarkOutput& output) override;
  void OnPeriodicEmit(WatermarkOutput& output) override;
  bool InspectsRecordOnEvent() const override { return false; }

  /// The watermark the next periodic emit would send.
  Timestamp CurrentWatermark() const { return max_timestamp_ - out_of_orderness_ms_ - 1; }

 private:
  int64_t out_of_orderness_ms_;
  Timestamp max_timestamp_;
};

/// Generator for streams whose timestamps never decrease: bounded out-of-orderness with B = 0, so
/// it emits `max_ts - 1` (an event at 1337 gives watermark 1336). Mirrors Flink's
/// `AscendingTimestampsWatermarks` (`WatermarkStrategy.forMonotonousTimestamps`). A lower
/// timestamp does not pull the watermark back; such a record is late downstream.
class AscendingTimestampsWatermarks final : public BoundedOutOfOrdernessWatermarks {
 public:
  AscendingTimestampsWatermarks() : BoundedOutOfOrdernessWatermarks(std::chrono::milliseconds(0)) {}
};

}  // namespace tidemark

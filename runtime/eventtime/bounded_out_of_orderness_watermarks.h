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

  void OnEvent(const StreamRecord& record, Timestamp event_timestamp,
               WatermarkOutput& output) override;
  void OnPeriodicEmit(WatermarkOutput& output) override;
  bool InspectsRecordOnEvent() const override { return false; }

  /// The watermark the next periodic emit would send.
  Timestamp CurrentWatermark() const { return max_timestamp_ - out_of_orderness_ms_ - 1; }
  /// The largest timestamp seen (restore-watermarks).
  void SnapshotState(StateWriter& writer) const override { writer.WriteI64(max_timestamp_); }
  void RestoreState(StateReader& reader) override { max_timestamp_ = reader.ReadI64(); }

 private:
  int64_t out_of_orderness_ms_;
  Timestamp max_timestamp_;
};

/// Flink SQL's watermark for `WATERMARK FOR ts AS ts - INTERVAL 'd'` (strategy `sql-interval`).
/// Mirrors the table runtime's `GeneratedWatermarkGeneratorSupplier.DefaultWatermarkGenerator`
/// with that expression: each record sets the candidate to *its own* `ts - d` — no `- 1`, so a
/// record at exactly `max_ts - d` is late here and on time under bounded-out-of-orderness — and
/// every periodic emission offers the candidate. The output lets only increasing watermarks
/// through, so with rising timestamps the watermark is `max_ts - d`; a record older than the
/// latest lowers the candidate (never the emitted watermark) until a newer one comes, as in Flink.
/// Before the first record the candidate is MIN. `ts - d` saturates at MIN.
/// Threading: mailbox thread only. Cost: O(1) per event.
class SqlIntervalWatermarks final : public WatermarkGenerator {
 public:
  /// Throws `InvalidArgument` if `interval` is negative.
  explicit SqlIntervalWatermarks(std::chrono::milliseconds interval);

  void OnEvent(const StreamRecord& record, Timestamp event_timestamp,
               WatermarkOutput& output) override;
  void OnPeriodicEmit(WatermarkOutput& output) override;
  bool InspectsRecordOnEvent() const override { return false; }
  void SnapshotState(StateWriter& writer) const override { writer.WriteI64(current_); }
  void RestoreState(StateReader& reader) override { current_ = reader.ReadI64(); }

 private:
  int64_t interval_ms_;
  Timestamp current_ = kMinTimestamp;
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

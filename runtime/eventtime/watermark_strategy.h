#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "runtime/core/stream_record.h"
#include "runtime/eventtime/relative_clock.h"
#include "runtime/eventtime/watermark_generator.h"

namespace tidemark {

/// Extracts a record's event timestamp (ms). Mirrors Flink's `TimestampAssigner`, except that a
/// missing timestamp is explicit: nullopt means "this record has no usable timestamp" (a NULL
/// field, an unparsable string, a value out of range). Callers must report that as an error (side
/// output or `NoTimestamp`), never treat it as 0. Must be cheap and side-effect free; called on
/// the mailbox thread for every record.
using TimestampAssigner = std::function<std::optional<Timestamp>(const StreamRecord& record)>;

/// Makes a fresh generator: one per split (source mode) or per subtask (operator mode).
using WatermarkGeneratorFactory = std::function<std::unique_ptr<WatermarkGenerator>()>;

/// Watermark alignment parameters (`watermarks.alignment` in a job; Flink's
/// `WatermarksWithWatermarkAlignment` / `WatermarkAlignmentParams`). Stored by the strategy and
/// used by the source operator and the coordinator (design.md "Watermark alignment").
struct WatermarkAlignmentParams {
  std::string group;                  ///< splits of one group are aligned with each other
  int64_t max_drift_ms = 0;           ///< a split may run at most this far ahead of the group min
  int64_t update_interval_ms = 1000;  ///< how often watermarks are reported and announced

  friend bool operator==(const WatermarkAlignmentParams&,
                         const WatermarkAlignmentParams&) = default;
};

/// The timestamp assigner (returns the record's own timestamp if it has one, else nullopt). Used
/// when a job names no timestamp field.
TimestampAssigner RecordTimestampAssigner();

/// `idle-advance` on a source (beyond Flink, which has no equivalent): once the source's newest
/// record is `after_ms` of processing time old, its watermark becomes max(watermark, max_ts +
/// (now - t_last) - lag_ms), where max_ts is the largest timestamp seen and t_last the processing
/// time (ms) of the newest record: event time goes on with processing time from the last record.
/// `lag_ms` is what the strategy subtracts from the max timestamp (bound + 1 ms; sql-interval:
/// the interval; adaptive: max + 1 ms). Applied by `SourceOperator`.
struct IdleAdvanceParams {
  int64_t after_ms = 0;
  int64_t lag_ms = 0;
};

/// Everything needed to put event time on a stream: a `TimestampAssigner`, a
/// `WatermarkGenerator` factory, optional idleness and optional alignment. Mirrors Flink's
/// `WatermarkStrategy`. A value type (copyable; the std::functions are shared by copies), built
/// once when the job is compiled and then used by every subtask / split.
///
/// Threading: immutable after construction; `CreateWatermarkGenerator` may be called from any
/// thread, the generators it returns are mailbox-thread-only.
class WatermarkStrategy {
 public:
  /// Both functions must be set (TM_CHECK).
  WatermarkStrategy(TimestampAssigner assigner, WatermarkGeneratorFactory generator_factory);

  /// Flink's `forBoundedOutOfOrderness`; throws `InvalidArgument` for a negative bound.
  static WatermarkStrategy ForBoundedOutOfOrderness(std::chrono::milliseconds max_out_of_orderness,
                                                    TimestampAssigner assigner);
  /// Flink's `forMonotonousTimestamps` (ascending timestamps, B = 0).
  static WatermarkStrategy ForMonotonousTimestamps(TimestampAssigner assigner);
  /// Flink's `noWatermarks`.
  static WatermarkStrategy NoWatermarks(TimestampAssigner assigner);

  /// Returns a copy that wraps every generator in `WatermarksWithIdleness(timeout)`.
  /// Throws `InvalidArgument` unless `timeout > 0` (checked here, not only when generators are
  /// made).
  WatermarkStrategy WithIdleness(std::chrono::milliseconds timeout) const;
  /// Returns a copy carrying `idle-advance` (beyond Flink; see IdleAdvanceParams). Throws
  /// `InvalidArgument` unless `params.after_ms > 0` and `params.lag_ms >= 0`.
  WatermarkStrategy WithIdleAdvance(IdleAdvanceParams params) const;
  /// Returns a copy carrying alignment parameters. Throws `InvalidArgument` for an empty group, a
  /// negative drift or a non-positive update interval.
  WatermarkStrategy WithAlignment(WatermarkAlignmentParams params) const;

  /// Extracts the timestamp of `record`; nullopt when it has none (see `TimestampAssigner`).
  /// With `SetInt64MillisField`, an int64 in that field (other than Long.MIN_VALUE, the "no
  /// timestamp" marker, which the assigner answers) is returned without calling the assigner.
  std::optional<Timestamp> ExtractTimestamp(const StreamRecord& record) const {
    Timestamp ts;
    if (TryExtractTimestamp(record, &ts)) {
      return ts;
    }
    return std::nullopt;
  }
  /// `ExtractTimestamp` for per-record loops: true with `*ts` set, or false when the record has
  /// no timestamp. The inline field is read here; the assigner is called out of line, so its
  /// `std::optional` never merges with the inline result in memory (g++ 12 did, in a loop over a
  /// batch, with a store-forwarding stall on every record).
  bool TryExtractTimestamp(const StreamRecord& record, Timestamp* ts) const {
    if (millis_slot_ >= 0 && IsInt64Slot(record.row, millis_slot_)) {
      int64_t ms;
      if (EventTimeMillis(record.row, static_cast<size_t>(millis_slot_), &ms)) [[likely]] {
        *ts = ms;
        return true;
      }
    }
    return AssignTimestamp(record, ts);
  }
  /// Declares that the assigner returns an int64 found in field `slot` unchanged (a timestamp
  /// field in milliseconds), so `ExtractTimestamp` may read it inline. Per record this saves the
  /// std::function call, whose std::optional result g++ 12 passes through the stack with a
  /// store-forwarding stall (18 % of tumbling_keys_1e3's samples sat on that reload). The
  /// assigner stays the definition: it answers every other value (NULL, double, string).
  void SetInt64MillisField(int slot) { millis_slot_ = slot; }
  const TimestampAssigner& timestamp_assigner() const { return assigner_; }

  /// A new generator. With idleness configured it is wrapped in `WatermarksWithIdleness` driven by
  /// `idleness_clock`, which must then be non-null and outlive the generator (TM_CHECK); without
  /// idleness the clock is unused and may be null.
  std::unique_ptr<WatermarkGenerator> CreateWatermarkGenerator(
      const RelativeClock* idleness_clock) const;

  const std::optional<std::chrono::milliseconds>& idle_timeout() const { return idle_timeout_; }
  const std::optional<WatermarkAlignmentParams>& alignment() const { return alignment_; }
  const std::optional<IdleAdvanceParams>& idle_advance() const { return idle_advance_; }

 private:
  [[gnu::noinline]] bool AssignTimestamp(const StreamRecord& record, Timestamp* ts) const;

  TimestampAssigner assigner_;
  int millis_slot_ = -1;  ///< see SetInt64MillisField; -1: always call the assigner
  WatermarkGeneratorFactory generator_factory_;
  std::optional<std::chrono::milliseconds> idle_timeout_;
  std::optional<WatermarkAlignmentParams> alignment_;
  std::optional<IdleAdvanceParams> idle_advance_;
};

}  // namespace tidemark

#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "runtime/core/stream_record.h"
#include "runtime/eventtime/watermark_output.h"
#include "runtime/state/state_serializer.h"

namespace tidemark {

/// Decides watermarks from the events it sees. Mirrors Flink's `WatermarkGenerator`:
/// `OnEvent` for every record (after its timestamp was assigned), `OnPeriodicEmit` every
/// `pipeline.auto-watermark-interval` (default 200 ms). Stateful; one instance per split (source
/// mode) or per subtask (`assign-timestamps-and-watermarks`). Mailbox thread only.
class WatermarkGenerator {
 public:
  virtual ~WatermarkGenerator() = default;
  virtual void OnEvent(const StreamRecord& record, Timestamp event_timestamp,
                       WatermarkOutput& output) = 0;
  virtual void OnPeriodicEmit(WatermarkOutput& output) = 0;

  /// Whether `OnEvent` reads `record` (punctuated generators do; timestamp-only generators do not).
  /// `TimestampsAndWatermarksOperator` emits a record before calling `OnEvent`, and the downstream
  /// may move from it; it keeps a copy for `OnEvent` only when this returns true. Default: true.
  virtual bool InspectsRecordOnEvent() const { return true; }

  /// The out-of-orderness bound (ms) the generator applied at its last periodic emit, for
  /// generators whose bound changes (`AdaptiveOutOfOrdernessWatermarks`); reported as a metric.
  /// Default: nullopt (a fixed or no bound).
  virtual std::optional<int64_t> CurrentOutOfOrdernessMs() const { return std::nullopt; }

  /// Only under `checkpointing.restore-watermarks` (Flink never checkpoints a generator, seed 000
  /// §7): writes what the generator learnt from the events so far (e.g. the largest timestamp),
  /// and `RestoreState` reads it back into a fresh generator of the same strategy. Default: a
  /// generator with nothing to keep writes and reads nothing. Errors: `StateCorrupt` on read.
  virtual void SnapshotState(StateWriter& /*writer*/) const {}
  virtual void RestoreState(StateReader& /*reader*/) {}
};

}  // namespace tidemark

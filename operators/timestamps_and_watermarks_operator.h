#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "runtime/eventtime/relative_clock.h"
#include "runtime/eventtime/watermark_generator.h"
#include "runtime/eventtime/watermark_strategy.h"
#include "runtime/eventtime/watermark_to_data_output.h"
#include "runtime/task/stream_operator.h"

namespace tidemark {

/// What `TimestampsAndWatermarksOperator` does with a record whose timestamp cannot be extracted.
enum class MissingTimestampPolicy {
  /// Send it (unchanged, without timestamp) to the side output `errors_tag` and count it.
  kSideOutput,
  /// Throw `NoTimestamp`, which fails the task and the job.
  kFail,
};

struct TimestampsAndWatermarksOptions {
  /// Streaming (true): the strategy's generator makes progressive watermarks. Batch (false): a
  /// `NoWatermarksGenerator` is used and no periodic timer runs (Flink's
  /// `emitProgressiveWatermarks`); the final MAX is still forwarded.
  bool emit_progressive_watermarks = true;
  MissingTimestampPolicy on_missing_timestamp = MissingTimestampPolicy::kSideOutput;
  /// Side-output tag for records without a timestamp (kSideOutput).
  std::string errors_tag = "errors";
};

/// The `assign-timestamps-and-watermarks` operator: one generator per subtask, applied to the
/// records flowing through. Mirrors Flink's `TimestampsAndWatermarksOperator` (SEMANTICS.md §2).
///
/// - Each record is re-stamped with the strategy's `TimestampAssigner`, emitted, and only then
///   passed to the generator's `OnEvent`, so a punctuated watermark follows its record.
/// - Watermarks go out through a `WatermarkToDataOutput`: only strictly increasing ones, with
///   ACTIVE before the first one after an IDLE.
/// - Upstream watermarks are dropped, except MAX (end of input), which is forwarded (once).
///   Upstream statuses are ignored. This is why an operator-level strategy behind a fast and a
///   slow split makes records of the slow split late (design.md, the two-split experiment).
/// - Periodic emission runs on a processing-time timer every `auto_watermark_interval_ms` of the
///   `OperatorContext` (first at open time + interval, then re-armed at now + interval); 0 turns it
///   off. `Finish()` does one last periodic emit.
/// - Idleness (`WatermarkStrategy::WithIdleness`) is measured on the task's processing time.
/// - A record without a timestamp is never stamped 0: see `MissingTimestampPolicy`.
///
/// Lifecycle: `Open` -> `ProcessElement`/`ProcessWatermark`/`ProcessWatermarkStatus` -> `Finish`
/// -> `Close` (cancels the timer). Threading: mailbox thread only; the timer callback runs there.
/// Cost per record: one assigner call and one `OnEvent`; a row copy only for generators that
/// inspect records (punctuated), because the downstream may move from the emitted record.
class TimestampsAndWatermarksOperator final : public StreamOperator {
 public:
  explicit TimestampsAndWatermarksOperator(WatermarkStrategy strategy,
                                           TimestampsAndWatermarksOptions options = {});
  ~TimestampsAndWatermarksOperator() override;

  void Open(const OperatorContext& context) override;
  void ProcessElement(StreamRecord& record, int input) override;
  void ProcessWatermark(Watermark watermark, int input) override;
  void ProcessWatermarkStatus(WatermarkStatus status, int input) override;
  void Finish() override;
  void Close() override;
  /// Section `timestamps-and-watermarks` v1: the generator's state and the largest watermark
  /// emitted. Read back only under `checkpointing.restore-watermarks`; otherwise, as Flink's
  /// operator (which has no state), a restored subtask starts at Long.MIN with a fresh generator.
  void SnapshotState(StateSnapshotContext& context) override;
  /// With restore-watermarks: restores the generator and emits the checkpointed watermark again
  /// before the first record, watermark or periodic emission. Errors: `StateCorrupt`.
  void InitializeState(StateInitializationContext& context) override;

  /// Records that had no timestamp (sent to the errors side output, or the one that failed).
  int64_t num_records_without_timestamp() const { return num_records_without_timestamp_; }
  /// The largest watermark emitted so far (MIN if none).
  Timestamp current_watermark() const;
  /// currentOutputWatermark, numRecordsWithoutTimestamp, and for a generator with a changing
  /// bound (adaptive-out-of-orderness) currentOutOfOrdernessMs.
  void CollectMetrics(MetricsWriter& out) const override {
    out.Gauge("currentOutputWatermark", current_watermark());
    out.Gauge("numRecordsWithoutTimestamp", num_records_without_timestamp_);
    if (generator_) {
      if (std::optional<int64_t> bound = generator_->CurrentOutOfOrdernessMs()) {
        out.Gauge("currentOutOfOrdernessMs", *bound);
      }
    }
  }

 private:
  void OnPeriodicTimer();
  /// Emits the restored watermark once (restore-watermarks), before anything else goes out.
  void EmitRestoredWatermark() {
    if (restored_watermark_) {
      watermark_output_->EmitWatermark(Watermark{*restored_watermark_});
      restored_watermark_.reset();
    }
  }
  void ScheduleNextPeriodicEmit();

  WatermarkStrategy strategy_;
  TimestampsAndWatermarksOptions options_;
  std::unique_ptr<ProcessingTimeRelativeClock> idleness_clock_;
  std::unique_ptr<WatermarkGenerator> generator_;
  std::unique_ptr<WatermarkToDataOutput> watermark_output_;
  std::optional<ProcessingTimeService::TimerId> timer_;
  int64_t interval_ms_ = 0;
  int64_t num_records_without_timestamp_ = 0;
  std::optional<Timestamp> restored_watermark_;
};

}  // namespace tidemark

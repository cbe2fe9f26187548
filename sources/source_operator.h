#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "runtime/eventtime/pausable_relative_clock.h"
#include "runtime/eventtime/relative_clock.h"
#include "runtime/eventtime/source_coordinator.h"
#include "runtime/eventtime/watermark_output_multiplexer.h"
#include "runtime/eventtime/watermark_strategy.h"
#include "runtime/eventtime/watermark_to_data_output.h"
#include "runtime/task/source_operator_base.h"
#include "runtime/task/time_accounting.h"
#include "sources/source_reader.h"

namespace tidemark {

/// Options of a `SourceOperator` beyond its strategy.
struct SourceOperatorOptions {
  /// Flink's `emitProgressiveWatermarks`: false (batch) assigns timestamps but generates no
  /// watermark at all (only the task's final MAX), and takes no part in alignment.
  bool emit_progressive_watermarks = true;
  /// Assign the enumerator's splits (`SplitEnumerator::SplitsFor`) at `Open` and then tell the
  /// reader there are no more. False: splits come only through `AddSplits` (tests).
  bool assign_splits_on_open = true;
  /// The source's `errors: fail`: the first bad input (`ReaderOutput::EmitError`, or a record
  /// without a usable timestamp) throws `BadInputError` naming where it was read and why,
  /// failing the task and the job (Flink's `ignore-parse-errors: false`). False: counted and
  /// sent to side output `errors`.
  bool fail_on_input_error = false;
  /// Why the strategy's assigner gave `record` no timestamp (`NoTimestampReason` of the job's
  /// `watermarks:` block): the reason its error report gives after "no timestamp: ". Unset: a
  /// general reason. Called on the task's thread, for refused records only.
  std::function<std::string(const StreamRecord& record)> no_timestamp_reason;
};

/// The head operator of a source task (Flink's `SourceOperator` with
/// `ProgressiveTimestampsAndWatermarks`). Drives its SourceReader and applies the job's
/// WatermarkStrategy per split (SEMANTICS.md §1-4, §11):
///
/// - **Per-split generators.** Every split output (created when the split is assigned, or when
///   the reader asks for it; splits assigned before the first `EmitNext` get theirs at that first
///   call, as in Flink's OUTPUT_NOT_INITIALIZED mode, and periodic ticks before it do nothing; a
///   split the reader keeps queued, `SourceReader::IsSplitQueued`, only when the reader asks)
///   has its own WatermarkGenerator and its own idleness clock (a
///   `PausableRelativeClock`). On-event watermarks go through the split's *immediate* multiplexer
///   handle, periodic ones through its *deferred* handle; a `WatermarkOutputMultiplexer` merges
///   them (minimum over active splits; a split that has not reported holds it at MIN).
/// - **Main output.** Records emitted without a split go through one more generator whose
///   watermarks go straight to the task output (not through the multiplexer).
/// - **Periodic tick** (every `auto_watermark_interval_ms`): all split generators, then
///   `multiplexer.OnPeriodicEmit()`, then the main generator.
/// - **Idleness of the task output.** The split side (the multiplexer's output) and the main side
///   each start idle; the output is marked IDLE only when both are idle, and ACTIVE as soon as
///   either side emits a watermark or becomes active. A reader's own `MarkIdle()` on an output
///   lasts until it emits a record (or a watermark, or calls `MarkActive()`) on that output again.
/// - **WatermarkToDataOutput**: only strictly increasing watermarks leave the source; each one is
///   the subtask's latest watermark (reported for alignment).
/// - **Alignment** (strategy with `alignment`, progressive mode only): every `update-interval`,
///   counted from the first `EmitNext`, the latest watermark is reported (MAX while the output is
///   idle, nothing before the first one, MAX once at end of input). On each
///   `HandleAlignmentEvent(maxAllowed)` the subtask waits (EmitNext returns kNothingAvailable,
///   `IsAvailable()` is false; the poll whose record passes the maximum still returns the
///   reader's status, as Flink's does) iff `maxAllowed < latest`, rechecked on every watermark;
///   while it waits its main activity clock, and so every idleness clock, is paused; with more than
///   one assigned split, a split whose watermark is above `maxAllowed` is paused
///   (`SourceReader::PauseOrResumeSplits`, and its idleness clock stops) as soon as its watermark
///   passes it, and resumed on the first announcement that allows it again. A released split leaves
///   the bookkeeping.
/// - **Idle-advance** (strategy with `idle_advance`, beyond Flink): after the periodic tick's
///   merge, once the newest record of the subtask (of every split) is `after_ms` of processing
///   time old, the watermark max_ts + (now - t_last) - lag is emitted through the main side when
///   it is above the latest one (traced `idle-advance`); so event time moves with processing
///   time from the last record. Not while waiting for alignment. While advancing the subtask is
///   ACTIVE even if idleness marked every split idle; the next record ends it
///   (`idle-advance-end`, at the next tick) and the main side returns to its previous status.
/// - Under the virtual clock a source that can only wait for an announcement waits for its next
///   report, a pending timer the clock stops at (the report's announcement is what releases it).
///
/// Without a strategy (`watermarks:` absent) records keep the source's own timestamps and no
/// watermark is generated (only the final MAX at end of input). A record whose timestamp cannot
/// be extracted is counted and sent to side output `errors`.
/// Threading: mailbox thread only (including `HandleAlignmentEvent`, which arrives as a Mail).
class SourceOperator : public SourceOperatorBase, public WatermarkAlignmentParticipant {
 public:
  SourceOperator(std::shared_ptr<const Source> source, std::optional<WatermarkStrategy> strategy,
                 SourceOperatorOptions options = {});
  ~SourceOperator() override;

  void Open(const OperatorContext& context) override;
  [[nodiscard]] InputStatus EmitNext() override;
  /// Polls as `EmitNext` does, but collects the records into a batch (rows reused, up to
  /// `kBatchSize`) that goes downstream with one `Output::CollectBatch`; any watermark, status or
  /// side-output record the source emits meanwhile first sends the records before it, so the
  /// order downstream is exactly `EmitNext`'s. Nothing is left pending when it returns.
  [[nodiscard]] InputStatus EmitBatch(int64_t max_polls, int64_t* polls) override;

  /// Records per batch handed downstream by `EmitBatch`.
  static constexpr size_t kBatchSize = 256;
  void Close() override;
  /// Writes the reader's splits with their positions (`SourceReader::SnapshotState`; finished
  /// splits excluded), section `source-splits` v1. Flink's `SourceOperator#snapshotState`.
  /// Watermark generators are not in it (Flink: they start again at Long.MIN after a restore).
  void SnapshotState(StateSnapshotContext& context) override;
  /// On a restore: replaces the splits the enumerator assigned at `Open` by the restored ones
  /// (`Source::RestoreSplit`), handed to a fresh reader; each restored split joins the watermark
  /// multiplexer now, not at its first record (a split the reader keeps queued joins when the
  /// reader starts it). Errors: `StateCorrupt`.
  void InitializeState(StateInitializationContext& context) override;
  void NotifyCheckpointComplete(int64_t checkpoint_id) override;

  /// Assigns splits (Flink's AddSplitEvent): creates their outputs, then hands them to the reader.
  void AddSplits(std::vector<std::unique_ptr<SourceSplit>> splits);
  /// Flink's `stop(StopMode)`: releases a wait for alignment; afterwards EmitNext ends input.
  void Stop(SourceStopMode mode) override;

  // ---- alignment (WatermarkAlignmentParticipant) ----
  std::optional<WatermarkAlignmentParams> alignment_params() const override;
  void SetWatermarkReporter(ReportFn report) override { reporter_ = std::move(report); }
  void HandleAlignmentEvent(Timestamp max_allowed_watermark) override;

  /// False while waiting for alignment (Flink's `isAvailable`); true again after `Stop`.
  bool IsAvailable() const { return !waiting_for_alignment_; }
  bool waiting_for_alignment() const { return waiting_for_alignment_; }
  /// Ids of the splits paused for alignment.
  const std::set<std::string>& paused_splits() const { return paused_splits_; }
  /// The value of the last report sent (nullopt: none yet).
  std::optional<Timestamp> last_reported_watermark() const { return last_reported_; }
  /// The latest watermark that left the source (MIN before any) — Flink's `latestWatermark`.
  Timestamp latest_watermark() const { return latest_watermark_; }
  /// The latest max-allowed watermark announced (MAX before any announcement).
  Timestamp max_allowed_watermark() const { return max_allowed_; }
  /// Whether the task output is idle.
  bool IsIdle() const { return data_output_ != nullptr && data_output_->IsIdle(); }

  int64_t records_without_timestamp() const { return records_without_timestamp_; }
  /// Input the reader could not turn into records (`ReaderOutput::EmitError`), sent to `errors`.
  int64_t input_errors() const { return input_errors_; }
  /// currentOutputWatermark, idle, waitingForAlignment, numInputErrors, numRecordsWithoutTimestamp,
  /// and per split: split.<id>.watermark, split.<id>.idle, split.<id>.paused; notes
  /// firstInputError and firstRecordWithoutTimestamp (`file:line: reason`) once there is one.
  void CollectMetrics(MetricsWriter& out) const override;
  /// Counts `error` and sends its row (SourceErrorSchema) to side output `errors`.
  void EmitError(const SourceError& error);
  /// Under `errors: fail`: throws BadInputError "bad input (errors: fail): <PlaceWithOffset>".
  [[noreturn]] static void FailOnBadInput(const SourceError& error);
  /// The last watermark that left the source (MIN before any).
  Timestamp current_watermark() const { return latest_watermark_; }

 private:
  class IdlenessManager;
  class SplitOutput;
  class MainReaderOutput;
  class ReaderContext;
  class FlushingOutput;
  class IdleAdvanceObserver;

  /// The strategy's generator for a split (or the main output), observed for `idle-advance`.
  std::unique_ptr<WatermarkGenerator> MakeGenerator(const RelativeClock* clock);
  /// `idle-advance` at a periodic tick, after the splits' watermarks are merged: once the newest
  /// record is `after_ms` old, emits max_ts + quiet - lag when that is above the watermark.
  void IdleAdvance(Timestamp now);

  bool generates_watermarks() const {
    return strategy_.has_value() && options_.emit_progressive_watermarks;
  }
  bool aligned() const { return generates_watermarks() && strategy_->alignment().has_value(); }

  /// At the first EmitNext: creates the outputs of the splits assigned so far and starts the
  /// alignment reports.
  void InitializeOutputs();
  /// Sets the alignment wait; entering it pauses the main activity clock, leaving it resumes it.
  void SetWaitingForAlignment(bool waiting);
  void EmitPeriodicWatermark();
  void SchedulePeriodic(Timestamp at_ms);
  void ScheduleReport(Timestamp at_ms);
  void ReportLatestWatermark();
  void OnWatermarkForwarded(Timestamp watermark);
  void OnSplitWatermark(const std::string& split_id, Timestamp watermark);
  void OnSplitReleased(const std::string& split_id);
  void CheckWatermarkAlignment();
  void CheckSplitWatermarkAlignment();
  void PauseOrResumeSplits(const std::vector<std::string>& pause,
                           const std::vector<std::string>& resume);
  SourceOutput& CreateSplitOutput(const std::string& split_id);
  /// Records `event` in the job's watermark trace, when there is one.
  void Trace(std::string_view event, std::initializer_list<WatermarkTrace::Field> fields);
  /// Stamps `record` (assigner or the source's timestamp), emits it, then lets `generator` (if
  /// any) see it with `immediate` as its output. A record without a timestamp goes to `errors`.
  void EmitRecord(StreamRecord& record, bool has_source_ts, WatermarkGenerator* generator,
                  WatermarkOutput* immediate, const std::string& split_id = "");
  /// The task's poll: `reader_->PollNext` for `max_polls == 0` (EmitNext), else
  /// `reader_->PollBatch` for up to `max_polls` polls; `*polls` as PollBatch's.
  InputStatus Poll(int64_t max_polls, int64_t* polls);
  /// Lends the next free pool slots (up to `max`; flushing a full batch first) for a reader to
  /// fill; empty outside `EmitBatch`. `EmitSlots(n, ...)` then takes the first `n` in order,
  /// emitting each as `EmitRecord` does, and stops after one that started an alignment wait;
  /// returns how many it took.
  std::span<StreamRecord> LendSlots(size_t max);
  size_t EmitSlots(size_t n, WatermarkGenerator* generator, WatermarkOutput* immediate,
                   const std::string& split_id);
  /// Where a reader's next record is built: inside `EmitBatch` a slot of the batch (flushing it
  /// first when full), otherwise `fallback`.
  StreamRecord& RecordSlot(StreamRecord& fallback);
  /// Sends `record` on the main output: inside `EmitBatch` appends it to the batch (moving it
  /// into a slot unless it is the one `RecordSlot` gave), otherwise `Collect`s it.
  void Forward(StreamRecord& record);
  /// Hands the batch's records downstream (one CollectBatch); the slots stay in use until the
  /// batch is full or `EmitBatch` ends, so a record being built survives a flush.
  void FlushPending();
  /// The output the source's internals emit through: flushes the batch before anything else.
  Output& out();
  /// The reason after "no timestamp: " in the error report of `record`, which got none.
  std::string NoTimestampReason(const StreamRecord& record) const;

  std::shared_ptr<const Source> source_;
  std::optional<WatermarkStrategy> strategy_;
  SourceOperatorOptions options_;
  std::unique_ptr<SourceReader> reader_;
  std::unique_ptr<ReaderContext> reader_context_;
  std::unique_ptr<WatermarkToDataOutput> data_output_;
  std::unique_ptr<IdlenessManager> idleness_;
  std::unique_ptr<WatermarkOutputMultiplexer> multiplexer_;
  std::unique_ptr<ProcessingTimeRelativeClock> base_clock_;
  std::unique_ptr<PausableRelativeClock> main_clock_;
  std::unique_ptr<MainReaderOutput> main_output_;
  // idle-advance: the largest timestamp seen, the processing time of the newest record, whether
  // the watermark is being advanced, and the main side's idleness before it was.
  Timestamp advance_max_ts_ = kMinTimestamp;
  Timestamp advance_last_at_ = kMinTimestamp;
  bool advancing_ = false;
  bool main_side_was_idle_ = false;
  std::map<std::string, std::unique_ptr<SplitOutput>> split_outputs_;
  std::unique_ptr<FlushingOutput> out_;
  // EmitBatch's batch: `pool_` holds the records (rows reused round after round), `pool_used_`
  // of them are taken since the batch last started, `pending_` points at those not yet sent.
  bool batching_ = false;
  std::vector<StreamRecord> pool_;
  size_t pool_used_ = 0;
  std::vector<StreamRecord*> pending_;  // sized kBatchSize; the first pending_count_ are pending
  size_t pending_count_ = 0;
  /// EmitRecord's copy of a record for a generator that reads it (punctuated): reused, so the
  /// copy costs no allocation per record.
  StreamRecord seen_;
  int64_t records_without_timestamp_ = 0;
  int64_t input_errors_ = 0;
  // Where the first of each began (SourceError::Place), for the notes firstInputError and
  // firstRecordWithoutTimestamp (the end-of-run summary names them).
  std::string first_input_error_;
  std::string first_without_timestamp_;
  bool periodic_enabled_ = false;
  bool outputs_initialized_ = false;                ///< false until the first EmitNext
  std::vector<std::string> pending_split_outputs_;  ///< splits assigned before it
  bool periodic_reports_ = true;

  // Alignment (Flink's SourceOperator fields of the same meaning).
  ReportFn reporter_;
  Timestamp latest_watermark_ = kMinTimestamp;
  Timestamp max_allowed_ = kMaxTimestamp;
  std::optional<Timestamp> last_reported_;
  std::optional<Timestamp> next_report_at_;
  bool waiting_for_alignment_ = false;
  bool finished_ = false;
  bool stopped_ = false;
  int num_splits_ = 0;                    ///< splits ever assigned (Flink's numSplits)
  std::set<std::string> counted_splits_;  ///< the ids counted in num_splits_
  void CountSplit(const std::string& split_id);
  std::map<std::string, Timestamp> split_watermarks_;
  std::set<std::string> paused_splits_;

  // Metrics sampled on each CollectMetrics (task thread): Flink's sourceIdleTime and the split
  // active / idle / paused time (TimeAccounting states 0 / 1 / 2).
  mutable int64_t metrics_records_seen_ = -1;
  mutable Timestamp last_record_seen_at_ = kMinTimestamp;
  mutable std::map<std::string, TimeAccounting> split_time_;
};

}  // namespace tidemark

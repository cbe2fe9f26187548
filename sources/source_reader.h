#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/row.h"
#include "runtime/core/stream_record.h"
#include "runtime/core/watermark.h"
#include "runtime/state/state_serializer.h"
#include "runtime/task/metrics_writer.h"
#include "runtime/task/source_operator_base.h"
#include "runtime/time/processing_time_service.h"

namespace tidemark {

/// A unit of source input (a file, a partition, a generated sequence). Mirrors Flink's
/// `SourceSplit`. Owned by the enumerator until assigned, then by the reader.
class SourceSplit {
 public:
  virtual ~SourceSplit() = default;
  virtual std::string SplitId() const = 0;
  /// Writes the split with its current read position (a file's byte offset and line, a
  /// sequence's next value), so `Source::RestoreSplit` gives a split that continues exactly after
  /// the last record emitted before the snapshot. Mirrors Flink's split serializer
  /// (`SimpleVersionedSerializer<SplitT>`).
  /// Default (until every split implements it): throws `Error`, failing the checkpoint.
  virtual void WriteTo(StateWriter& /*writer*/) const {
    throw Error("split " + SplitId() + " cannot be snapshotted");
  }
};

/// What `SourceError::offset` and `RecordPosition::offset` count.
enum class OffsetUnit : uint8_t {
  kByte,    ///< byte offset of the line in its file (file and replay sources)
  kRecord,  ///< the record's offset in its Kafka partition (Flink's `ConsumerRecord#offset`)
};

/// One piece of input a source could not turn into a record: a CSV line with the wrong number of
/// fields, a value that does not fit its declared type, an over-long line, a record without a
/// usable timestamp. Sent, counted, to the source's side output `errors` (schema:
/// `SourceErrorSchema()`), never dropped silently; with `errors: fail` the first one fails the
/// job instead (SourceOperator). `line` is 1-based, 0 when unknown or not a line (Kafka).
struct SourceError {
  std::string split_id;  ///< the split (file sources: the path; Kafka: `topic-partition`)
  int64_t line = 0;
  std::string reason;
  std::string text;     ///< the offending input, cut to at most 200 bytes
  int64_t offset = -1;  ///< where it was read, in `unit`; -1 when unknown
  OffsetUnit unit = OffsetUnit::kByte;

  /// `split:line: reason` (a Kafka record: `partition orders-0 offset 17: reason`; `split:
  /// reason` without a line), as the end-of-run summary names the first rejected record:
  /// `jobs/data/bad_input.csv:3: expected 3 fields, got 2`.
  std::string Place() const;
  /// Place() with the byte offset too, for a failure cause:
  /// `jobs/data/bad_input.csv:3 (byte 57): expected 3 fields, got 2`.
  std::string PlaceWithOffset() const;
};

/// Where the record a reader is emitting right now was read (see
/// `SourceReader::CurrentRecordPosition`): 1-based line and the line's byte offset in its file
/// (a Kafka record: line 0 and its offset in the partition, `unit` kRecord); 0 / -1 when unknown.
struct RecordPosition {
  int64_t line = 0;
  int64_t offset = -1;
  OffsetUnit unit = OffsetUnit::kByte;
};

/// The schema of side output `errors` of every source: `split` (string), `line` (int64, 1-based;
/// NULL when the input has no lines, a Kafka record), `offset` (int64: the line's byte offset in
/// its file, or the Kafka record's offset in its partition; NULL when unknown), `reason` (string),
/// `text` (string).
const Schema& SourceErrorSchema();
/// The row of `error` in `SourceErrorSchema()` (cuts `text` to 200 bytes).
Row SourceErrorRow(const SourceError& error);

/// Where a reader emits the records of one split (or of no particular split). Mirrors Flink's
/// `SourceOutput`. A record gets its timestamp from the job's timestamp assigner; the overload
/// with `timestamp_ms` gives the source's own timestamp (kept when no assigner is configured).
/// Mailbox thread only.
class SourceOutput {
 public:
  virtual ~SourceOutput() = default;
  virtual void Collect(Row row) = 0;
  virtual void Collect(Row row, Timestamp timestamp_ms) = 0;
  /// Like `Collect(row, timestamp_ms)`, but borrows `row` instead of taking it: afterwards `row`
  /// holds the same buffer again when downstream did not move from it (a chained path), or is
  /// empty when it did, so a reader that rebuilds its row only when `row.size()` changed makes no
  /// allocation per record. The default copies.
  virtual void CollectReusing(Row& row, Timestamp timestamp_ms) { Collect(Row(row), timestamp_ms); }
  /// Batch emission, for a reader's `PollBatch`: lends up to `max` records (their rows reused from
  /// earlier batches, so possibly of another layout or empty) for the reader to fill in place,
  /// each with its source timestamp (`SetTimestamp`) or none (`EraseTimestamp`). Empty when this
  /// output lends none (the default; the source operator outside `EmitBatch`): the reader then
  /// emits through `Collect`. Valid until `CollectSlots` or the next `BatchSlots`.
  virtual std::span<StreamRecord> BatchSlots(size_t /*max*/) { return {}; }
  /// Emits the first `n` records of the last `BatchSlots` exactly as `n` calls of
  /// `Collect(row, timestamp)` (or `Collect(row)` for one without a timestamp) would, and returns
  /// how many it took: fewer than `n` when the source must stop reading after one of them (it
  /// began waiting for watermark alignment), and the reader then goes on with the first record not
  /// taken, as if it had not been polled. Precondition: 1 <= n <= the span's size.
  virtual size_t CollectSlots(size_t n) { return n; }
  virtual void EmitWatermark(Watermark watermark) = 0;
  virtual void MarkIdle() = 0;
  virtual void MarkActive() = 0;
};

/// The reader's whole output: itself the output for records of no particular split, plus one
/// output per split, each with its own WatermarkGenerator (Flink's `ReaderOutput` and
/// `createOutputForSplit`). Returned references stay valid until `ReleaseOutputForSplit`.
class ReaderOutput : public SourceOutput {
 public:
  virtual SourceOutput& CreateOutputForSplit(const std::string& split_id) = 0;
  virtual void ReleaseOutputForSplit(const std::string& split_id) = 0;
  /// Counts `error` and sends it to the side output `errors`.
  virtual void EmitError(const SourceError& error) = 0;
};

/// What a reader may use of its task. Borrowed; valid while the reader lives.
class SourceReaderContext {
 public:
  virtual ~SourceReaderContext() = default;
  virtual int subtask_index() const = 0;
  virtual int parallelism() const = 0;
  virtual ProcessingTimeService& processing_time() = 0;
  /// Asks to be polled again once processing time reaches `time_ms` (pacing). Under the virtual
  /// clock this advances the clock; under the system clock it arms a timer.
  virtual void WakeUpAt(Timestamp time_ms) = 0;
  /// Asks to be polled again after `delay` of wall-clock time, at sub-millisecond precision
  /// (a paced source whose records are microseconds apart). The task flushes its output before
  /// it sleeps, so records read before the wait are not held back by it. Under the virtual clock,
  /// and without a task, it is `WakeUpAt` of the next whole millisecond after `delay`.
  virtual void WakeUpAfter(std::chrono::nanoseconds delay) {
    const int64_t ms = (std::max<int64_t>(delay.count(), 0) + 999'999) / 1'000'000;
    WakeUpAt(processing_time().GetCurrentProcessingTime() + ms);
  }
  /// A callable any thread may call (librdkafka's queue callbacks) to wake the task so it polls
  /// the reader again (the role of Flink's FutureCompletingBlockingQueue availability future).
  /// Valid while the reader lives; empty when the reader runs without a task (tests).
  virtual std::function<void()> AvailabilityNotifier() { return {}; }
  /// Whether processing time is the job's virtual clock: time passes only while every task
  /// waits, so a reader fed by other threads that knows records are on their way waits for them
  /// (briefly, returning kMoreAvailable) instead of letting time run ahead of its input.
  virtual bool virtual_clock() const { return false; }
};

/// Reads the splits assigned to one subtask. Mirrors Flink's `SourceReader` (FLIP-27).
/// Mailbox thread only. `PollNext` emits a bounded amount (normally one record) and returns
/// `kNothingAvailable` after arranging a wake-up (`WakeUpAt`) when it has to wait.
class SourceReader {
 public:
  virtual ~SourceReader() = default;
  virtual void Start(SourceReaderContext& context) = 0;
  [[nodiscard]] virtual InputStatus PollNext(ReaderOutput& output) = 0;
  /// Stands for up to `max_polls` (>= 1) consecutive `PollNext` calls, stopping at the first that
  /// would not return `kMoreAvailable`: the same records, timestamps, watermarks and statuses in
  /// the same order, with `*polls` set to the number of calls that returned `kMoreAvailable`
  /// (the result is that of the last call). Readers that can fill many records at once do so
  /// through `SourceOutput::BatchSlots` / `CollectSlots`, which may take fewer records than
  /// offered (the operator must stop between two records); the reader then continues after the
  /// last record taken. Default: one `PollNext`.
  [[nodiscard]] virtual InputStatus PollBatch(ReaderOutput& output, int64_t /*max_polls*/,
                                              int64_t* polls) {
    const InputStatus status = PollNext(output);
    *polls = status == InputStatus::kMoreAvailable ? 1 : 0;
    return status;
  }
  virtual void AddSplits(std::vector<std::unique_ptr<SourceSplit>> splits) = 0;
  /// Whether split `split_id`, given to `AddSplits`, waits in the reader's queue behind another
  /// split and is not read yet: the reader calls `CreateOutputForSplit` for it itself when its
  /// reading begins. The SourceOperator creates no output (no watermark generator) for a queued
  /// split when it is assigned, so a split not started does not hold the watermark back, as in
  /// Flink, where FileSource's enumerator hands a reader its next split only when the reader asks
  /// for one. Asked right after each `AddSplits` and restore. Default: false (every assigned
  /// split's output is created at assignment, as Flink's SourceOperator does).
  virtual bool IsSplitQueued(const std::string& /*split_id*/) const { return false; }
  /// No split will be added any more; once the current ones are read, PollNext ends input.
  virtual void NotifyNoMoreSplits() = 0;
  /// Watermark alignment: stop / restart reading these splits. Readers that cannot pause ignore it.
  virtual void PauseOrResumeSplits(const std::vector<std::string>& /*pause*/,
                                   const std::vector<std::string>& /*resume*/) {}
  virtual void Close() {}
  /// The splits this reader holds, each with its position after the last record it emitted
  /// (Flink's `SourceReader#snapshotState`), finished splits excluded. Called on the mailbox thread
  /// between two `PollNext`s, at a checkpoint barrier. Restoring = `AddSplits` of these splits
  /// (via `Source::RestoreSplit`) to a fresh reader.
  /// Default (until every reader implements it): throws `Error`, failing the checkpoint.
  virtual std::vector<std::unique_ptr<SourceSplit>> SnapshotState(int64_t /*checkpoint_id*/) {
    throw Error("this source reader cannot be snapshotted");
  }
  /// Checkpoint `checkpoint_id` completed (Flink's `notifyCheckpointComplete`; Kafka commits
  /// offsets here). Default: nothing.
  virtual void NotifyCheckpointComplete(int64_t /*checkpoint_id*/) {}
  /// Reports the reader's progress into `out` (mailbox thread, every few hundred ms): per split
  /// `split.<id>.records` (records emitted) and, for sources that read bytes,
  /// `split.<id>.bytes` and `split.<id>.lines`. Default: nothing.
  virtual void CollectMetrics(MetricsWriter& /*out*/) const {}
  /// Where the record being emitted was read: called by the source operator inside a
  /// `SourceOutput::Collect` of this reader (a record without a timestamp is reported with its
  /// line). Not meaningful elsewhere. Default: unknown.
  virtual RecordPosition CurrentRecordPosition() { return {}; }
};

/// Bookkeeping shared by readers of a known set of splits: whether more splits can come, and which
/// splits watermark alignment has paused (`PauseOrResumeSplits`). Derived readers check
/// `IsPaused(id)` before reading a split and `no_more_splits()` before ending input.
/// Mailbox thread only.
class SplitReaderBase : public SourceReader {
 public:
  void NotifyNoMoreSplits() override { no_more_splits_ = true; }
  void PauseOrResumeSplits(const std::vector<std::string>& pause,
                           const std::vector<std::string>& resume) override {
    paused_.insert(pause.begin(), pause.end());
    for (const std::string& id : resume) {
      paused_.erase(id);
    }
  }

 protected:
  bool IsPaused(const std::string& split_id) const { return paused_.count(split_id) > 0; }
  bool AnyPaused() const { return !paused_.empty(); }
  bool no_more_splits() const { return no_more_splits_; }

 private:
  bool no_more_splits_ = false;
  std::set<std::string> paused_;  // split ids paused for watermark alignment
};

/// A source: its record schema, its splits and a reader per subtask. Mirrors Flink's `Source`
/// (the enumerator role is `CreateSplits` plus the static assignment in `SplitEnumerator`).
/// Immutable after construction; shared by all subtasks.
class Source {
 public:
  virtual ~Source() = default;
  virtual const Schema& schema() const = 0;
  virtual std::vector<std::unique_ptr<SourceSplit>> CreateSplits() const = 0;
  virtual std::unique_ptr<SourceReader> CreateReader(int subtask_index) const = 0;
  /// Reads a split written by `SourceSplit::WriteTo` (of a split of this source). Errors:
  /// `StateCorrupt`. Default (until every source implements it): throws `StateCorrupt`.
  virtual std::unique_ptr<SourceSplit> RestoreSplit(StateReader& /*reader*/) const {
    throw StateCorrupt("this source cannot restore splits");
  }
};

/// Assigns splits to readers. Mirrors Flink's `SplitEnumerator` for bounded, known split sets:
/// split i goes to reader i mod parallelism, then every reader is told there are no more.
class SplitEnumerator {
 public:
  static std::vector<std::unique_ptr<SourceSplit>> SplitsFor(const Source& source,
                                                             int subtask_index, int parallelism);
};

}  // namespace tidemark

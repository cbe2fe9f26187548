#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/rocksdb_spec.h"
#include "runtime/core/stream_record.h"
#include "runtime/core/watermark.h"
#include "runtime/io/wakeup.h"
#include "runtime/state/state_serializer.h"
#include "runtime/task/metrics_writer.h"
#include "runtime/task/watermark_trace.h"
#include "runtime/time/processing_time_service.h"

namespace tidemark {

/// A run of records handed along a chain in one call: `size` pointers to records the caller owns
/// (a source's batch, a channel's batch). The callee may modify the records, move from them, and
/// reorder or shrink the pointer array itself (a filter compacts it in place, keeping order, and
/// passes the survivors on); after the call the caller must not rely on the array's contents.
/// Mirrors what Flink's runtime does per buffer and DuckDB per `DataChunk`: the per-call costs
/// (virtual dispatch, counters, cancel checks) are paid once per batch, not once per record.
///
/// `storage` (optional) lets a callee take the whole batch without touching each record: when set,
/// `*storage` is the caller's vector that holds the records, and the batch is all of it in order
/// (`records[i] == &(*storage)[i]` for every `i < size`, `size == storage->size()`), with no other
/// record of it in use by the caller. A callee that passes the batch on unchanged in order keeps
/// it; one that drops or reorders records may leave it set, since a taker checks the order first
/// (a single-channel RecordWriter, which then swaps the vector with a recycled one of as many
/// records whose rows the caller overwrites or discards). After the call the caller must not read
/// the records through the old pointers: the memory may belong to another thread by then.
/// Callers that build a batch themselves leave it null.
/// Value type over borrowed memory; the mailbox thread only.
struct RecordBatch {
  StreamRecord** records = nullptr;
  size_t size = 0;
  std::vector<StreamRecord>* storage = nullptr;

  StreamRecord& operator[](size_t i) const { return *records[i]; }
};

/// Where an operator emits. Inside a chain the next operator is called directly; at the end of a
/// task the output batches records into the outgoing channels. Mirrors Flink's `Output`.
/// Ownership: owned by the OperatorChain; operators borrow it for their lifetime.
/// Threading: the task's mailbox thread only.
class Output {
 public:
  virtual ~Output() = default;
  /// Emits a record on the main output. The callee may move from `record`.
  virtual void Collect(StreamRecord& record) = 0;
  /// Emits every record of `batch` on the main output, in order; the callee may change `batch`
  /// (see RecordBatch). Equivalent to `Collect` on each record in turn (the default does exactly
  /// that); a task's output hands the whole batch to the next operator's `ProcessBatch`.
  virtual void CollectBatch(RecordBatch& batch) {
    for (size_t i = 0; i < batch.size; ++i) {
      Collect(*batch.records[i]);
    }
  }
  /// Emits a record on the side output named `tag` (Flink's OutputTag); a tag nobody consumes
  /// drops the record (the caller counts it).
  virtual void CollectSide(std::string_view tag, StreamRecord& record) = 0;
  virtual void EmitWatermark(Watermark watermark) = 0;
  virtual void EmitWatermarkStatus(WatermarkStatus status) = 0;
};

/// What an operator gets at `Open`: identity, its output and processing time.
/// Pointers are borrowed and stay valid until after `Close`.
struct OperatorContext {
  std::string name;       ///< operator id from the job, e.g. "windows"
  int subtask_index = 0;  ///< 0-based
  int parallelism = 1;
  Output* output = nullptr;                          ///< never null after Open
  ProcessingTimeService* processing_time = nullptr;  ///< never null after Open
  int64_t auto_watermark_interval_ms = 200;          ///< pipeline.auto-watermark-interval; 0 = off
  /// The job's watermark trace and where this operator runs (`tidemark run --trace`); off (null
  /// trace) unless asked for. Operators with event-time state of their own (a source's splits,
  /// alignment) record it; the task records every operator's input and output watermarks.
  TraceContext trace;
  /// pipeline.max-parallelism: the number of key groups (runtime/state/key_groups.h); the
  /// subtask owns `KeyGroupRangeForOperator(max_parallelism, parallelism, subtask_index)`.
  int max_parallelism = 128;
  /// The task's wake-up (thread-safe `Signal`): a source whose input arrives on another thread
  /// (librdkafka's fetch threads) signals it so the sleeping task polls again. Null in tests
  /// that build operators without a task.
  Wakeup* wakeup = nullptr;
  /// Processing time is the job's virtual clock (`pipeline.clock: virtual`): time passes only
  /// when every task waits, so a source that knows input is on its way waits for it instead.
  bool virtual_clock = false;
  /// `pipeline.finished-input: max` (Flink's behaviour): a finished input counts as an input at
  /// watermark MAX. False (the default, design.md): a finished input leaves the minimum. Operators
  /// that combine several inputs themselves (two-input operators) apply the same rule.
  bool finished_input_counts_as_max = false;
  /// `pipeline.state-backend`: "heap" or "rocksdb" (keyed state of the operators that support
  /// it on local disk, runtime/state/rocksdb_keyed_store.h); `rocksdb` its options.
  std::string state_backend = "heap";
  RocksDbSpec rocksdb;
  /// The task restores a checkpoint or savepoint, so `InitializeState` follows `Open` (with a
  /// reader when the checkpoint holds this operator's state), also in a job without
  /// `checkpointing:`. An operator that would otherwise set up output in `Open` (a plain file
  /// sink truncating its file) leaves that to `InitializeState`.
  bool restoring = false;
};

/// A stream operator. Mirrors Flink's `StreamOperator` / `OneInputStreamOperator` /
/// `TwoInputStreamOperator` (the `input` argument is 0 for the first/only input, 1 for the second).
///
/// Lifecycle: `Open` -> `ProcessElement` / `ProcessWatermark` / `ProcessWatermarkStatus` /
/// `EndInput` -> `Finish` -> `Close`. `Close` is also called after a failure (without `Finish`).
/// Threading: all calls on the owning task's mailbox thread; no locks needed for operator state.
/// Errors: throwing `tidemark::Error` (or any std::exception) fails the task and the job.
class StreamOperator {
 public:
  virtual ~StreamOperator() = default;

  virtual void Open(const OperatorContext& context) { context_ = context; }
  virtual void ProcessElement(StreamRecord& record, int input) = 0;
  /// Processes every record of `batch` (all from input `input`), in order, exactly as that many
  /// `ProcessElement` calls would: same output, same side outputs, same state. The default makes
  /// those calls; stateless operators override it with a loop that emits the batch onwards with
  /// one `Output::CollectBatch`, so a chain makes one virtual call per operator per batch.
  /// The operator may change `batch` (see RecordBatch). Watermarks, statuses, barriers and end of
  /// input never fall inside a batch: the task splits batches at them.
  virtual void ProcessBatch(RecordBatch& batch, int input) {
    for (size_t i = 0; i < batch.size; ++i) {
      ProcessElement(*batch.records[i], input);
    }
  }
  /// Default: forward. Operators with event-time timers fire every timer <= the watermark first,
  /// then forward it (Flink's AbstractStreamOperator#processWatermark order).
  virtual void ProcessWatermark(Watermark watermark, int /*input*/) {
    output().EmitWatermark(watermark);
  }
  /// Default: forward.
  virtual void ProcessWatermarkStatus(WatermarkStatus status, int /*input*/) {
    output().EmitWatermarkStatus(status);
  }
  /// Input `input` has ended (Flink's BoundedOneInput#endInput). Called after the final MAX
  /// watermark.
  virtual void EndInput(int /*input*/) {}
  /// All input ended; flush buffered results.
  virtual void Finish() {}
  /// Releases resources; called once, also on failure.
  virtual void Close() {}

  /// Writes the operator's state at a checkpoint barrier: keyed state and timers per key group,
  /// buffered records, whatever a restore needs to continue as if uninterrupted (Flink's
  /// `StreamOperator#snapshotState`). Called on the mailbox thread after every element before the
  /// barrier was processed and before any after it. Default: stateless, writes nothing.
  virtual void SnapshotState(StateSnapshotContext& /*context*/) {}
  /// Restores what `SnapshotState` wrote (Flink's `initializeState`). Called once, after `Open` and
  /// before the first element, watermark or timer; on a fresh start with `!is_restored()`.
  /// Errors: `StateCorrupt` for bytes it cannot read. Default: nothing to restore.
  virtual void InitializeState(StateInitializationContext& /*context*/) {}
  /// Checkpoint `checkpoint_id` completed on every task (Flink's `notifyCheckpointComplete`):
  /// a two-phase-commit sink commits what it pre-committed. Default: nothing.
  virtual void NotifyCheckpointComplete(int64_t /*checkpoint_id*/) {}
  /// Checkpoint `checkpoint_id` was aborted (`notifyCheckpointAborted`). Default: nothing.
  virtual void NotifyCheckpointAborted(int64_t /*checkpoint_id*/) {}

  virtual int NumInputs() const { return 1; }

  /// Reports the operator's own figures (late records, per-split watermarks, ...) into `out`.
  /// Called on the mailbox thread every few hundred ms while the task runs and once at its end;
  /// keep it cheap. Default: nothing.
  virtual void CollectMetrics(MetricsWriter& /*out*/) const {}

  const OperatorContext& context() const { return context_; }
  Output& output() const { return *context_.output; }
  ProcessingTimeService& processing_time() const { return *context_.processing_time; }

 protected:
  OperatorContext context_;
};

}  // namespace tidemark

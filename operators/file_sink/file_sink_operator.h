#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "operators/file_sink/file_committer.h"
#include "operators/file_sink/file_writer.h"
#include "operators/json_row_formatter.h"
#include "runtime/graph/job_resources.h"
#include "runtime/task/stream_operator.h"

namespace tidemark {

/// The exactly-once file sink: `type: file` with `delivery-guarantee: exactly-once`. Mirrors
/// Flink's `FileSink` (a `TwoPhaseCommittingSink` with a row format): its `SinkWriterOperator`
/// (a `FileWriter`) and `CommitterOperator` (a `FileCommitter` and the committables it keeps in
/// state) run as one operator, as Flink chains them.
///
/// Output: `path` is a directory (created mode 0700 if missing; its parents must exist unless
/// `create-dirs`). Each subtask writes its own part files into it, one open at a time:
///   in progress  `.part-<subtask>-<counter>.inprogress.<uuid>`  (hidden; appended to)
///   pending      the same file, closed and fsynced, recorded in a checkpoint
///   finished     `part-<subtask>-<counter>` (prefix and suffix from `part-prefix`/`part-suffix`)
/// Readers of the directory see only finished (non-hidden) files; every line in one is one
/// record, as JSON, written exactly once across failures.
///
/// Two-phase commit: `SnapshotState` (the barrier) rolls the open file if the rolling policy says
/// so, flushes and fsyncs the open file, and records in state the pending files (with the
/// checkpoint id) and the open file's name and valid length (pre-commit);
/// `NotifyCheckpointComplete(n)` renames every pending file of checkpoints <= n to its final
/// name (commit). An aborted checkpoint's files are committed with the next completed one.
/// `InitializeState` from checkpoint n commits n's pending files again (idempotent), truncates
/// the open file back to its checkpointed length and continues it, and deletes this subtask's
/// other in-progress files (written after checkpoint n; the replayed input writes them again).
/// A fresh start (no state: the first run, or a restart before any checkpoint completed) deletes
/// this subtask's in-progress files (uncommitted output of an earlier attempt) and never
/// overwrites: its part counter starts past this subtask's finished files.
///
/// End of input: `Finish` closes the open file for commit. With checkpointing, it is finished
/// by the final checkpoint; without `checkpointing:` every pending file is finished at `Finish`
/// (nothing else could commit it — Flink's CommitterOperator does the same at end of input).
/// A failure (`Close` without `Finish`) commits nothing: hidden files stay for the restore.
///
/// Mailbox thread only; the SinkResult is thread-safe. Errors: `IoError` for file-system
/// failures (the task fails), `StateCorrupt` for unreadable state.
class FileSinkOperator : public StreamOperator {
 public:
  /// `checkpointing`: whether the job checkpoints (decides who commits at end of input).
  FileSinkOperator(SinkSpec spec, Schema schema, std::shared_ptr<SinkResult> result,
                   int subtask_index, bool checkpointing);
  ~FileSinkOperator() override;

  void Open(const OperatorContext& context) override;
  void ProcessElement(StreamRecord& record, int input) override;
  void ProcessWatermark(Watermark watermark, int input) override;
  void ProcessWatermarkStatus(WatermarkStatus, int) override {}
  void Finish() override;
  void Close() override;

  void SnapshotState(StateSnapshotContext& context) override;
  void InitializeState(StateInitializationContext& context) override;
  void NotifyCheckpointComplete(int64_t checkpoint_id) override;

  void CollectMetrics(MetricsWriter& out) const override {
    out.Gauge("currentInputWatermark", watermark_);
  }

  /// Part files this instance renamed (a re-commit that found the file renamed is not counted).
  int64_t num_committed_files() const { return num_committed_; }
  /// Pending part files not yet committed (tests).
  size_t num_pending_files() const { return pending_.size(); }

 private:
  struct Pending {
    int64_t checkpoint_id;  ///< kUnassigned until the next SnapshotState
    FileSinkCommittable committable;
  };
  static constexpr int64_t kUnassigned = INT64_MAX;

  void CreateDirectory();
  void OnBucketCheck(Timestamp time_ms);
  /// Commits every pending file of checkpoints <= `checkpoint_id`.
  void CommitUpTo(int64_t checkpoint_id);
  /// Deletes this subtask's in-progress files but `keep` (may be null); logs each.
  void RemoveInProgressFiles(const std::string* keep, int64_t restored_checkpoint_id);
  /// Highest part counter (+1) of this subtask's files in the directory, finished or hidden.
  int64_t NextFreeCounter() const;
  /// Whether `name` is one of this subtask's in-progress files; sets `counter`.
  bool IsOwnInProgressFile(const std::string& name, int64_t* counter) const;
  bool IsOwnFinishedFile(const std::string& name, int64_t* counter) const;

  SinkSpec spec_;
  Schema schema_;
  std::shared_ptr<SinkResult> result_;
  int subtask_index_;
  bool checkpointing_;
  std::filesystem::path directory_;
  JsonRowFormatter json_;
  std::string line_;  ///< the line being formatted, reused
  std::unique_ptr<FileWriter> writer_;
  std::unique_ptr<FileCommitter> committer_;
  std::vector<Pending> pending_;
  std::optional<ProcessingTimeService::TimerId> timer_;
  Timestamp watermark_ = kMinTimestamp;
  int64_t num_committed_ = 0;
  bool finished_ = false;
};

}  // namespace tidemark

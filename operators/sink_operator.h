#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "config/job_spec.h"
#include "operators/json_row_formatter.h"
#include "runtime/graph/job_resources.h"
#include "runtime/task/stream_operator.h"

namespace tidemark {

/// A sink (Flink's `SinkFunction` role): writes each record it receives and records it in the
/// job's SinkResult (counts, and rows for reports when retained).
///
/// Types: `print` — one line per record to the job's line writer (stdout for `tidemark run`):
/// format `json` (the row as a JSON object) or `fire` (for window results:
/// `>>> FIRE window=[5s,6s) count=3 watermark=9.149s`, using columns window_start, window_end,
/// count and, if present, watermark); `file` — JSON Lines written to `path`, created mode 0600;
/// its directory must exist unless `create_dirs` (then missing ones are made, mode 0700); a
/// missing directory, an unwritable path or a FIFO without a reader fails the job at Open with
/// IoError, and Open never blocks; `collect` — nothing written, only the SinkResult.
///
/// Restart and restore of a `file` sink (delivery-guarantee none, Flink's at-least-once
/// `FileSink` without commit): each checkpoint flushes and fsyncs the file and records its path
/// and length in the sink's state; a restore (a restart from a checkpoint, `--from-checkpoint`,
/// a daemon's resume, a savepoint) truncates the file back to that length and appends, so output
/// a checkpoint covered is never lost and what was written after it is written once again from
/// the replayed input. A fresh start (no restored state) over an existing file follows
/// `write-mode`: overwrite (truncate, the default) or no-overwrite (IoError at open). With
/// checkpointing the file is opened in InitializeState, not Open, so that a restore never
/// truncates it first. A restore whose file is shorter than the recorded length (changed by
/// someone else) fails with NonRecoverableError (no restart can cure it) naming both lengths.
/// Mailbox thread only; the SinkResult and JobResources are thread-safe.
class SinkOperator : public StreamOperator {
 public:
  /// `checkpointing`: whether the job checkpoints (then a file is opened in InitializeState).
  SinkOperator(SinkSpec spec, Schema schema, std::shared_ptr<SinkResult> result,
               JobResources& resources, int subtask_index, bool checkpointing = false);
  ~SinkOperator() override;

  void Open(const OperatorContext& context) override;
  void ProcessElement(StreamRecord& record, int input) override;
  void ProcessWatermark(Watermark watermark, int input) override;
  void ProcessWatermarkStatus(WatermarkStatus, int) override {}
  void Finish() override;
  void Close() override;

  void SnapshotState(StateSnapshotContext& context) override;
  void InitializeState(StateInitializationContext& context) override;

  Timestamp current_watermark() const { return watermark_; }
  /// currentInputWatermark.
  void CollectMetrics(MetricsWriter& out) const override {
    out.Gauge("currentInputWatermark", watermark_);
  }

 private:
  std::string Format(const StreamRecord& record) const;
  /// mkdir -p `dir` with mode 0700; IoError naming `file` and the directory on failure.
  static void CreateDirectories(const std::filesystem::path& dir, const std::string& file);
  /// Opens `path_` for writing: `restored_length` < 0 is a fresh start (write-mode decides an
  /// existing file's fate); otherwise truncates back to it and appends. Never blocks.
  void OpenFile(int64_t restored_length);

  SinkSpec spec_;
  Schema schema_;
  std::shared_ptr<SinkResult> result_;
  JobResources& resources_;
  int subtask_index_;
  bool checkpointing_;
  std::string path_;  ///< file: this subtask's file (`path`, or `path.<subtask>` when parallel)
  JsonRowFormatter json_;
  std::string line_;  ///< the file line being formatted, reused
  std::FILE* file_ = nullptr;
  Timestamp watermark_ = kMinTimestamp;
  int start_slot_ = -1;
  int end_slot_ = -1;
  int count_slot_ = -1;
  int watermark_slot_ = -1;
};

}  // namespace tidemark

#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "operators/file_sink/file_committer.h"
#include "operators/file_sink/rolling_policy.h"
#include "runtime/core/timestamp.h"

namespace tidemark {

/// Names of part files. Mirrors Flink's `OutputFileConfig` (part prefix and suffix): a finished
/// file is `<prefix>-<subtask>-<counter><suffix>` ("part-0-7"), its in-progress file the same
/// name hidden and tagged, `.<prefix>-<subtask>-<counter><suffix>.inprogress.<uuid>`.
struct OutputFileConfig {
  std::string part_prefix = "part";
  std::string part_suffix;
};

/// The open part file as a checkpoint records it, to continue it after a restore. Mirrors Flink's
/// `InProgressFileRecoverable` (the local file system's `ResumeRecoverable`: file and offset).
struct InProgressFileRecoverable {
  std::string in_progress_name;
  std::string final_name;
  int64_t valid_length = 0;        ///< bytes flushed and fsynced at the checkpoint
  Timestamp creation_time_ms = 0;  ///< for the rollover interval
  bool operator==(const InProgressFileRecoverable&) const = default;
};

/// The writing half of the exactly-once file sink (Flink's `FileWriter` with its single
/// `FileWriterBucket` and the row-format `InProgressFileWriter`): appends lines to one hidden
/// in-progress part file in the sink's directory, rolls it by the `DefaultRollingPolicy`, and
/// hands closed (fsynced) part files out as committables at `PrepareCommit`. Writes are buffered
/// (64 KiB) and reach the file at a roll, at `Persist` and when the buffer fills.
/// Part files are made lazily: no record, no file.
/// Not thread-safe: the sink's mailbox thread. Errors: `IoError` on any I/O failure.
class FileWriter {
 public:
  /// `directory` must exist. `part_counter` is the counter of the next part file.
  FileWriter(std::filesystem::path directory, OutputFileConfig names, DefaultRollingPolicy policy,
             int subtask_index, int64_t part_counter);
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  /// Appends `line` (which must end in '\n') to the in-progress file, first rolling it when the
  /// policy says so, opening a new one when there is none.
  void Write(std::string_view line, Timestamp now_ms);
  /// The bucket check timer (Flink's `onProcessingTime`): rolls by rollover / inactivity interval.
  void OnProcessingTime(Timestamp now_ms);
  /// Flink's `prepareCommit`: at a checkpoint (`end_of_input` false) rolls the in-progress file if
  /// the policy rolls on checkpoint; at end of input always closes it. Returns every part file
  /// closed since the last call (rolled by size or time in between, and now), in roll order.
  std::vector<FileSinkCommittable> PrepareCommit(bool end_of_input);
  /// Flushes and fsyncs the in-progress file and returns where it stands; nullopt without one.
  std::optional<InProgressFileRecoverable> Persist();
  /// Continues `file` after a restore: truncates it to `valid_length` (dropping whatever was
  /// written after the checkpoint) and appends from there. `IoError` if it is missing,
  /// `NonRecoverableError` if it is shorter (the same on every restart).
  void ResumeInProgressFile(const InProgressFileRecoverable& file, Timestamp now_ms);
  /// Closes the file descriptor without committing anything (failure, cancel, crash-like end).
  void Close();

  int64_t part_counter() const { return part_counter_; }
  bool has_in_progress_file() const { return fd_ >= 0; }
  /// Name of the in-progress file, empty without one (tests).
  const std::string& in_progress_name() const { return in_progress_.in_progress_name; }
  std::string FinalName(int64_t counter) const;

 private:
  void OpenNewPartFile(Timestamp now_ms);
  void RollPartFile();  // closes the in-progress file for commit
  void FlushBuffer();
  void Sync();

  std::filesystem::path directory_;
  OutputFileConfig names_;
  DefaultRollingPolicy policy_;
  int subtask_index_;
  int64_t part_counter_;
  int fd_ = -1;
  InProgressFileRecoverable in_progress_;    ///< valid while fd_ >= 0
  PartFileInfo info_;                        ///< valid while fd_ >= 0
  std::string buffer_;                       ///< bytes not yet written to fd_
  std::vector<FileSinkCommittable> closed_;  ///< rolled since the last PrepareCommit
};

}  // namespace tidemark

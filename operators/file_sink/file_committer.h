#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace tidemark {

/// A pending part file: closed, fsynced, still under its hidden in-progress name, to be made
/// visible when the checkpoint it belongs to completes. Mirrors Flink's `FileSinkCommittable`
/// (with the local file system's `CommitRecoverable`: temporary file, target file, length).
/// Names are file names inside the sink's directory, never paths.
struct FileSinkCommittable {
  std::string in_progress_name;  ///< ".part-0-3.inprogress.<uuid>"
  std::string final_name;        ///< "part-0-3"
  int64_t size_bytes = 0;        ///< the file's length when it was closed for commit
  bool operator==(const FileSinkCommittable&) const = default;
};

/// Commits pending part files of one sink directory by renaming them to their final names.
/// Mirrors Flink's `FileCommitter` / the local file system's `commitAfterRecovery`: a commit is
/// idempotent — committing a file that was already renamed (a crash between the rename and the
/// sink's own bookkeeping, or a restore that commits the restored committables again) is fine.
/// A finished file is never overwritten: the rename is `RENAME_NOREPLACE`.
/// Not thread-safe; the sink's mailbox thread.
class FileCommitter {
 public:
  explicit FileCommitter(std::filesystem::path directory) : directory_(std::move(directory)) {}

  enum class Outcome { kCommitted, kAlreadyCommitted };

  /// Renames the committable's in-progress file to its final name. An in-progress file longer
  /// than `size_bytes` is truncated to it first (bytes written after it was closed for commit).
  /// Errors: `NonRecoverableError` (the same on every restart) if the in-progress file is
  /// shorter than `size_bytes` (data lost), if both names exist (the final name is another
  /// file), if neither exists (the output was removed since the checkpoint); `IoError` on any
  /// other I/O failure.
  Outcome Commit(const FileSinkCommittable& committable) const;

  /// fsync of the directory, so renames and new files survive a machine crash. `IoError` on
  /// failure.
  void SyncDirectory() const;

  const std::filesystem::path& directory() const { return directory_; }

 private:
  std::filesystem::path directory_;
};

}  // namespace tidemark

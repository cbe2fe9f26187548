#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "runtime/core/errors.h"

namespace tidemark {

/// What the writers below throw: an IoError naming the path, with the failing call's errno
/// (ENOSPC and EDQUOT mean the file system is full).
class FileWriteError : public IoError {
 public:
  FileWriteError(const std::string& what, int error_number)
      : IoError(what), error_number_(error_number) {}
  int error_number() const { return error_number_; }

 private:
  int error_number_;
};

/// Writes `data` to `path` (created mode 0600, truncated) and fsyncs it before returning. Never
/// follows a symbolic link at `path` (O_NOFOLLOW: a link planted there is an error, ELOOP).
/// Throws FileWriteError naming the path on any failure. Any thread (distinct paths).
void WriteFileSynced(const std::filesystem::path& path, std::string_view data);

/// fsyncs directory `dir` so that a rename or a new file in it survives a crash; best effort
/// (a directory that cannot be opened is skipped).
void SyncDirectory(const std::filesystem::path& dir);

/// Replaces `path` atomically: writes `path.tmp` synced, renames it over `path`, syncs the
/// parent directory. A reader sees the old or the new content, never a mix. Throws
/// FileWriteError.
void WriteFileAtomically(const std::filesystem::path& path, std::string_view data);

}  // namespace tidemark

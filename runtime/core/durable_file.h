#pragma once

#include <filesystem>
#include <string_view>

namespace tidemark {

/// Writes `data` to `path` (created mode 0600, truncated) and fsyncs it before returning.
/// Throws Error naming the path on any failure. Any thread (distinct paths).
void WriteFileSynced(const std::filesystem::path& path, std::string_view data);

/// fsyncs directory `dir` so that a rename or a new file in it survives a crash; best effort
/// (a directory that cannot be opened is skipped).
void SyncDirectory(const std::filesystem::path& dir);

/// Replaces `path` atomically: writes `path.tmp` synced, renames it over `path`, syncs the
/// parent directory. A reader sees the old or the new content, never a mix. Throws Error.
void WriteFileAtomically(const std::filesystem::path& path, std::string_view data);

}  // namespace tidemark

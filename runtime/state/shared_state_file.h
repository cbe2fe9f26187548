#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace tidemark {

/// A file of an incremental checkpoint that several checkpoints may share (an SST file of a
/// RocksDB instance): written once under the checkpoint storage's `shared/` directory and
/// referenced by name from every checkpoint whose state holds it. Mirrors the entries Flink's
/// `SharedStateRegistry` counts references to (`IncrementalRemoteKeyedStateHandle`'s shared
/// state). Recorded in `_metadata` beside the state file of the subtask that references it;
/// `CheckpointStorage` deletes it when no retained checkpoint references it any more.
struct SharedStateFile {
  /// Path relative to the checkpoint storage's root (the directory holding `chk-<id>/`), always
  /// `shared/<name>`: a checkpoint directory can be restored wherever its root is.
  std::string path;
  uint64_t size = 0;      ///< bytes
  uint64_t checksum = 0;  ///< XXH3-64 of the whole file
  friend bool operator==(const SharedStateFile&, const SharedStateFile&) = default;
};

/// What a stateful operator may use to take an incremental checkpoint instead of a canonical
/// one (`StateSnapshotContext::incremental`; set for checkpoints of a job with
/// `checkpointing.incremental: true`, never for savepoints). The operator writes new shared
/// files under `root / "shared"` and appends every shared file its state references, new or
/// not, to `referenced`. Ownership: the task owns it for the duration of `SnapshotState`.
struct IncrementalSnapshotTarget {
  std::filesystem::path root;  ///< the checkpoint storage's directory
  std::vector<SharedStateFile> referenced;
};

/// The size in bytes and the XXH3-64 of the regular file at `path`, read in 1 MiB chunks
/// (bounded memory). Throws `Error` naming `path` when it cannot be read. Any thread.
std::pair<uint64_t, uint64_t> SizeAndChecksumOf(const std::filesystem::path& path);

}  // namespace tidemark

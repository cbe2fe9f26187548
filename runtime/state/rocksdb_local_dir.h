#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "config/rocksdb_spec.h"

namespace tidemark {

/// The file every RocksDB instance directory tidemark makes holds (`WriteRocksDbInstanceMarker`),
/// so a later process removes only directories tidemark made (`RocksDbInstanceMarkerText`).
inline constexpr const char* kRocksDbInstanceMarker = "TIDEMARK-ROCKSDB-INSTANCE";

/// The marker's text for process `pid` of this host and pid namespace: "tidemark rocksdb
/// instance\npid <pid>\nhost <hostname>\npidns <readlink of /proc/self/ns/pid>\n".
std::string RocksDbInstanceMarkerText(pid_t pid);

/// Writes the marker into instance directory `dir` (made by `RocksDbKeyedStore::InstanceDir`,
/// `tidemark-rocksdb-<pid>-...`), naming this process. Throws `Error` naming `dir` when it cannot.
void WriteRocksDbInstanceMarker(const std::filesystem::path& dir);

/// Whether process `pid` exists (`kill(pid, 0)` does not fail with ESRCH).
bool ProcessIsAlive(pid_t pid);

/// Removes the RocksDB instance directories under `root` that a dead process left (a kill -9 or a
/// crash skips the operator's close, which removes its own). A directory is removed only when all
/// hold: its name is `tidemark-rocksdb-<pid>-...`, it is a directory (not a symlink), it holds the
/// marker, a regular file with `RocksDbInstanceMarkerText(pid)` (the same pid, written on this
/// host in this pid namespace), that pid is not this process's and
/// `is_alive(pid)` is false. Anything else under `root` is never touched. Logs one warning per
/// directory removed (logger "state") and returns them. Never throws: an unreadable `root` or
/// entry is skipped. `is_alive` defaults to `ProcessIsAlive` (tests pass their own).
/// Cost: one directory listing of `root` and one small file read per candidate.
std::vector<std::filesystem::path> CollectDeadRocksDbInstanceDirs(
    const std::filesystem::path& root, const std::function<bool(pid_t)>& is_alive = {});

/// At a job's start on the RocksDB backend: `spec.localdir` (empty: the system temp directory)
/// made when missing and checked to be a writable directory, then `CollectDeadRocksDbInstanceDirs`
/// over it (once per directory per process). Returns the directory. Throws `NonRecoverableError`
/// naming the key `pipeline.rocksdb.localdir` and the path when it is not a directory, cannot be
/// made, or is not writable (a restart would meet the same directory).
std::filesystem::path PrepareRocksDbLocalDir(const RocksDbSpec& spec);

}  // namespace tidemark

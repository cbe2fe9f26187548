#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "config/diagnostic.h"
#include "config/job_spec.h"

namespace tidemark {

/// `path` itself when it is at most `max_bytes` long; else its first and last `max_bytes / 2`
/// bytes around "...(<n> bytes)...", so a 100 KB path written into a message stays one short
/// line. Pure; any thread.
std::string AbbreviatedPath(std::string_view path, size_t max_bytes = 160);

/// Why `path` cannot serve as a RocksDB local directory (`pipeline.rocksdb.localdir`) or a
/// checkpoint directory (`checkpointing.dir`), judged without changing anything: "" when it is a
/// writable directory or could be made; else one of "is <n> bytes long, more than the system's
/// limit of 4095 for a path", "has a name of <n> bytes, more than the system's limit of 255",
/// "exists and is not a directory", "cannot be created: <ancestor> exists and is not a
/// directory", "is on the proc/sys pseudo file system (<ancestor>)", "is on a read-only file
/// system (<ancestor>)", "is not writable (<ancestor>)". `<ancestor>` is `path` itself or its
/// nearest existing ancestor (`AbbreviatedPath`). Used by the job loader (compile time, absolute
/// paths) and at a job's start. Reads the file system only; never throws.
std::string RocksDbLocalDirProblem(const std::filesystem::path& path);

/// What each directory key's directory is for, in its error messages.
inline constexpr std::string_view kRocksDbLocalDirUse =
    "RocksDB makes each subtask's instance directory in it";
inline constexpr std::string_view kCheckpointDirUse = "checkpoints are written into it";

/// "" when `dir` (a relative one taken from this process's working directory) can serve as a
/// directory (`RocksDbLocalDirProblem`); else "'<dir>' <problem>; <use>, so choose a writable
/// directory", `dir` shortened by `AbbreviatedPath`. Never throws.
std::string DirectoryProblemMessage(const std::string& dir, std::string_view use);

/// The problems of `spec`'s directories as this process would meet them when it runs the job
/// (`tidemark run`, and `validate`, which checks as `run` would): `pipeline.rocksdb.localdir`
/// (with `state-backend: rocksdb`) and `checkpointing.dir`, a relative path taken from this
/// process's working directory, each a diagnostic at its value ("<key>: '<path>' <problem>; ...").
/// The loader reports absolute paths already, so only relative ones are judged here; a daemon's
/// worker judges them when the job starts. Reads the file system only; never throws.
std::vector<Diagnostic> WorkingDirectoryProblems(const JobSpec& spec);

}  // namespace tidemark

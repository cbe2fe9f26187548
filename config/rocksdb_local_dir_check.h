#pragma once

#include <filesystem>
#include <string>

namespace tidemark {

/// Why `path` cannot serve as a RocksDB local directory (`pipeline.rocksdb.localdir`), judged
/// without changing anything: "" when it is a writable directory or could be made; else one of
/// "exists and is not a directory", "cannot be created: <ancestor> exists and is not a
/// directory", "is on the proc/sys pseudo file system (<ancestor>)", "is on a read-only file
/// system (<ancestor>)", "is not writable (<ancestor>)". `<ancestor>` is `path` itself or its
/// nearest existing ancestor. Used by the job loader (compile time, absolute paths) and at a
/// job's start. Reads the file system only; never throws.
std::string RocksDbLocalDirProblem(const std::filesystem::path& path);

}  // namespace tidemark

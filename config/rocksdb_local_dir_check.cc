#include "config/rocksdb_local_dir_check.h"

#include <climits>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <system_error>
#include <unistd.h>

#include <fmt/format.h>

namespace tidemark {
namespace {
// linux/magic.h: PROC_SUPER_MAGIC, SYSFS_MAGIC. Neither holds directories a process may make.
constexpr long kProcSuperMagic = 0x9fa0;
constexpr long kSysfsMagic = 0x62656572;
}  // namespace

std::string AbbreviatedPath(std::string_view path, size_t max_bytes) {
  if (path.size() <= max_bytes) {
    return std::string(path);
  }
  const size_t half = max_bytes / 2;
  return fmt::format("{}...({} bytes)...{}", path.substr(0, half), path.size(),
                     path.substr(path.size() - half));
}

std::string RocksDbLocalDirProblem(const std::filesystem::path& path) {
  // Longer than the kernel takes (ENAMETOOLONG): nothing of it can be made, whatever exists.
  if (path.native().size() >= PATH_MAX) {
    return fmt::format("is {} bytes long, more than the system's limit of {} for a path",
                       path.native().size(), PATH_MAX - 1);
  }
  for (const std::filesystem::path& part : path) {
    if (part.native().size() > NAME_MAX) {
      return fmt::format("has a name of {} bytes, more than the system's limit of {}",
                         part.native().size(), NAME_MAX);
    }
  }
  std::error_code ec;
  std::filesystem::path existing = path;
  // The nearest part of the path that exists: the directory itself, or where it would be made.
  while (!std::filesystem::exists(existing, ec)) {
    if (!existing.has_parent_path() || existing.parent_path() == existing) {
      return "";  // nothing of it exists (a relative path): left to the job's start
    }
    existing = existing.parent_path();
  }
  if (!std::filesystem::is_directory(existing, ec)) {
    if (existing == path) {
      return "exists and is not a directory";
    }
    return "cannot be created: " + AbbreviatedPath(existing.string()) +
           " exists and is not a directory";
  }
  struct statfs fs {};
  if (::statfs(existing.c_str(), &fs) == 0 && (static_cast<long>(fs.f_type) == kProcSuperMagic ||
                                               static_cast<long>(fs.f_type) == kSysfsMagic)) {
    return "is on the proc/sys pseudo file system (" + AbbreviatedPath(existing.string()) + ")";
  }
  struct statvfs vfs {};
  if (::statvfs(existing.c_str(), &vfs) == 0 && (vfs.f_flag & ST_RDONLY) != 0) {
    return "is on a read-only file system (" + AbbreviatedPath(existing.string()) + ")";
  }
  if (::access(existing.c_str(), W_OK | X_OK) != 0) {
    return "is not writable (" + AbbreviatedPath(existing.string()) + ")";
  }
  return "";
}

std::string DirectoryProblemMessage(const std::string& dir, std::string_view use) {
  std::error_code ec;
  const std::filesystem::path resolved = std::filesystem::absolute(dir, ec);
  const std::string problem = RocksDbLocalDirProblem(ec ? std::filesystem::path(dir) : resolved);
  if (problem.empty()) {
    return "";
  }
  return fmt::format("'{}' {}; {}, so choose a writable directory", AbbreviatedPath(dir), problem,
                     use);
}

std::vector<Diagnostic> WorkingDirectoryProblems(const JobSpec& spec) {
  std::vector<Diagnostic> out;
  auto check = [&](const std::string& dir, const SourceLocation& at, const char* key,
                   std::string_view use) {
    if (dir.empty() || std::filesystem::path(dir).is_absolute()) {
      return;
    }
    if (std::string message = DirectoryProblemMessage(dir, use); !message.empty()) {
      out.push_back(Diagnostic{at.file, at.line, at.column, key, std::move(message)});
    }
  };
  if (spec.pipeline.state_backend == "rocksdb") {
    check(spec.pipeline.rocksdb.localdir,
          spec.pipeline.key_locations.Of("rocksdb.localdir", spec.pipeline.location),
          "pipeline.rocksdb.localdir", kRocksDbLocalDirUse);
  }
  if (spec.checkpointing) {
    check(spec.checkpointing->dir,
          spec.checkpointing->key_locations.Of("dir", spec.checkpointing->location),
          "checkpointing.dir", kCheckpointDirUse);
  }
  return out;
}

}  // namespace tidemark

#include "config/rocksdb_local_dir_check.h"

#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <system_error>
#include <unistd.h>

namespace tidemark {
namespace {
// linux/magic.h: PROC_SUPER_MAGIC, SYSFS_MAGIC. Neither holds directories a process may make.
constexpr long kProcSuperMagic = 0x9fa0;
constexpr long kSysfsMagic = 0x62656572;
}  // namespace

std::string RocksDbLocalDirProblem(const std::filesystem::path& path) {
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
    return "cannot be created: " + existing.string() + " exists and is not a directory";
  }
  struct statfs fs {};
  if (::statfs(existing.c_str(), &fs) == 0 && (static_cast<long>(fs.f_type) == kProcSuperMagic ||
                                               static_cast<long>(fs.f_type) == kSysfsMagic)) {
    return "is on the proc/sys pseudo file system (" + existing.string() + ")";
  }
  struct statvfs vfs {};
  if (::statvfs(existing.c_str(), &vfs) == 0 && (vfs.f_flag & ST_RDONLY) != 0) {
    return "is on a read-only file system (" + existing.string() + ")";
  }
  if (::access(existing.c_str(), W_OK | X_OK) != 0) {
    return "is not writable (" + existing.string() + ")";
  }
  return "";
}

}  // namespace tidemark

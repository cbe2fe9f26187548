#include "operators/file_sink/file_committer.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

#include <fmt/format.h>

#include "runtime/core/errors.h"
#include "runtime/core/non_recoverable_error.h"

namespace tidemark {
namespace {

bool Exists(const std::filesystem::path& p, struct stat* st) {
  return ::lstat(p.c_str(), st) == 0;
}

}  // namespace

FileCommitter::Outcome FileCommitter::Commit(const FileSinkCommittable& c) const {
  const std::filesystem::path src = directory_ / c.in_progress_name;
  const std::filesystem::path dst = directory_ / c.final_name;
  struct stat src_st {};
  struct stat dst_st {};
  const bool has_src = Exists(src, &src_st);
  const bool has_dst = Exists(dst, &dst_st);
  // A part file gone, taken or shorter than its checkpoint recorded is the same on every
  // restart from that checkpoint: no restart can cure it.
  if (!has_src) {
    if (has_dst) {
      return Outcome::kAlreadyCommitted;
    }
    throw NonRecoverableError(fmt::format(
        "cannot commit part file '{}': neither it nor its in-progress file '{}' exists (removed "
        "since the checkpoint?)",
        dst.string(), src.string()));
  }
  if (has_dst) {
    throw NonRecoverableError(fmt::format(
        "cannot commit part file '{}': a file of that name already exists", dst.string()));
  }
  if (src_st.st_size < c.size_bytes) {
    throw NonRecoverableError(
        fmt::format("cannot commit part file '{}': in-progress file '{}' has {} bytes, "
                    "the checkpoint recorded {}",
                    dst.string(), src.string(), src_st.st_size, c.size_bytes));
  }
  if (src_st.st_size > c.size_bytes && ::truncate(src.c_str(), c.size_bytes) != 0) {
    throw IoError(fmt::format("cannot truncate in-progress file '{}': {}", src.string(),
                              std::generic_category().message(errno)));
  }
  if (::renameat2(AT_FDCWD, src.c_str(), AT_FDCWD, dst.c_str(), RENAME_NOREPLACE) != 0) {
    const int err = errno;
    if (err != EINVAL && err != ENOSYS) {
      throw IoError(fmt::format("cannot commit part file '{}': {}", dst.string(),
                                std::generic_category().message(err)));
    }
    // A file system without RENAME_NOREPLACE: the existence check above has to do.
    if (::rename(src.c_str(), dst.c_str()) != 0) {
      throw IoError(fmt::format("cannot commit part file '{}': {}", dst.string(),
                                std::generic_category().message(errno)));
    }
  }
  return Outcome::kCommitted;
}

void FileCommitter::SyncDirectory() const {
  const int fd = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    throw IoError(fmt::format("cannot open sink directory '{}': {}", directory_.string(),
                              std::generic_category().message(errno)));
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) {
    throw IoError(fmt::format("cannot sync sink directory '{}': {}", directory_.string(),
                              std::generic_category().message(err)));
  }
}

}  // namespace tidemark

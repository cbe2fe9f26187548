#include "runtime/core/durable_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <system_error>
#include <unistd.h>

#include <fmt/format.h>

#include "runtime/core/errors.h"

namespace tidemark {

void WriteFileSynced(const std::filesystem::path& path, std::string_view data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    const int err = errno;
    throw FileWriteError(
        fmt::format("cannot write '{}': {}", path.string(), std::generic_category().message(err)),
        err);
  }
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      throw FileWriteError(
          fmt::format("cannot write '{}': {}", path.string(), std::generic_category().message(err)),
          err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    throw FileWriteError(
        fmt::format("cannot write '{}': {}", path.string(), std::generic_category().message(err)),
        err);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    throw FileWriteError(
        fmt::format("cannot write '{}': {}", path.string(), std::generic_category().message(err)),
        err);
  }
}

void SyncDirectory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

void WriteFileAtomically(const std::filesystem::path& path, std::string_view data) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  WriteFileSynced(tmp, data);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    throw FileWriteError(fmt::format("cannot rename '{}' to '{}': {}", tmp.string(), path.string(),
                                     std::generic_category().message(err)),
                         err);
  }
  SyncDirectory(path.parent_path());
}

}  // namespace tidemark

#include "config/regular_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

#include <fmt/format.h>

namespace tidemark {
const char* FileKind(mode_t mode) {
  if (S_ISREG(mode)) {
    return "a regular file";
  }
  if (S_ISDIR(mode)) {
    return "a directory";
  }
  if (S_ISFIFO(mode)) {
    return "a FIFO";
  }
  if (S_ISCHR(mode)) {
    return "a character device";
  }
  if (S_ISBLK(mode)) {
    return "a block device";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  return "not a regular file";
}

int OpenRegularFile(const std::string& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *error = std::generic_category().message(errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *error = std::generic_category().message(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    const std::string kind = FileKind(st.st_mode);
    *error = kind == "not a regular file" ? "it is not a regular file"
             : kind == "a directory"      ? "it is a directory"
                                          : fmt::format("it is {}, not a regular file", kind);
    ::close(fd);
    return -1;
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) {
    (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  return fd;
}

std::optional<std::string> ReadRegularFile(const std::string& path, int64_t max_bytes,
                                           std::string* error) {
  const int fd = OpenRegularFile(path, error);
  if (fd < 0) {
    return std::nullopt;
  }
  std::string text;
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      *error = std::generic_category().message(errno);
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) {
      break;
    }
    text.append(buffer, static_cast<size_t>(n));
    if (static_cast<int64_t>(text.size()) > max_bytes) {
      *error = fmt::format("it is larger than {} bytes", max_bytes);
      ::close(fd);
      return std::nullopt;
    }
  }
  ::close(fd);
  return text;
}

}  // namespace tidemark

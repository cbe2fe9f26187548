#include "tools/daemon/daemon_paths.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <system_error>
#include <unistd.h>

#include <fmt/format.h>

namespace tidemark {

std::string DefaultRuntimeDir() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");  // NOLINT(concurrency-mt-unsafe): read-only
  if (xdg != nullptr && xdg[0] == '/') {
    return std::string(xdg) + "/tidemark";
  }
  return fmt::format("/tmp/tidemark-{}", geteuid());
}

std::string DefaultSocketPath() {
  return DefaultRuntimeDir() + "/tidemarkd.sock";
}

std::string DefaultStateDir() {
  const char* xdg = std::getenv("XDG_STATE_HOME");  // NOLINT(concurrency-mt-unsafe): read-only
  if (xdg != nullptr && xdg[0] == '/') {
    return std::string(xdg) + "/tidemark";
  }
  const char* home = std::getenv("HOME");  // NOLINT(concurrency-mt-unsafe): read-only
  if (home != nullptr && home[0] == '/') {
    return std::string(home) + "/.local/state/tidemark";
  }
  return fmt::format("/tmp/tidemark-state-{}", geteuid());
}

int LockStateDirectory(const std::string& dir) {
  const std::string path = dir + "/lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    throw DaemonSetupError(
        fmt::format("cannot open '{}': {}", path, std::generic_category().message(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    ::close(fd);
    std::string holder(buf, n > 0 ? static_cast<size_t>(n) : 0);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) {
      holder.pop_back();
    }
    throw DaemonSetupError(
        fmt::format("another tidemarkd{} uses the state directory '{}'; stop it or pass "
                    "another --state-dir",
                    holder.empty() ? "" : " (pid " + holder + ")", dir));
  }
  const std::string pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The lock holds regardless; the pid is only for the message above.
  }
  return fd;
}

void EnsurePrivateDirectory(const std::string& dir) {
  const std::filesystem::path p(dir);
  if (p.has_parent_path() && !std::filesystem::exists(p.parent_path())) {
    EnsurePrivateDirectory(p.parent_path().string());
  }
  const bool created = ::mkdir(dir.c_str(), 0700) == 0;
  if (!created && errno != EEXIST) {
    throw DaemonSetupError(fmt::format("cannot create directory '{}': {}", dir,
                                       std::generic_category().message(errno)));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    throw DaemonSetupError(
        fmt::format("cannot stat '{}': {}", dir, std::generic_category().message(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    throw DaemonSetupError(
        fmt::format("'{}' is not a directory (a symlink or a file is not accepted)", dir));
  }
  if (st.st_uid != geteuid()) {
    throw DaemonSetupError(
        fmt::format("'{}' belongs to uid {}, not to this user (uid {}); choose another "
                    "place with --socket",
                    dir, st.st_uid, geteuid()));
  }
  if ((st.st_mode & 0777) != 0700 && !created) {
    throw DaemonSetupError(
        fmt::format("'{}' has mode {:04o}, not 0700: the daemon keeps its files only in a "
                    "directory private to its user and does not change an existing one's "
                    "mode (chmod 700 '{}' if it is yours alone, or choose another)",
                    dir, st.st_mode & 0777, dir));
  }
  // Created now, with the umask's bits maybe cleared: 0700 exactly.
  if ((st.st_mode & 0777) != 0700 && ::chmod(dir.c_str(), 0700) != 0) {
    throw DaemonSetupError(fmt::format("cannot make '{}' private (chmod 0700): {}", dir,
                                       std::generic_category().message(errno)));
  }
}

int OpenDaemonFile(const std::string& path, bool append) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK;
  if (append) {
    flags |= O_APPEND;
  } else {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      throw DaemonSetupError(
          fmt::format("cannot replace '{}': {}", path, std::generic_category().message(errno)));
    }
    flags |= O_EXCL;
  }
  const int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0) {
    const int err = errno;
    throw DaemonSetupError(fmt::format(
        "cannot open '{}': {}{}", path, std::generic_category().message(err),
        err == ELOOP ? " (a symbolic link: the daemon does not follow one there)" : ""));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    ::close(fd);
    throw DaemonSetupError(fmt::format(
        "cannot open '{}': it is not a regular file of this user (uid {})", path, ::geteuid()));
  }
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0) {
    (void)::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  }
  if ((st.st_mode & 0777) != 0600) {
    (void)::fchmod(fd, 0600);  // the descriptor's own file, never a link's target
  }
  return fd;
}

bool IsUnixSocketLive(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    return false;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return false;
  }
  const bool live = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return live;
}

std::string ReadTokenFile(const std::string& path, bool create) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT || !create) {
      throw DaemonSetupError(fmt::format("cannot read token file '{}': {}", path,
                                         std::generic_category().message(errno)));
    }
    std::random_device rd;
    std::string token;
    for (int i = 0; i < 4; ++i) {
      token += fmt::format("{:08x}", rd());
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      throw DaemonSetupError(fmt::format("cannot create token file '{}': {}", path,
                                         std::generic_category().message(errno)));
    }
    const std::string text = token + "\n";
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    if (!ok) {
      throw DaemonSetupError(fmt::format("cannot write token file '{}'", path));
    }
    return token;
  }
  if (!S_ISREG(st.st_mode)) {
    throw DaemonSetupError(fmt::format("token file '{}' is not a regular file", path));
  }
  if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    throw DaemonSetupError(
        fmt::format("token file '{}' must belong to this user and have mode 0600 (chmod 600 '{}')",
                    path, path));
  }
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token = ss.str();
  const auto first = token.find_first_not_of(" \t\r\n");
  const auto last = token.find_last_not_of(" \t\r\n");
  if (first == std::string::npos) {
    throw DaemonSetupError(fmt::format("token file '{}' is empty", path));
  }
  return token.substr(first, last - first + 1);
}

}  // namespace tidemark

#include "runtime/state/rocksdb_local_dir.h"

#include <cerrno>
#include <csignal>
#include <fstream>
#include <iterator>
#include <set>
#include <system_error>
#include <unistd.h>

#include <fmt/format.h>

#include "config/rocksdb_local_dir_check.h"
#include "runtime/core/errors.h"
#include "runtime/core/logging.h"
#include "runtime/core/mutex.h"
#include "runtime/core/non_recoverable_error.h"

namespace tidemark {
namespace {

constexpr std::string_view kInstancePrefix = "tidemark-rocksdb-";
constexpr std::string_view kMarkerHead = "tidemark rocksdb instance\npid ";

/// The pid an instance directory's name carries ("tidemark-rocksdb-<pid>-..."), or -1.
pid_t PidOfName(const std::string& name) {
  if (name.rfind(kInstancePrefix, 0) != 0) {
    return -1;
  }
  size_t i = kInstancePrefix.size();
  int64_t pid = 0;
  const size_t start = i;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9' && i - start < 10) {
    pid = pid * 10 + (name[i] - '0');
    ++i;
  }
  if (i == start || i >= name.size() || name[i] != '-' || pid <= 0 || pid > 0x3fffffff) {
    return -1;
  }
  return static_cast<pid_t>(pid);
}

}  // namespace

std::string RocksDbInstanceMarkerText(pid_t pid) {
  // The host and the pid namespace make a pid mean one process: a local directory shared by
  // two hosts (NFS) or by containers is only ever collected by the host and namespace that wrote
  // it.
  static const std::string kWhere = [] {
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) != 0) {
      host[0] = '\0';
    }
    char ns[128] = {};
    const ssize_t n = ::readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1);
    return fmt::format("host {}\npidns {}\n", host,
                       n > 0 ? std::string(ns, static_cast<size_t>(n)) : "?");
  }();
  return fmt::format("{}{}\n{}", kMarkerHead, pid, kWhere);
}

void WriteRocksDbInstanceMarker(const std::filesystem::path& dir) {
  std::ofstream out(dir / kRocksDbInstanceMarker, std::ios::binary | std::ios::trunc);
  out << RocksDbInstanceMarkerText(::getpid());
  out.close();
  if (!out) {
    throw IoError(fmt::format("rocksdb state backend: cannot write {}",
                              (dir / kRocksDbInstanceMarker).string()));
  }
}

bool ProcessIsAlive(pid_t pid) {
  // EPERM: it exists and belongs to another user.
  return ::kill(pid, 0) == 0 || errno != ESRCH;
}

std::vector<std::filesystem::path> CollectDeadRocksDbInstanceDirs(
    const std::filesystem::path& root, const std::function<bool(pid_t)>& is_alive) {
  std::vector<std::filesystem::path> removed;
  std::error_code ec;
  std::filesystem::directory_iterator it(root, ec);
  if (ec) {
    return removed;
  }
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) {
      break;
    }
    const std::filesystem::path dir = it->path();
    const pid_t pid = PidOfName(dir.filename().string());
    if (pid < 0 || pid == ::getpid()) {
      continue;
    }
    // symlink_status: a symlink named like an instance is not followed, let alone removed.
    if (!std::filesystem::is_directory(std::filesystem::symlink_status(dir, ec)) ||
        !std::filesystem::is_regular_file(
            std::filesystem::symlink_status(dir / kRocksDbInstanceMarker, ec))) {
      continue;
    }
    std::ifstream in(dir / kRocksDbInstanceMarker, std::ios::binary);
    std::string text(std::istreambuf_iterator<char>(in), {});
    if (text != RocksDbInstanceMarkerText(pid)) {
      continue;  // not made by tidemark for this pid on this host and pid namespace: never touched
    }
    if (is_alive ? is_alive(pid) : ProcessIsAlive(pid)) {
      continue;
    }
    std::error_code rm;
    std::filesystem::remove_all(dir, rm);
    if (rm) {
      GetLogger("state")->warn(
          "cannot remove the RocksDB instance directory {} left by dead process {}: {}",
          dir.string(), pid, rm.message());
      continue;
    }
    // warn, not info: it says an earlier process was killed or crashed, and what was removed.
    GetLogger("state")->warn(
        "removed the RocksDB instance directory {} left by process {}, which is no longer running "
        "(killed or crashed before it closed its state)",
        dir.string(), pid);
    removed.push_back(dir);
  }
  return removed;
}

std::filesystem::path PrepareRocksDbLocalDir(const RocksDbSpec& spec) {
  std::filesystem::path dir = spec.localdir.empty() ? std::filesystem::temp_directory_path()
                                                    : std::filesystem::path(spec.localdir);
  auto fail = [&](const std::string& why) {
    throw NonRecoverableError(fmt::format(
        "pipeline.rocksdb.localdir (Flink's state.backend.rocksdb.localdir): '{}' {}; choose "
        "a writable directory",
        AbbreviatedPath(dir.string()), why));
  };
  if (std::string problem = RocksDbLocalDirProblem(dir); !problem.empty()) {
    fail(problem);
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec)) {
    fail("cannot be created: " + (ec ? ec.message() : std::string("not a directory")));
  }
  static Mutex mu;
  static std::set<std::string> collected;
  {
    MutexLock lock(mu);
    if (!collected.insert(std::filesystem::absolute(dir, ec).string()).second) {
      return dir;
    }
  }
  CollectDeadRocksDbInstanceDirs(dir);
  return dir;
}

}  // namespace tidemark

#pragma once

// Helpers for tests that drive the built `tidemarkd` and `tidemark` binaries: scratch directories,
// polling, a daemon child process with its readiness handshake, the CLI. Test-only,
// single-threaded.

#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <signal.h>
#include <sstream>
#include <stdlib.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>

namespace tidemark::testing {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Polls `done` until it holds or `timeout` passed: for effects in another process (an exit, a
/// file, a state) that give the test nothing to wait on.
template <class Predicate>
bool Eventually(Predicate done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

/// True when `pid` no longer runs (gone, or a zombie).
inline bool ProcessGone(int pid) {
  if (::kill(pid, 0) != 0) {
    return errno == ESRCH;
  }
  const std::string stat = ReadFile(fmt::format("/proc/{}/stat", pid));
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || stat.compare(paren + 2, 1, "Z") == 0;
}

/// The built tools sit in <build>/tools, a test in <build>/tests.
inline std::filesystem::path ToolsDir() {
  return std::filesystem::canonical("/proc/self/exe").parent_path().parent_path() / "tools";
}

/// A scratch directory, private like the daemon's default one; removed with its contents.
class TempDir {
 public:
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "tidemark-daemon-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// `tidemarkd ARGS...` as a child process, started by the constructor, which returns once the
/// daemon printed its ready line (`ready()` false when it exited first). stderr goes to /dev/null
/// (its log file has everything). The destructor SIGKILLs it if it still runs.
class DaemonProcess {
 public:
  /// `wrapper` (optional): a command that execs the daemon's command line given as its last
  /// arguments (e.g. `unshare ... sh -c '...; exec "$@"' sh`); found on PATH.
  explicit DaemonProcess(const std::vector<std::string>& args,
                         const std::vector<std::string>& wrapper = {}) {
    int out_pipe[2];
    if (::pipe(out_pipe) != 0) {
      return;
    }
    std::string bin = (ToolsDir() / "tidemarkd").string();
    std::vector<std::string> all = wrapper;
    all.push_back(bin);
    all.insert(all.end(), args.begin(), args.end());
    if (!wrapper.empty()) {
      bin = wrapper.front();
    }
    std::vector<char*> argv;
    for (std::string& a : all) {
      argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out_pipe[1], 1);
      ::close(out_pipe[0]);
      const int null_fd = ::open("/dev/null", O_WRONLY);
      ::dup2(null_fd, 2);
      ::execvp(bin.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(out_pipe[1]);
    char c = 0;
    while (::read(out_pipe[0], &c, 1) == 1 && c != '\n') {
      line_ += c;
    }
    ::close(out_pipe[0]);
    ready_ = line_.rfind("tidemarkd: listening on ", 0) == 0;
  }
  ~DaemonProcess() {
    if (pid_ > 0) {
      Kill(SIGKILL);
    }
  }
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  bool ready() const { return ready_; }
  const std::string& ready_line() const { return line_; }
  int pid() const { return pid_; }

  /// Sends `signal` and reaps the process; its wait status.
  int Kill(int signal) {
    int status = 0;
    ::kill(pid_, signal);
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  int pid_ = -1;
  bool ready_ = false;
  std::string line_;
};

struct CliResult {
  int rc = -1;
  std::string out;
  std::string err;
};

/// Runs the built `tidemark` CLI against the daemon at `socket`; `scratch` holds its output files.
inline CliResult RunCli(const std::string& socket, const std::string& args,
                        const std::string& scratch) {
  const std::string out = scratch + "/cli.out";
  const std::string err = scratch + "/cli.err";
  const std::string cmd = fmt::format("'{}' --socket '{}' {} >'{}' 2>'{}'",
                                      (ToolsDir() / "tidemark").string(), socket, args, out, err);
  const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe)
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(out), ReadFile(err)};
}

}  // namespace tidemark::testing

// `tidemarkd`: the local daemon. Runs submitted YAML jobs concurrently and serves the REST API
// (tools/daemon/rest_server.h) on a private Unix socket, optionally on loopback TCP with a
// bearer token.
//
// Exit codes: 0 after SIGTERM / SIGINT (running jobs stopped and recorded SUSPENDED in the state
// directory for the next start to resume, sinks closed, socket removed);
// 2 usage or setup error (a live daemon holds the socket, the directory is not private, ...).

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <malloc.h>
#include <mutex>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/base_sink.h>

#include "config/job_loader.h"
#include "dashboard_assets.h"
#include "runtime/core/logging.h"
#include "tools/daemon/daemon_paths.h"
#include "tools/daemon/job_manager.h"
#include "tools/daemon/rest_server.h"
#include "tools/tidemarkd/local_job_factory.h"
#include "tools/tidemarkd/self_check.h"

namespace {

/// A spdlog sink over a descriptor the daemon opened itself (OpenDaemonFile: no symlink
/// followed); spdlog's file sinks open the name again. Owns `fd`. Thread-safe (base_sink's mutex).
class FdSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit FdSink(int fd) : fd_(fd) {}
  ~FdSink() override { ::close(fd_); }
  FdSink(const FdSink&) = delete;
  FdSink& operator=(const FdSink&) = delete;

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    size_t done = 0;
    while (done < formatted.size()) {
      const ssize_t n = ::write(fd_, formatted.data() + done, formatted.size() - done);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        return;  // a full disk loses log lines, never the daemon
      }
      done += static_cast<size_t>(n);
    }
  }
  void flush_() override {}

 private:
  int fd_;
};

}  // namespace

namespace {

/// Raises the soft open-files limit to the hard one: every connection and job channel is a file
/// descriptor, and 1,000 idle connections must not starve job submissions.
void RaiseFileLimit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
}

/// Caps glibc's malloc arenas (default 8 per core) unless MALLOC_ARENA_MAX says otherwise. Each job
/// thread would otherwise get an arena of its own; the finished jobs' summaries kept in the history
/// end up scattered over them and pin partly used pages that malloc_trim cannot return. Measured
/// with tools/dev/daemon_load.sh (Release, 2 cores, 1,000 jobs from 16 clients): RSS after the load
/// +17% over the full-history baseline with 16 arenas, +2% with 4, at the same throughput.
void CapMallocArenas() {
  if (std::getenv("MALLOC_ARENA_MAX") ==
      nullptr) {  // NOLINT(concurrency-mt-unsafe): before threads
    ::mallopt(M_ARENA_MAX, 4);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tidemark;
  if (IsWorkerInvocation(argc, argv)) {
    // One job's worker process, started by a running tidemarkd (tools/daemon/worker.h).
    return WorkerMain(argc, argv, MakeLocalDaemonJob);
  }
  CapMallocArenas();
  CLI::App app{
      "tidemarkd: the tidemark daemon. Runs YAML jobs submitted with `tidemark submit` and serves\n"
      "a REST API (POST/GET /jobs, GET /jobs/{id}, DELETE /jobs/{id}, /metrics, /overview) and a "
      "web dashboard at /."};
  std::string socket_path;
  std::string listen;
  bool allow_remote = false;
  std::string token_file;
  std::string log_file;
  std::string pid_file;
  bool daemonize = false;
  size_t max_running = 64;
  size_t max_finished = 200;
  size_t max_body = 1u << 20;
  size_t max_connections = 4096;
  std::string idle_timeout = "30s";
  std::string finished_job_ttl = "1h";
  bool skip_self_check = false;
  std::string worker_memory_limit = "4g";
  std::string state_dir;
  app.add_option("--socket", socket_path,
                 fmt::format("Unix socket to listen on (default {})", DefaultSocketPath()));
  app.add_option(
      "--listen", listen,
      "also listen on TCP HOST:PORT, loopback only unless --allow-remote; every request then "
      "needs the bearer token of --token-file");
  app.add_flag("--allow-remote", allow_remote,
               "allow --listen on a non-loopback address (token still required)");
  app.add_option(
      "--token-file", token_file,
      "bearer token file (mode 0600) for --listen; created with a random token if missing "
      "(default <runtime dir>/token)");
  app.add_option("--log-file", log_file, "daemon log file (default <runtime dir>/tidemarkd.log)");
  app.add_flag("--daemonize", daemonize, "detach and run in the background once listening");
  app.add_option(
      "--pid-file", pid_file,
      "write the daemon's pid here (with --daemonize the default is <runtime dir>/tidemarkd.pid, "
      "or SOCKET.pid beside a --socket)");
  app.add_option("--max-running-jobs", max_running,
                 "submissions beyond this many running jobs get HTTP 429")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  app.add_option("--max-finished-jobs", max_finished,
                 "finished jobs kept for list / status (oldest dropped)");
  app.add_option(
         "--finished-job-ttl", finished_job_ttl,
         "a finished job leaves the history this long after it ended, e.g. 10min; 0s keeps it "
         "until --max-finished-jobs pushes it out (Flink's jobstore.expiration-time)")
      ->capture_default_str();
  app.add_flag("--no-self-check", skip_self_check,
               "skip the start-up self-check (the split-mode two-split experiment, a few ms)");
  app.add_option(
         "--worker-memory-limit", worker_memory_limit,
         "address-space limit (RLIMIT_AS) of each job's worker process, e.g. 512m, 4g; 0: none. "
         "A job over it ends FAILED naming the limit; each task thread reserves 8 MiB of it")
      ->capture_default_str();
  app.add_option(
      "--state-dir", state_dir,
      fmt::format(
          "the job registry and every job's checkpoints, kept across restarts: after a crash "
          "(even kill -9) the daemon lists the ended jobs again and resumes the running ones "
          "from their latest completed checkpoint; savepoints default to DIR/savepoints "
          "(default {})",
          DefaultStateDir()));
  app.add_option("--max-body-bytes", max_body, "largest accepted request body (job YAML)")
      ->check(CLI::Range(size_t{1}, size_t{1} << 30));
  app.add_option("--max-connections", max_connections,
                 "open connections beyond this are closed at once")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  app.add_option("--idle-timeout", idle_timeout, "close a connection idle this long, e.g. 30s");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::string duration_error;
  const auto idle_ms = ParseDurationMs(idle_timeout, &duration_error);
  if (!idle_ms || *idle_ms <= 0) {
    std::cerr << fmt::format("tidemarkd: --idle-timeout: {}\n",
                             idle_ms ? "must be > 0" : duration_error);
    return 2;
  }
  std::string size_error;
  const std::optional<int64_t> memory_limit = ParseMemorySize(worker_memory_limit, &size_error);
  if (!memory_limit) {
    std::cerr << fmt::format("tidemarkd: --worker-memory-limit: {}\n", size_error);
    return 2;
  }
  const auto ttl_ms = ParseDurationMs(finished_job_ttl, &duration_error);
  if (!ttl_ms || *ttl_ms < 0) {
    std::cerr << fmt::format("tidemarkd: --finished-job-ttl: {}\n",
                             ttl_ms ? "must be >= 0" : duration_error);
    return 2;
  }

  const bool default_socket = socket_path.empty();
  const std::string runtime_dir = DefaultRuntimeDir();
  RestServerOptions server_options;
  server_options.static_assets = {
      {"/", {"text/html; charset=utf-8", kDashboardHtml}},
      {"/index.html", {"text/html; charset=utf-8", kDashboardHtml}},
      {"/dashboard.js", {"text/javascript; charset=utf-8", kDashboardJs}},
      {"/dashboard.css", {"text/css; charset=utf-8", kDashboardCss}}};
  try {
    if (default_socket) {
      EnsurePrivateDirectory(runtime_dir);
      socket_path = DefaultSocketPath();
    }
    server_options.socket_path = socket_path;
    if (!listen.empty()) {
      const size_t colon = listen.rfind(':');
      if (colon == std::string::npos) {
        std::cerr << "tidemarkd: --listen expects HOST:PORT, e.g. 127.0.0.1:8081\n";
        return 2;
      }
      server_options.tcp_host = listen.substr(0, colon);
      if (server_options.tcp_host.size() > 2 && server_options.tcp_host.front() == '[') {
        server_options.tcp_host =
            server_options.tcp_host.substr(1, server_options.tcp_host.size() - 2);
      }
      // The whole port, digits only: std::stoi would take "80abc" as 80 and "-5" as "no TCP".
      const std::string port = listen.substr(colon + 1);
      int port_number = -1;
      const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), port_number);
      if (port.empty() || ec != std::errc() || end != port.data() + port.size() ||
          port_number < 0 || port_number > 65535) {
        std::cerr << fmt::format(
            "tidemarkd: --listen: bad port '{}' (0 to 65535; 0 picks a free one), "
            "expected HOST:PORT, e.g. 127.0.0.1:8081\n",
            port);
        return 2;
      }
      server_options.tcp_port = port_number;
      server_options.allow_non_loopback = allow_remote;
      if (token_file.empty()) {
        EnsurePrivateDirectory(runtime_dir);
        token_file = runtime_dir + "/token";
      }
      server_options.bearer_token = ReadTokenFile(token_file, true);
    }
  } catch (const DaemonSetupError& e) {
    std::cerr << "tidemarkd: " << e.what() << "\n";
    return 2;
  }
  if (state_dir.empty()) {
    state_dir = DefaultStateDir();
  }
  std::error_code state_ec;
  state_dir = std::filesystem::absolute(state_dir, state_ec).lexically_normal().string();
  if (!state_dir.empty() && state_dir.back() == '/' && state_dir.size() > 1) {
    state_dir.pop_back();
  }
  int state_lock_fd = -1;
  try {
    EnsurePrivateDirectory(state_dir);
    // Held until this process exits (kill -9 included): one daemon per state directory.
    state_lock_fd = LockStateDirectory(state_dir);
  } catch (const DaemonSetupError& e) {
    std::cerr << "tidemarkd: --state-dir: " << e.what() << "\n";
    return 2;
  }
  server_options.max_body_bytes = max_body;
  server_options.max_connections = max_connections;
  server_options.idle_timeout = std::chrono::milliseconds(*idle_ms);

  // Daemonize before any thread exists. The parent waits until the child listens (or failed), so
  // `tidemarkd --daemonize && tidemark submit ...` works.
  int ready_pipe[2] = {-1, -1};
  if (daemonize) {
    if (::pipe(ready_pipe) != 0) {
      std::perror("tidemarkd: pipe");
      return 2;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("tidemarkd: fork");
      return 2;
    }
    if (pid > 0) {
      ::close(ready_pipe[1]);
      char status = '2';
      const bool got = ::read(ready_pipe[0], &status, 1) == 1;
      return got && status == '0' ? 0 : 2;
    }
    ::close(ready_pipe[0]);
    ::setsid();
    // The lock passed to this child with its descriptor; the pid in it is now this process's.
    const std::string pid_text = std::to_string(::getpid()) + "\n";
    if (::ftruncate(state_lock_fd, 0) != 0 ||
        ::pwrite(state_lock_fd, pid_text.data(), pid_text.size(), 0) < 0) {
      // Only the "another tidemarkd (pid N)" message reads it.
    }
    if (pid_file.empty()) {
      // Beside the socket, like the log file: with --socket the runtime directory may not exist.
      pid_file = default_socket ? runtime_dir + "/tidemarkd.pid" : socket_path + ".pid";
    }
  }

  // Logs: the `daemon` logger goes to stderr and to the log file; job lines are tagged [job ID].
  if (std::getenv("TM_LOG_LEVEL") == nullptr) {  // NOLINT(concurrency-mt-unsafe): before threads
    SetLogLevel(spdlog::level::info);
  }
  auto log = GetLogger("daemon");
  if (daemonize) {
    // Detached, the log file is the only log: nothing but the readiness line below (stdout) and
    // setup errors (stderr) may reach the terminal the daemon was started from.
    log->sinks().clear();
  }
  if (log_file.empty() && default_socket) {
    log_file = runtime_dir + "/tidemarkd.log";
  } else if (log_file.empty()) {
    log_file = socket_path + ".log";
  }
  // The log names jobs and their failures: 0600, like the token file, even where the socket's
  // directory is shared; opened once, without following a link planted there (the sink writes
  // to this descriptor, never opens the name again).
  try {
    const int fd = OpenDaemonFile(log_file, /*append=*/true);
    log->sinks().push_back(std::make_shared<FdSink>(fd));
    log->flush_on(spdlog::level::info);
  } catch (const DaemonSetupError& e) {
    std::cerr << fmt::format("tidemarkd: cannot open log file: {}\n", e.what());
    return 2;
  }

  // SIGTERM / SIGINT are taken synchronously by this thread (sigwait); every other thread inherits
  // the blocked mask. Broken connections must not kill the daemon.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  RaiseFileLimit();

  JobManagerOptions job_options;
  job_options.max_running_jobs = max_running;
  job_options.max_finished_jobs = max_finished;
  job_options.finished_job_ttl = std::chrono::milliseconds(*ttl_ms);
  job_options.state_dir = state_dir;
  // Every job runs in a worker process of its own: this binary again, in its --worker mode.
  WorkerOptions worker_options;
  worker_options.memory_limit_bytes = static_cast<uint64_t>(*memory_limit);
  JobFactory factory = LocalWorkerJobFactory(
      std::shared_ptr<const OperatorRegistry>(&BuiltinRegistry(), [](const OperatorRegistry*) {}),
      worker_options);
  // The self-check runs the experiment as every job runs, in a worker: a daemon whose workers
  // cannot start fails here, before its first user's submission.
  if (!skip_self_check) {
    const SelfCheckResult check = RunSelfCheck(factory);
    if (!check.ok) {
      std::cerr << "tidemarkd: self-check failed (the two-split experiment): " << check.detail
                << "\n";
      log->error("self-check failed (the two-split experiment): {}", check.detail);
      return 1;
    }
    log->info("self-check passed in {} ms: {}", check.elapsed_ms, check.detail);
    malloc_trim(0);  // compiling the job left freed memory behind
  }

  JobManager jobs(std::move(factory), job_options);
  RestServer server(jobs, server_options);
  try {
    server.Start();
  } catch (const DaemonSetupError& e) {
    std::cerr << "tidemarkd: " << e.what() << "\n";
    log->error("{}", e.what());
    return 2;
  }
  if (!pid_file.empty()) {
    try {
      const int fd = OpenDaemonFile(pid_file, /*append=*/false);
      const std::string pid_text = fmt::format("{}\n", ::getpid());
      if (::write(fd, pid_text.data(), pid_text.size()) != static_cast<ssize_t>(pid_text.size())) {
        log->error("cannot write pid file '{}': {}", pid_file,
                   std::generic_category().message(errno));
      }
      ::close(fd);
    } catch (const DaemonSetupError& e) {
      std::cerr << "tidemarkd: --pid-file: " << e.what() << "\n";
      log->error("{}", e.what());
      return 2;
    }
  }
  std::string where = "unix:" + socket_path;
  if (server.tcp_port() >= 0) {
    where += fmt::format(" and http://{}:{} (token in {})", server_options.tcp_host,
                         server.tcp_port(), token_file);
  }
  log->info("tidemarkd {} ready on {}; log file {}; state directory {}", ::getpid(), where,
            log_file, state_dir);
  std::cout << "tidemarkd: listening on " << where << std::endl;
  if (daemonize) {
    const int null_fd = ::open("/dev/null", O_RDWR);
    ::dup2(null_fd, 0);
    ::dup2(null_fd, 1);
    ::dup2(null_fd, 2);
    ::close(null_fd);
    const char ok = '0';
    [[maybe_unused]] auto n = ::write(ready_pipe[1], &ok, 1);
    ::close(ready_pipe[1]);
  }

  int sig = 0;
  sigwait(&signals, &sig);
  log->info("received {}: cancelling {} running job(s) and shutting down",
            sig == SIGTERM ? "SIGTERM" : "SIGINT", jobs.running_jobs());
  server.Stop();
  jobs.Shutdown();
  if (!pid_file.empty()) {
    std::filesystem::remove(pid_file);
  }
  log->info("tidemarkd stopped");
  return 0;
}

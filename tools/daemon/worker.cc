#include "tools/daemon/worker.h"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <malloc.h>
#include <new>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <system_error>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>

#include "runtime/core/logging.h"
#include "runtime/core/thread_entry.h"
#include "runtime/graph/job_graph.h"
#include "tools/daemon/worker_protocol.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): posix_spawn's envp

namespace tidemark {
namespace {

constexpr int kWorkerFd = 3;  // the socketpair's worker end, in the worker

const char* StateName(JobState s) {
  return ToString(s);
}

std::optional<JobState> StateFromName(const std::string& s) {
  for (JobState st : {JobState::kFinished, JobState::kFailed, JobState::kCanceled}) {
    if (s == ToString(st)) {
      return st;
    }
  }
  return std::nullopt;
}

// ---- worker side -----------------------------------------------------------------------------

std::atomic<bool> g_memory_exhausted{false};
char* g_memory_reserve = nullptr;  // freed at the first failed allocation, to report with

void OnOutOfMemory() {
  g_memory_exhausted.store(true);
  if (g_memory_reserve != nullptr) {
    std::free(g_memory_reserve);  // NOLINT: the reserve came from malloc
    g_memory_reserve = nullptr;
    return;  // operator new retries, and may now succeed
  }
  std::set_new_handler(nullptr);
  throw std::bad_alloc();
}

/// The worker's end of the socketpair: frames from several threads, one at a time.
class WorkerChannel {
 public:
  explicit WorkerChannel(int fd) : fd_(fd) {}

  bool Send(const nlohmann::json& message) {
    std::lock_guard<std::mutex> lock(mu_);
    return WriteWorkerFrame(fd_, message);
  }

  /// Print-sink lines are batched: flushed at 64 KiB, on every metrics tick and at the end.
  void AddLine(const std::string& line) {
    std::unique_lock<std::mutex> lock(lines_mu_);
    lines_.push_back(line);
    lines_bytes_ += line.size();
    if (lines_bytes_ >= (64u << 10)) {
      FlushLocked(lock);
    }
  }

  void FlushLines() {
    std::unique_lock<std::mutex> lock(lines_mu_);
    FlushLocked(lock);
  }

 private:
  void FlushLocked(std::unique_lock<std::mutex>& lock) {
    if (lines_.empty()) {
      return;
    }
    nlohmann::json frame{{"t", "log"}, {"lines", std::move(lines_)}};
    lines_.clear();
    lines_bytes_ = 0;
    // Sent while still holding lines_mu_: the lines reach the daemon in the order they were
    // written.
    Send(frame);
    (void)lock;
  }

  const int fd_;
  std::mutex mu_;
  std::mutex lines_mu_;
  std::vector<std::string> lines_;
  size_t lines_bytes_ = 0;
};

}  // namespace

// ---- memory sizes ----------------------------------------------------------------------------

std::string FormatMemorySize(uint64_t bytes) {
  static constexpr std::pair<int, const char*> kUnits[] = {
      {40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}};
  for (const auto& [shift, name] : kUnits) {
    const uint64_t unit = uint64_t{1} << shift;
    if (bytes >= unit && bytes % unit == 0) {
      return fmt::format("{} {}", bytes >> shift, name);
    }
  }
  return fmt::format("{} bytes", bytes);
}

// ---- daemon side -----------------------------------------------------------------------------

WorkerDaemonJob::WorkerDaemonJob(std::string yaml, std::string file_name,
                                 JobDescription description, JobResources::LineWriter line_writer,
                                 WorkerOptions options, DaemonRunOptions run)
    : yaml_(std::move(yaml)),
      file_name_(std::move(file_name)),
      description_(std::move(description)),
      line_writer_(std::move(line_writer)),
      options_(std::move(options)),
      run_(std::move(run)),
      memory_limit_bytes_(options_.memory_limit_bytes) {}

void WorkerDaemonJob::TriggerSavepoint(const DaemonSavepointRequest& request,
                                       std::function<void(DaemonSavepointResult)> done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == JobState::kRunning && !cancel_requested_) {
      const int64_t id = ++next_savepoint_;
      outbound_.push_back(nlohmann::json{{"t", "savepoint"},
                                         {"request", id},
                                         {"dir", request.dir},
                                         {"stop", request.stop},
                                         {"drain", request.drain}});
      pending_savepoints_.emplace(id, std::move(done));
      return;
    }
  }
  done(DaemonSavepointResult{false, "", "the job is not running"});
}

void WorkerDaemonJob::ExplainLive(const std::string& operator_id,
                                  std::function<void(std::optional<std::string>)> done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == JobState::kRunning && !cancel_requested_) {
      const int64_t id = ++next_explain_;
      outbound_.push_back(
          nlohmann::json{{"t", "explain"}, {"request", id}, {"operator", operator_id}});
      pending_explains_.emplace(id, std::move(done));
      return;
    }
  }
  done(std::nullopt);
}

nlohmann::json WorkerDaemonJob::CheckpointStatsJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  return checkpoints_;
}

std::optional<std::string> WorkerDaemonJob::LimitMemory(uint64_t bytes) {
  if (bytes == 0) {
    return std::string("memory-limit must be above 0");
  }
  if (options_.memory_limit_bytes > 0 && bytes > options_.memory_limit_bytes) {
    return fmt::format(
        "memory-limit {} is over the daemon's limit of {} (tidemarkd --worker-memory-limit)",
        FormatMemorySize(bytes), FormatMemorySize(options_.memory_limit_bytes));
  }
  std::lock_guard<std::mutex> lock(mu_);
  memory_limit_bytes_ = bytes;
  return std::nullopt;
}

JobState WorkerDaemonJob::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

std::string WorkerDaemonJob::failure_cause() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cause_;
}

std::vector<SubtaskMetrics> WorkerDaemonJob::Metrics() const {
  std::lock_guard<std::mutex> lock(mu_);
  return metrics_;
}

std::optional<std::string> WorkerDaemonJob::ReportLine() const {
  std::lock_guard<std::mutex> lock(mu_);
  return report_;
}

std::map<std::string, std::string> WorkerDaemonJob::WatermarkExplanations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return explanations_;
}

bool WorkerDaemonJob::created() const {
  std::lock_guard<std::mutex> lock(mu_);
  return created_;
}

int WorkerDaemonJob::worker_pid() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pid_;
}

void WorkerDaemonJob::Cancel() {
  // The supervisor sends the cancel frame within one poll interval (50 ms): this thread (often the
  // daemon's I/O thread) never writes to a worker.
  std::lock_guard<std::mutex> lock(mu_);
  cancel_requested_ = true;
}

void WorkerDaemonJob::SetEnded(JobState state, std::string cause) {
  std::lock_guard<std::mutex> lock(mu_);
  state_ = state;
  cause_ = std::move(cause);
  pid_ = -1;
}

JobState WorkerDaemonJob::Run() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = JobState::kRunning;
  }
  int sv[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    SetEnded(JobState::kFailed, fmt::format("cannot start the worker process: socketpair: {}",
                                            std::generic_category().message(errno)));
    return JobState::kFailed;
  }
  // The worker gets its end as fd 3 and nothing else of the daemon's (sockets of clients, the log
  // file, other workers' channels), an empty signal mask and a process group of its own, so a
  // Ctrl-C meant for a foreground daemon reaches the daemon only (which then cancels the jobs).
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, sv[1], kWorkerFd);
  posix_spawn_file_actions_addclosefrom_np(&actions, kWorkerFd + 1);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  const std::string fd_arg = std::to_string(kWorkerFd);
  const std::string ppid_arg = std::to_string(::getpid());
  // argv[0] names the binary (ps shows it), not the /proc/self/exe link that started it.
  std::error_code ec;
  std::string argv0 = std::filesystem::canonical(options_.executable, ec).string();
  if (ec) {
    argv0 = options_.executable;
  }
  std::vector<char*> argv = {argv0.data(), const_cast<char*>("--worker"),
                             const_cast<char*>(fd_arg.c_str()), const_cast<char*>(ppid_arg.c_str()),
                             nullptr};
  pid_t pid = -1;
  const int rc =
      ::posix_spawn(&pid, options_.executable.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    SetEnded(JobState::kFailed,
             fmt::format("cannot start the worker process '{}': {}", options_.executable,
                         std::generic_category().message(rc)));
    return JobState::kFailed;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    pid_ = pid;
  }
  const JobState state = Supervise(sv[0], pid);
  ::close(sv[0]);
  return state;
}

bool WorkerDaemonJob::OnFrame(const std::string& payload, std::string* error) {
  const nlohmann::json j = nlohmann::json::parse(payload, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("t") || !j["t"].is_string()) {
    *error = "not a JSON object with a type";
    return false;
  }
  const std::string t = j["t"].get<std::string>();
  try {
    if (t == "log") {
      for (const auto& line : j.at("lines")) {
        line_writer_(line.get<std::string>());
      }
      return true;
    }
    if (t == "savepoint") {
      const int64_t id = j.at("request").get<int64_t>();
      DaemonSavepointResult result{j.at("ok").get<bool>(), j.value("path", ""),
                                   j.value("error", "")};
      std::function<void(DaemonSavepointResult)> done;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = pending_savepoints_.find(id);
        if (it == pending_savepoints_.end()) {
          *error = fmt::format("an answer to savepoint request {}, which was not asked", id);
          return false;
        }
        done = std::move(it->second);
        pending_savepoints_.erase(it);
      }
      done(std::move(result));
      return true;
    }
    if (t == "explain") {
      const int64_t id = j.at("request").get<int64_t>();
      std::string text = j.at("text").get<std::string>();
      std::function<void(std::optional<std::string>)> done;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = pending_explains_.find(id);
        if (it == pending_explains_.end()) {
          *error = fmt::format("an answer to explain request {}, which was not asked", id);
          return false;
        }
        done = std::move(it->second);
        pending_explains_.erase(it);
      }
      done(std::move(text));
      return true;
    }
    if (t == "metrics" || t == "ended") {
      std::vector<SubtaskMetrics> metrics = MetricsFromJson(j.at("tasks"));
      const std::string cause = j.at("cause").get<std::string>();
      nlohmann::json checkpoints =
          j.contains("checkpoints") ? j["checkpoints"] : EmptyCheckpointStatsJson();
      if (!checkpoints.is_object()) {
        *error = "checkpoint figures that are not an object";
        return false;
      }
      std::lock_guard<std::mutex> lock(mu_);
      metrics_ = std::move(metrics);
      checkpoints_ = std::move(checkpoints);
      memory_exhausted_ = memory_exhausted_ || j.value("memory-exhausted", false);
      created_ = created_ && j.value("created", true);
      if (t == "metrics") {
        cause_ = cause;
        return true;
      }
      const std::optional<JobState> state = StateFromName(j.at("state").get<std::string>());
      if (!state) {
        *error = "an end frame without a final state";
        return false;
      }
      ended_reported_ = true;
      reported_state_ = *state;
      reported_cause_ = cause;
      if (j.at("report").is_string()) {
        report_ = j["report"].get<std::string>();
      }
      if (j.contains("explain")) {
        explanations_ = j["explain"].get<std::map<std::string, std::string>>();
      }
      return true;
    }
  } catch (const nlohmann::json::exception& e) {
    *error = fmt::format("a '{}' frame: {}", t, e.what());
    return false;
  }
  *error = fmt::format("unknown frame type '{}'", t);
  return false;
}

JobState WorkerDaemonJob::Supervise(int fd, int pid) {
  auto log = GetLogger("daemon");
  bool cancel_sent = false;
  bool killed_after_cancel = false;
  std::string protocol_error;
  std::chrono::steady_clock::time_point cancel_deadline;
  {
    nlohmann::json run{{"t", "run"},
                       {"yaml", yaml_},
                       {"file", file_name_},
                       {"memory-limit", memory_limit_bytes_},
                       {"checkpoint-dir", run_.checkpoint_dir},
                       {"restore-from", run_.restore_from},
                       {"allow-non-restored-state", run_.allow_non_restored_state},
                       {"run-lock", run_.run_lock}};
    // A worker that died at once shows as end of stream below.
    WriteWorkerFrame(fd, run);
  }
  WorkerFrameReader reader;
  char buf[16u << 10];  // on the stack: nothing of this thread stays in the daemon's heap
  for (;;) {
    bool cancel = false;
    std::vector<nlohmann::json> outbound;
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancel = cancel_requested_;
      outbound.swap(outbound_);
    }
    for (const nlohmann::json& frame : outbound) {
      WriteWorkerFrame(fd, frame);
    }
    const auto now = std::chrono::steady_clock::now();
    if (cancel && !cancel_sent) {
      WriteWorkerFrame(fd, nlohmann::json{{"t", "cancel"}});
      cancel_sent = true;
      cancel_deadline = now + options_.cancellation_timeout;
    } else if (cancel_sent && !killed_after_cancel && now >= cancel_deadline) {
      log->warn("worker {} did not stop within {} ms of the cancel; killing it", pid,
                options_.cancellation_timeout.count());
      ::kill(pid, SIGKILL);
      killed_after_cancel = true;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 50);
    if (ready < 0 && errno != EINTR) {
      protocol_error = fmt::format("poll: {}", std::generic_category().message(errno));
      break;
    }
    if (ready <= 0) {
      continue;
    }
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
      continue;
    }
    if (n <= 0) {
      break;  // the worker closed its end: it exited (or is about to)
    }
    reader.Append(buf, static_cast<size_t>(n));
    std::string error;
    while (std::optional<std::string> frame = reader.Next(&error)) {
      if (!OnFrame(*frame, &error)) {
        break;
      }
    }
    if (!error.empty()) {
      protocol_error = std::move(error);
      ::kill(pid, SIGKILL);
      break;
    }
    if (ended_reported_) {
      break;  // the outcome is known; the worker only exits from here on
    }
  }
  // Reap it. After its end frame a worker has flushed and closed its sinks and exits at once (a
  // sanitizer build may sleep at exit first): it gets 200 ms. One that closed the socket without
  // reporting, but lingers, gets the cancellation timeout.
  int status = 0;
  const auto deadline =
      std::chrono::steady_clock::now() +
      (ended_reported_ ? std::chrono::milliseconds(200) : options_.cancellation_timeout);
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) {
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  bool memory_exhausted = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    memory_exhausted = memory_exhausted_;
  }
  const bool own_limit = memory_limit_bytes_ != options_.memory_limit_bytes;
  const std::string memory_note =
      memory_exhausted
          ? fmt::format("worker exceeded memory limit of {} (RLIMIT_AS, {})",
                        FormatMemorySize(memory_limit_bytes_),
                        own_limit ? "the job's memory-limit" : "tidemarkd --worker-memory-limit")
          : std::string();
  auto with_memory_note = [&](const std::string& cause) {
    return memory_note.empty() ? cause : memory_note + ": " + cause;
  };
  JobState state = JobState::kFailed;
  std::string cause;
  if (!protocol_error.empty()) {
    cause = "worker sent a malformed message: " + protocol_error;
  } else if (ended_reported_) {
    state = reported_state_;
    cause = state == JobState::kFailed ? with_memory_note(reported_cause_) : reported_cause_;
    if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
      log->warn("worker {} of job '{}' ended abnormally after reporting the job {}", pid, name(),
                StateName(state));
    }
  } else if (killed_after_cancel) {
    state = JobState::kCanceled;
  } else if (WIFSIGNALED(status)) {
    cause = with_memory_note(fmt::format("worker killed by signal {} ({})", WTERMSIG(status),
                                         SignalName(WTERMSIG(status))));
  } else if (WIFEXITED(status)) {
    cause = with_memory_note(
        fmt::format("worker exited with status {} before the job ended", WEXITSTATUS(status)));
  } else {
    cause = "worker ended without reporting the job's end";
  }
  SetEnded(state, cause);
  // Savepoints asked for but not answered: the worker is gone.
  std::map<int64_t, std::function<void(DaemonSavepointResult)>> unanswered;
  std::map<int64_t, std::function<void(std::optional<std::string>)>> unexplained;
  {
    std::lock_guard<std::mutex> lock(mu_);
    unanswered.swap(pending_savepoints_);
    unexplained.swap(pending_explains_);
    outbound_.clear();
  }
  for (auto& [id, done] : unexplained) {
    done(std::nullopt);
  }
  for (auto& [id, done] : unanswered) {
    done(DaemonSavepointResult{
        false, "",
        fmt::format("the job ended {} before the savepoint completed", ToString(state))});
  }
  return state;
}

JobFactory WorkerJobFactory(JobValidator validate, WorkerOptions options) {
  return [validate = std::move(validate), options = std::move(options)](
             const std::string& yaml, const std::string& file_name,
             JobResources::LineWriter line_writer,
             const DaemonRunOptions& run) -> std::unique_ptr<DaemonJob> {
    JobDescription description = validate(yaml, file_name);
    return std::make_unique<WorkerDaemonJob>(yaml, file_name, std::move(description),
                                             std::move(line_writer), options, run);
  };
}

// ---- worker process --------------------------------------------------------------------------

namespace {

/// The worker's command thread: serves the daemon's commands (cancel, explain, savepoint) for
/// `job` until the daemon's end of the stream on `fd` (then the process exits: the daemon is gone).
void ServeWorkerCommands(int fd, DaemonJob& job, WorkerChannel& channel) {
  for (;;) {
    std::optional<std::string> frame = ReadWorkerFrame(fd);
    if (!frame) {
      ::_exit(1);
    }
    const nlohmann::json j = nlohmann::json::parse(*frame, nullptr, false);
    if (!j.is_object()) {
      continue;
    }
    const std::string t = j.value("t", "");
    if (t == "cancel") {
      job.Cancel();
    } else if (t == "explain") {
      // Blocks this command thread up to the tasks' answer time (LocalDaemonJob::ExplainLive).
      const int64_t request = j.value("request", int64_t{0});
      job.ExplainLive(j.value("operator", ""),
                      [&channel, request](std::optional<std::string> text) {
                        channel.Send(nlohmann::json{
                            {"t", "explain"}, {"request", request}, {"text", text.value_or("")}});
                      });
    } else if (t == "savepoint") {
      const int64_t request = j.value("request", int64_t{0});
      DaemonSavepointRequest sp{j.value("dir", ""), j.value("stop", false),
                                j.value("drain", false)};
      job.TriggerSavepoint(sp, [&channel, request](DaemonSavepointResult r) {
        channel.Send(nlohmann::json{{"t", "savepoint"},
                                    {"request", request},
                                    {"ok", r.ok},
                                    {"path", r.path},
                                    {"error", r.error}});
      });
    }
  }
}

}  // namespace

bool IsWorkerInvocation(int argc, char** argv) {
  return argc == 4 && std::strcmp(argv[1], "--worker") == 0;
}

int WorkerMain(int argc, char** argv, const JobFactory& factory) {
  if (!IsWorkerInvocation(argc, argv)) {
    return 2;
  }
  const int fd = std::atoi(argv[2]);            // NOLINT(cert-err34-c): written by the daemon
  const pid_t daemon_pid = std::atoi(argv[3]);  // NOLINT(cert-err34-c)
  // Die with the daemon. The signal is tied to the daemon thread that spawned us, which lives as
  // long as we do; if the daemon died before this line, our parent is already someone else.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != daemon_pid) {
    return 1;
  }
  if (std::getenv("MALLOC_ARENA_MAX") ==
      nullptr) {                // NOLINT(concurrency-mt-unsafe): before threads
    ::mallopt(M_ARENA_MAX, 4);  // each arena reserves 64 MiB of the address-space limit
  }
  std::optional<std::string> first = ReadWorkerFrame(fd);
  if (!first) {
    return 1;
  }
  const nlohmann::json run = nlohmann::json::parse(*first, nullptr, false);
  if (run.is_discarded() || !run.is_object() || run.value("t", "") != "run") {
    return 1;
  }
  const std::string yaml = run.value("yaml", "");
  const std::string file = run.value("file", "<request>");
  DaemonRunOptions run_options;
  run_options.checkpoint_dir = run.value("checkpoint-dir", "");
  run_options.restore_from = run.value("restore-from", "");
  run_options.allow_non_restored_state = run.value("allow-non-restored-state", false);
  run_options.run_lock = run.value("run-lock", "");
  [[maybe_unused]] const uint64_t memory_limit =
      run.value("memory-limit", uint64_t{0});  // not in sanitizer builds
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  if (memory_limit > 0) {
    const rlimit lim{memory_limit, memory_limit};
    ::setrlimit(RLIMIT_AS, &lim);
  }
#endif
  g_memory_reserve = static_cast<char*>(std::malloc(1u << 20));  // NOLINT: freed by OnOutOfMemory
  std::set_new_handler(OnOutOfMemory);

  WorkerChannel channel(fd);
  auto send_end =
      [&](JobState state, const std::string& cause, const std::optional<std::string>& report,
          const std::vector<SubtaskMetrics>& metrics,
          const std::map<std::string, std::string>& explanations,
          const nlohmann::json& checkpoints = EmptyCheckpointStatsJson(), bool created = true) {
        channel.FlushLines();
        channel.Send(
            nlohmann::json{{"t", "ended"},
                           {"created", created},
                           {"state", StateName(state)},
                           {"cause", cause},
                           {"report", report ? nlohmann::json(*report) : nlohmann::json(nullptr)},
                           {"tasks", MetricsToJson(metrics)},
                           {"explain", explanations},
                           {"memory-exhausted", g_memory_exhausted.load()},
                           {"checkpoints", checkpoints}});
      };
  if (!run_options.run_lock.empty()) {
    // The job's previous worker (of a daemon killed a moment ago) dies from its parent-death
    // signal; until it has, it holds this lock and may still write: wait, never run the job twice
    // at once.
    const int lock_fd = ::open(run_options.run_lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    bool locked = false;
    while (lock_fd >= 0 && !(locked = ::flock(lock_fd, LOCK_EX | LOCK_NB) == 0) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!locked) {
      send_end(JobState::kFailed,
               lock_fd < 0
                   ? fmt::format("cannot open the job's run lock '{}': {}", run_options.run_lock,
                                 std::generic_category().message(errno))
                   : fmt::format("another process still runs this job (it holds '{}' after 30 s)",
                                 run_options.run_lock),
               std::nullopt, {}, {});
      ::_exit(0);
    }
    // lock_fd stays open (and locked) until this process exits.
  }
  std::unique_ptr<DaemonJob> job;
  try {
    job = factory(
        yaml, file, [&channel](const std::string& line) { channel.AddLine(line); }, run_options);
  } catch (const std::exception& e) {
    // The daemon validated the same text, so this is rare (a file that changed in between).
    // Not made, so nothing was restored: `status` must not say "restored from".
    send_end(JobState::kFailed, e.what(), std::nullopt, {}, {}, EmptyCheckpointStatsJson(),
             /*created=*/false);
    ::_exit(0);
  }
  // A failure of one of this worker's own threads fails its job (the only one it runs) with the
  // cause, never std::terminate: the daemon then shows FAILED and why, not a crashed worker.
  std::mutex mu;
  std::string thread_failure;  // guarded by mu: the first failed thread's cause
  auto fail_job = [&mu, &thread_failure, &job](const char* thread, const std::string& cause) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (thread_failure.empty()) {
        thread_failure = fmt::format("the job's {} thread failed: {}", thread, cause);
      }
    }
    job->Cancel();
  };
  // Commands from the daemon. End of stream means the daemon is gone: the death signal follows.
  std::thread([fd, &job, &channel, &fail_job] {
    RunThreadEntry(
        "worker command", [&] { ServeWorkerCommands(fd, *job, channel); },
        [&](const std::string& cause) { fail_job("command", cause); });
  }).detach();

  std::condition_variable cv;
  bool done = false;
  JobState state = JobState::kFailed;
  std::thread runner([&] {
    JobState s = JobState::kFailed;
    RunThreadEntry(
        "worker runner", [&] { s = job->Run(); },
        [&](const std::string& cause) { fail_job("runner", cause); });
    std::lock_guard<std::mutex> lock(mu);
    state = s;
    done = true;
    cv.notify_all();
  });
  std::string last_sent;
  std::unique_lock<std::mutex> lock(mu);
  // The first snapshot at once (every task with zero counts), then every 100 ms until the end.
  for (bool first_snapshot = true;
       first_snapshot || !cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; });
       first_snapshot = false) {
    lock.unlock();
    channel.FlushLines();
    nlohmann::json frame{{"t", "metrics"},
                         {"tasks", MetricsToJson(job->Metrics())},
                         {"cause", job->failure_cause()},
                         {"memory-exhausted", g_memory_exhausted.load()},
                         {"checkpoints", job->CheckpointStatsJson()}};
    std::string text = frame.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (text != last_sent) {  // an idle job sends nothing
      channel.Send(frame);
      last_sent = std::move(text);
    }
    lock.lock();
  }
  lock.unlock();
  runner.join();
  std::optional<std::string> report;
  if (state == JobState::kFinished) {
    try {
      report = job->ReportLine();
    } catch (const std::exception& e) {
      channel.AddLine(fmt::format("report failed: {}", e.what()));
    }
  }
  std::map<std::string, std::string> explanations;
  try {
    explanations = job->WatermarkExplanations();
  } catch (const std::exception& e) {
    channel.AddLine(fmt::format("explain failed: {}", e.what()));
  }
  std::string cause = job->failure_cause();
  {
    std::lock_guard<std::mutex> thread_lock(mu);
    if (!thread_failure.empty()) {
      state = JobState::kFailed;
      cause = thread_failure;
    }
  }
  send_end(state, cause, report, job->Metrics(), explanations, job->CheckpointStatsJson());
  // Sinks were closed and flushed when the tasks ended; skip the teardown of a large job's state.
  ::_exit(0);
}

}  // namespace tidemark

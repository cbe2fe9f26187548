#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tools/daemon/daemon_job.h"

namespace tidemark {

/// How the daemon starts and bounds its workers (Flink's TaskExecutor processes, one per job here).
struct WorkerOptions {
  /// The worker binary, run as `EXECUTABLE --worker 3 DAEMON_PID` with the socketpair on fd 3: the
  /// daemon's own binary by default, whose main() hands `--worker` to `WorkerMain` before anything
  /// else (a program embedding the daemon with user operator types does the same with its
  /// registry).
  std::string executable = "/proc/self/exe";
  /// RLIMIT_AS of every worker (address space, not resident memory: each task thread reserves its
  /// 8 MiB stack in it); 0: no limit. Not applied in sanitizer builds (their shadow memory needs
  /// terabytes of address space).
  uint64_t memory_limit_bytes = uint64_t{4} << 30;
  /// A cancelled worker that has not ended this long after the cancel is killed (SIGKILL); its job
  /// ends CANCELED. Flink's `task.cancellation.timeout`.
  std::chrono::milliseconds cancellation_timeout{std::chrono::seconds(30)};
};

/// What the daemon learns of a job when it validates it: everything `status` shows before the
/// worker runs, and the files it will write.
struct JobDescription {
  std::string name;
  std::vector<DaemonJobVertex> vertices;
  std::vector<DaemonJobOutput> outputs;
};

/// Validates and compiles a submission in the daemon without deploying it (no tasks, no channels,
/// no threads). Throws ConfigError / JobCompileError like a JobFactory; called from several
/// threads at once.
using JobValidator =
    std::function<JobDescription(const std::string& yaml, const std::string& file_name)>;

/// A job run in its own worker process, supervised from `Run`'s thread (which must live as long as
/// the worker: the worker's parent-death signal is tied to it). The worker reports its state,
/// metrics (about ten times a second), print-sink lines and its end over a socketpair; the daemon
/// never reads job data. A worker that dies (any signal: a crash, the OOM killer), exits early,
/// breaks the protocol or runs out of its memory limit ends the job FAILED with that cause.
/// Thread-safe as DaemonJob.
class WorkerDaemonJob : public DaemonJob {
 public:
  WorkerDaemonJob(std::string yaml, std::string file_name, JobDescription description,
                  JobResources::LineWriter line_writer, WorkerOptions options,
                  DaemonRunOptions run = {});

  const std::string& name() const override { return description_.name; }
  std::vector<DaemonJobVertex> Vertices() const override { return description_.vertices; }
  std::vector<DaemonJobOutput> Outputs() const override { return description_.outputs; }
  JobState Run() override;
  void Cancel() override;
  JobState state() const override;
  std::string failure_cause() const override;
  std::vector<SubtaskMetrics> Metrics() const override;
  std::optional<std::string> ReportLine() const override;
  /// What the worker computed at the job's end (sent in its last frame).
  std::map<std::string, std::string> WatermarkExplanations() const override;

  /// The worker's pid while it runs, -1 before and after.
  int worker_pid() const override;
  bool created() const override;
  /// At most the daemon's `memory_limit_bytes` (any size when that is 0), above 0.
  std::optional<std::string> LimitMemory(uint64_t bytes) override;
  /// Sent to the worker (a `savepoint` frame) by the supervisor within one poll interval; `done`
  /// runs on the supervisor thread when the worker answers, or with an error when the job is not
  /// running or ends first.
  void TriggerSavepoint(const DaemonSavepointRequest& request,
                        std::function<void(DaemonSavepointResult)> done) override;
  /// As the worker last reported them (its metrics frames).
  nlohmann::json CheckpointStatsJson() const override;
  /// Sent to the worker (an `explain` frame) like a savepoint request; `done` runs on the
  /// supervisor thread with the worker's text, or with nullopt when the job is not running or ends
  /// before the answer.
  void ExplainLive(const std::string& operator_id,
                   std::function<void(std::optional<std::string>)> done) override;

 private:
  JobState Supervise(int fd, int pid);
  /// Handles one frame from the worker; false on a protocol error (`*error` set).
  bool OnFrame(const std::string& payload, std::string* error);
  void SetEnded(JobState state, std::string cause);

  const std::string yaml_;
  const std::string file_name_;
  const JobDescription description_;
  const JobResources::LineWriter line_writer_;
  const WorkerOptions options_;
  const DaemonRunOptions run_;

  mutable std::mutex mu_;
  nlohmann::json checkpoints_ = EmptyCheckpointStatsJson();
  int64_t next_savepoint_ = 0;
  std::vector<nlohmann::json> outbound_;  // savepoint frames the supervisor sends next
  std::map<int64_t, std::function<void(DaemonSavepointResult)>> pending_savepoints_;
  int64_t next_explain_ = 0;
  std::map<int64_t, std::function<void(std::optional<std::string>)>> pending_explains_;
  JobState state_ = JobState::kCreated;
  std::string cause_;
  std::vector<SubtaskMetrics> metrics_;
  std::optional<std::string> report_;
  std::map<std::string, std::string> explanations_;
  bool cancel_requested_ = false;
  bool memory_exhausted_ = false;
  bool created_ = true;  // false: the worker's end frame said it could not build the job
  int pid_ = -1;
  uint64_t memory_limit_bytes_;  // options_.memory_limit_bytes unless LimitMemory lowered it
  // Supervisor thread only:
  bool ended_reported_ = false;
  JobState reported_state_ = JobState::kFailed;
  std::string reported_cause_;
};

/// A JobFactory for the daemon: validates with `validate` in the daemon, then makes a
/// WorkerDaemonJob that runs the job in a worker process.
JobFactory WorkerJobFactory(JobValidator validate, WorkerOptions options);

/// True when argv is a worker invocation (`PROGRAM --worker FD DAEMON_PID`).
bool IsWorkerInvocation(int argc, char** argv);

/// The worker process's main: ties its life to the daemon (PR_SET_PDEATHSIG, then checks the
/// parent is still the daemon), reads the run frame, applies the memory limit, makes the job with
/// `factory` (which must know every operator type the daemon's validator knows), runs it and
/// reports until it ended. Returns the process exit code (0 once the end was reported).
int WorkerMain(int argc, char** argv, const JobFactory& factory);

/// "4 GiB", "512 MiB", "1000 bytes".
std::string FormatMemorySize(uint64_t bytes);

}  // namespace tidemark

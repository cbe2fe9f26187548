#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/daemon/daemon_job.h"

namespace tidemark {

/// A job's captured output: print-sink lines, the report line and lifecycle notes, bounded both
/// in lines and in bytes (oldest lines are dropped first and counted). Thread-safe.
class JobLog {
 public:
  JobLog(size_t max_lines, size_t max_bytes) : max_lines_(max_lines), max_bytes_(max_bytes) {}

  void Append(const std::string& line);
  /// Copy of the retained lines, oldest first.
  std::vector<std::string> Lines() const;
  /// Lines dropped because the buffer was full.
  int64_t dropped() const;

 private:
  const size_t max_lines_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::deque<std::string> lines_;
  size_t bytes_ = 0;
  int64_t dropped_ = 0;
};

/// Limits of a JobManager.
struct JobManagerOptions {
  size_t max_running_jobs = 64;    ///< submissions beyond this are refused (HTTP 429)
  size_t max_finished_jobs = 200;  ///< finished jobs kept for list/status; oldest trimmed first
  /// A finished job leaves the history this long after it ended (Flink's
  /// `jobstore.expiration-time`, also one hour by default); zero keeps it until `max_finished_jobs`
  /// pushes it out. Whichever bound is reached first trims.
  std::chrono::milliseconds finished_job_ttl{std::chrono::hours(1)};
  size_t max_log_lines = 10000;     ///< per job
  size_t max_log_bytes = 4u << 20;  ///< per job
  /// The job registry and every job's checkpoints on disk (`tidemarkd --state-dir`); empty: in
  /// memory only. Layout: `DIR/jobs/<id>/job.yaml` (the submitted text), `job.json` (id, name,
  /// file, submit and end time, state, failure cause, report, final metrics, checkpoint figures,
  /// memory limit, restore path as submitted, `restored-from` / `restore-failed-from` as run;
  /// rewritten atomically on every state change), `checkpoints/`
  /// (the job's JobRunOptions::checkpoint_dir) and `run.lock` (held by the worker running it).
  /// At construction every job found there is listed again; those that were RUNNING (or
  /// SUSPENDED by a daemon shutdown) are resumed from their latest completed checkpoint. The
  /// directory must exist and be private (the daemon's main makes it so).
  std::string state_dir{};
  /// Default target of savepoints that name no directory; empty: `state_dir/savepoints`.
  std::string savepoint_dir{};
};

/// The daemon's jobs (Flink's Dispatcher role on one node): submits, runs concurrently and in
/// isolation, cancels, describes, and forgets the oldest finished jobs beyond a bound.
///
/// Each submitted job gets a waiter thread that runs it (`DaemonJob::Run`: in tidemarkd, the
/// supervisor of the job's worker process) and, when it ended, appends its report line
/// to its log, and trims the history to `max_finished_jobs`. With a `finished_job_ttl`, one more
/// thread (the expirer) drops finished jobs once they are that old and hands the freed memory back
/// to the operating system (`malloc_trim`), so an idle daemon whose history has expired is back at
/// its start footprint. A job failing (an operator throwing, a sink that cannot write) only makes
/// that job FAILED, with the cause kept.
///
/// Output paths are owned: a submission whose file sink writes a file that a running job (or
/// another sink of the same job) writes is refused (kInvalidJob) naming the file and the job; the
/// file is free again once that job ended. Likewise transactional ids: a submission whose
/// exactly-once Kafka sink has the `transactional-id-prefix` of a running job's (or another of its
/// own) exactly-once Kafka sink, with a bootstrap server in common, is refused naming the prefix
/// and the job (their producers would fence each other; Flink requires a prefix per job too).
///
/// Thread-safe: every method may be called from any thread. The JSON returned follows Flink's
/// REST API names where a counterpart exists (`jid`, `state`, `start-time`, `duration`, ...).
/// Timestamps are ms since the epoch (wall clock), durations ms.
class JobManager {
 public:
  JobManager(JobFactory factory, JobManagerOptions options);
  /// Cancels running jobs and waits for them (`Shutdown`).
  ~JobManager();
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  struct SubmitResult {
    /// kNotDurable (503) / kInsufficientStorage (507, ENOSPC or EDQUOT): the job could not be
    /// written (fsynced) to the state directory, so it was not started.
    enum class Status {
      kAccepted,
      kInvalidJob,
      kTooManyJobs,
      kShuttingDown,
      kInternalError,
      kNotDurable,
      kInsufficientStorage
    };
    Status status = Status::kAccepted;
    std::string job_id;               ///< kAccepted
    std::vector<std::string> errors;  ///< diagnostics lines (kInvalidJob) or a reason
  };

  /// Compiles and starts a job. Never throws for a bad job. `memory_limit_bytes`: the job's own
  /// memory limit (DaemonJob::LimitMemory; kInvalidJob when it cannot take it).
  /// `restore_from`: a savepoint or checkpoint to start from (Flink's `-s`), with
  /// `allow_non_restored_state`; the daemon fills in the job's checkpoint directory and run lock.
  SubmitResult Submit(const std::string& yaml, const std::string& file_name,
                      std::optional<uint64_t> memory_limit_bytes = std::nullopt,
                      std::string restore_from = "", bool allow_non_restored_state = false);

  /// `{"jobs": [{"jid", "name", "state", "start-time", "end-time", "duration"}]}`, in
  /// submission order.
  nlohmann::json ListJson() const;
  /// The job's details (state, vertices, tasks with per-subtask metrics and watermarks, worker-pid,
  /// failure cause, report, `dropped-records`: DroppedRecordLines, live or final), or nullopt for
  /// an unknown id.
  std::optional<nlohmann::json> JobJson(const std::string& id) const;
  /// `{"root-exception": cause|null, "timestamp": end-time|null}`, or nullopt.
  std::optional<nlohmann::json> ExceptionsJson(const std::string& id) const;
  /// `{"lines": [...], "dropped": n, "dropped-records": [DroppedRecordLines]}`, or nullopt.
  std::optional<nlohmann::json> LogJson(const std::string& id) const;
  /// Why the job's watermarks stand where they do (`tidemark run --explain`'s text, from the
  /// worker): `{"jid", "state", "operator", "live", "operator-found", "explain": text | null}` for
  /// `operator_id`
  /// ("" = every window and join operator). An ended job: where they stood when end of input
  /// reached each task (computed at its end). A running job (`live` true): where they stand now,
  /// from the running tasks (DaemonJob::ExplainLive; blocks the caller up to 5 s); null when the
  /// job did not answer (it ended meanwhile). Null for an operator id the job does not have.
  /// nullopt for an unknown job id.
  std::optional<nlohmann::json> ExplainJson(const std::string& id,
                                            const std::string& operator_id) const;
  /// Job counts by state, limits, uptime, and the daemon's own thread failures
  /// (`service-thread-failures`: count; `last-service-thread-failure`: "THREAD: CAUSE" or null).
  nlohmann::json OverviewJson() const;
  /// Prometheus text exposition format (version 0.0.4).
  std::string PrometheusText() const;

  enum class CancelStatus { kCanceling, kAlreadyEnded, kUnknown };
  CancelStatus Cancel(const std::string& id);

  /// Savepoints (Flink's `POST /jobs/{id}/savepoints` and `/stop`): triggered asynchronously,
  /// their outcome read by request id. `dir` empty: the default savepoint directory.
  struct SavepointTrigger {
    /// kBadDirectory: the target cannot be created or written (400, before anything starts).
    enum class Status { kTriggered, kNotRunning, kUnknownJob, kNoDirectory, kBadDirectory };
    Status status = Status::kTriggered;
    std::string request_id;  ///< kTriggered
    std::string message;     ///< otherwise
  };
  SavepointTrigger TriggerSavepoint(const std::string& id, std::string dir, bool stop, bool drain);
  /// `{"status": {"id": "IN_PROGRESS"|"COMPLETED"}, "operation": {"location": path} |
  /// {"failure-cause": {"class": "SavepointException", "stack-trace": message}}}` (Flink's
  /// AsynchronousOperationResult); nullopt for an unknown job or request id.
  std::optional<nlohmann::json> SavepointStatusJson(const std::string& id,
                                                    const std::string& request_id) const;
  /// Flink's CheckpointingStatistics subset: `{"counts": {"restored","total","in_progress",
  /// "completed","failed"}, "latest": {"completed": {"id","state_size","end_to_end_duration",
  /// "alignment_duration","external_path"} | null, "restored": {"external_path"} | null},
  /// "restarts"}`; nullopt for an unknown job.
  std::optional<nlohmann::json> CheckpointsJson(const std::string& id) const;

  /// Stops accepting jobs, cancels every running job and waits until all have ended (their
  /// sinks closed and flushed); stops the expirer. Idempotent.
  void Shutdown();

  /// Sets the function the expirer calls when it has dropped finished jobs while no job runs, right
  /// before it returns freed memory to the operating system (the RestServer renews its I/O thread
  /// there, see RestServer::RenewIoThread). Blocks while the current hook is running, so after
  /// `SetIdleHook(nullptr)` returns the old hook is no longer called. Thread-safe.
  void SetIdleHook(std::function<void()> hook);

  /// A thread of the daemon's own service (the REST I/O thread, a submission validator, the
  /// expirer, a job's waiter once its job's end is recorded) failed with `cause` (see
  /// FailureCause): logged at error level and counted, visible in `OverviewJson`
  /// (`service-thread-failures`, `last-service-thread-failure`) and the Prometheus text
  /// (`tidemark_daemon_thread_failures_total`). The thread's owner decides whether it carries on.
  /// `thread` is a string literal. Thread-safe; never throws (a failure to log is dropped).
  void ReportServiceThreadFailure(const char* thread, const std::string& cause) noexcept;

  /// Blocks until job `id` ended or `timeout` passed; true when it ended. For tests.
  bool WaitForJob(const std::string& id, std::chrono::milliseconds timeout) const;

  size_t running_jobs() const;

 private:
  struct SavepointOp {
    bool done = false;
    // A stop-with-savepoint is done only once its savepoint has a result and the job has ended
    // (as Flink's stop returns): until then the job still holds its sink paths, and a resubmit
    // from the savepoint writing them would be refused.
    bool stop = false;
    bool has_result = false;
    DaemonSavepointResult result;
  };
  struct Entry {
    std::string id;
    std::string file_name;
    std::optional<uint64_t> memory_limit;
    std::string restore_from;  // what it was started from ("" fresh); on resume, the checkpoint
    std::string submitted_restore_from;  // what the user asked for at submission
    bool allow_non_restored_state = false;
    std::string name;
    int64_t start_ms = 0;
    std::shared_ptr<JobLog> log;
    nlohmann::json vertices;               // fixed at submission
    std::vector<std::string> owned_files;  // canonical output paths, released when it ended
    /// Its exactly-once Kafka sinks (transactional-id prefix, bootstrap servers); they count
    /// while it has not ended. Guarded by JobManager::mu_ (set when it is accepted).
    std::vector<DaemonJobOutput> owned_transactions;
    // Guarded by JobManager::mu_:
    /// The running job; released when it ended (readers copy the pointer under the lock), so a
    /// finished job in the history keeps only its summary, final metrics and log.
    std::shared_ptr<DaemonJob> job;
    nlohmann::json final_tasks;                // per-subtask metrics at the end
    std::vector<std::string> dropped_records;  // DroppedRecordLines of the final metrics
    bool ended = false;
    int64_t end_ms = -1;
    std::chrono::steady_clock::time_point end_steady;  // for finished_job_ttl
    JobState final_state = JobState::kRunning;
    std::string failure_cause;
    std::optional<std::string> report;
    std::map<std::string, std::string> explanations;  // DaemonJob::WatermarkExplanations at the end
    nlohmann::json final_checkpoints = EmptyCheckpointStatsJson();
    bool restore_failed = false;  // ended before its worker could build it: nothing restored
    bool user_cancelled = false;
    std::map<std::string, std::shared_ptr<SavepointOp>> savepoints;  // request id -> outcome
    int64_t next_savepoint = 0;
  };

  std::shared_ptr<Entry> Find(const std::string& id) const;
  nlohmann::json SummaryJson(const Entry& e) const;  // requires mu_
  static nlohmann::json TasksJson(const std::vector<SubtaskMetrics>& metrics);
  /// The waiter thread: runs the job (unless `run` is false: no thread could be had) and records
  /// its end. `Run` throwing (it should not; memory may run out) ends the job FAILED with the
  /// cause; anything after it throwing is left to EndAfterWaiterFailure.
  void OnJobEnded(const std::shared_ptr<Entry>& e, std::shared_ptr<DaemonJob> job, bool run);
  /// The waiter of `e` failed while recording its end (`cause`): unless that was recorded, ends
  /// the entry FAILED with `cause` (job cancelled, outputs released, slot freed) so that neither
  /// the job stays RUNNING nor Shutdown waits for it; counts it as a service thread failure.
  void EndAfterWaiterFailure(const std::shared_ptr<Entry>& e, const std::string& cause) noexcept;
  void TrimHistory();  // requires mu_
  void DropFinished(
      std::string id);  // requires mu_; by value: callers pass finished_order_.front()
  /// The expirer thread's loop: sleeps until the oldest finished job is `finished_job_ttl` old.
  void ExpireHistory();
  /// The expirer thread: ExpireHistory, started again a second after a failure (reported as a
  /// service thread failure) until shutdown.
  void RunExpirer();
  std::string NewJobId();  // requires mu_
  /// Compiles and starts `entry` (id set, a running slot reserved); releases the slot on failure.
  SubmitResult Launch(const std::shared_ptr<Entry>& entry, const std::string& yaml, bool resumed);
  /// Requires mu_. Why `entry` may not start now, "" when it may: one of its output files
  /// (`outputs`: canonical path, sink id) is written by another running job or overlaps another
  /// of its own sinks' files, or one of its exactly-once Kafka sinks (`transactions`) shares a
  /// transactional-id prefix on one cluster with another of its sinks or a running job's. On
  /// "", `mine` holds its files (path -> sink id) for owned_files_. `file_name` opens the text.
  std::string OutputConflict(const std::string& file_name, const std::shared_ptr<Entry>& entry,
                             const std::vector<std::pair<std::string, std::string>>& outputs,
                             const std::vector<DaemonJobOutput>& transactions,
                             std::map<std::string, std::string>* mine) const;
  /// The job's directory in the state dir ("" without one).
  std::string JobDir(const std::string& id) const;
  /// What job.json holds for `e` in `state`.
  nlohmann::json RegistryJson(const Entry& e, const std::string& state) const;
  /// Writes job.json (logs a failure; never throws).
  void Persist(const std::string& id, const nlohmann::json& record) const;
  /// Lists the jobs of the state dir again and resumes those that were running (constructor).
  void Recover();

  const JobFactory factory_;
  const JobManagerOptions options_;
  const int64_t started_ms_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::map<std::string, std::shared_ptr<Entry>> jobs_;
  std::deque<std::string> order_;           // submission order of retained jobs
  std::deque<std::string> finished_order_;  // ended jobs, oldest first
  /// Recovery's guard against writing committed output twice: "" when resuming the job from
  /// checkpoint `restore_id` (0: none verifies) is safe, else the FAILED cause naming the
  /// checkpoints (`skipped`: LoadLatest's lines) and how to resume by hand. The rule is
  /// `CheckpointStorage::UnsafeFallBack`'s (shared with `tidemark run --from-checkpoint`): no
  /// checkpoint verifies though one completed (a start from scratch), or a newer completed one
  /// does not verify and a sink commits at checkpoints (exactly-once).
  std::string UnsafeResumeCause(const std::string& yaml, const std::string& checkpoints,
                                int64_t restore_id, const std::vector<std::string>& skipped) const;
  std::map<std::string, std::string> owned_files_;  // canonical output path -> running job id
  size_t running_ = 0;
  size_t waiters_ = 0;
  bool shutting_down_ = false;
  std::mutex idle_hook_mu_;  // held while the hook runs; never together with mu_
  std::function<void()> idle_hook_;
  std::condition_variable expirer_cv_;  // a job ended, or shutting down
  std::thread expirer_;                 // runs ExpireHistory when finished_job_ttl > 0
  uint64_t id_state_ = 0;
  int64_t submitted_total_ = 0;
  int64_t finished_total_ = 0;
  int64_t failed_total_ = 0;
  int64_t canceled_total_ = 0;
  int64_t rejected_total_ = 0;
  int64_t expired_total_ = 0;
  int64_t service_thread_failures_ = 0;
  std::string last_service_thread_failure_;  // "THREAD: CAUSE"
};

}  // namespace tidemark

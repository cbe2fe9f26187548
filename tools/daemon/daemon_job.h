#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/graph/job_execution.h"
#include "runtime/graph/job_graph.h"
#include "runtime/graph/job_resources.h"

namespace tidemark {

/// One input edge of a vertex (Flink's JobEdge as the plan shows it).
struct DaemonJobInput {
  std::string from;          ///< the upstream operator's id
  std::string partitioning;  ///< Flink's ship strategy: FORWARD, REBALANCE, HASH, BROADCAST
  std::string side_output;   ///< empty: the upstream's main output
  bool chained = false;      ///< fused into the upstream's task (records pass by direct call)
};

/// One vertex (operator) of a job as `status` lists it; fixed when the job is compiled.
struct DaemonJobVertex {
  std::string id;    ///< operator id from the YAML
  std::string type;  ///< operator type, e.g. "window"
  int parallelism = 1;
  std::string task;  ///< the task (chain) that runs it, as SubtaskMetrics::task names it
  std::vector<DaemonJobInput> inputs{};
};

/// One file a job's sink writes, or the transactional ids of one exactly-once Kafka sink, for the
/// daemon's ownership of outputs between running jobs.
struct DaemonJobOutput {
  std::string operator_id;  ///< the sink's id
  /// A file sink's file, as the sink opens it (relative paths: against the daemon's directory);
  /// empty for a Kafka sink.
  std::string path;
  /// An exactly-once Kafka sink's `transactional-id-prefix` and `bootstrap-servers` (as written);
  /// empty for a file sink. Two producers with one transactional id on one cluster fence each
  /// other.
  std::string transactional_id_prefix{};
  std::string bootstrap_servers{};
};

/// How the daemon starts a job beyond its YAML text; the worker's factory turns it into the
/// engine's JobRunOptions (tools/engine/engine.h, Flink's `-s PATH` / `--allowNonRestoredState`).
/// Paths are absolute or relative to the daemon's working directory; empty: not set.
struct DaemonRunOptions {
  std::string checkpoint_dir;  ///< where the job's checkpoints go (overrides `checkpointing.dir`)
  std::string restore_from;    ///< a checkpoint, savepoint or checkpoint root to resume from
  bool allow_non_restored_state = false;
  /// A file the process running the job holds an exclusive flock(2) on for as long as it runs:
  /// a worker of a restarted daemon waits for the old one (still dying from its parent-death
  /// signal) to let go, so the job never runs twice at once.
  std::string run_lock;
};

/// A savepoint request as the daemon passes it on (Flink's `flink savepoint` / `flink stop
/// --savepointPath [--drain]`).
struct DaemonSavepointRequest {
  std::string dir;     ///< target directory (the savepoint goes into `dir/savepoint-<id>`)
  bool stop = false;   ///< end the job FINISHED once the savepoint completed
  bool drain = false;  ///< with `stop`: MAX_WATERMARK first, so every window fires
};

/// Its outcome: `ok` with the savepoint's directory, or the reason it failed.
struct DaemonSavepointResult {
  bool ok = false;
  std::string path;
  std::string error;
};

/// A job's checkpoint figures as the daemon shows them (JSON object): `restarts`, `completed`,
/// `failed`, `last-completed-id` (0: none), `last-size-bytes`, `last-duration-ms`,
/// `last-alignment-ms`, `last-path` ("" while none). All zeros for a job that never checkpointed.
nlohmann::json EmptyCheckpointStatsJson();

/// The vertices of a compiled graph, in topological order.
std::vector<DaemonJobVertex> VerticesOf(const JobGraph& graph);
/// Every file the graph's `type: file` sinks write: `path`, or `path.<subtask>` per subtask of a
/// parallel sink (as SinkOperator::Open names them); and one entry per exactly-once `type: kafka`
/// sink with its transactional-id prefix and bootstrap servers.
std::vector<DaemonJobOutput> OutputsOf(const JobGraph& graph);

/// One job as the daemon holds it (Flink's JobMaster view of a job): made by the `JobFactory`
/// the tool layer supplies, run by the JobManager on a thread of its own. Implementations: a job
/// in this process over a JobExecution (`ExecutionDaemonJob`, what a worker runs) and a job in a
/// supervised worker process (`WorkerDaemonJob`, what tidemarkd runs).
/// Thread-safe: `Run` once on the JobManager's waiter thread; everything else from any thread.
/// Destroying the object after `Run` returned frees the job.
class DaemonJob {
 public:
  virtual ~DaemonJob() = default;
  /// The job name from its YAML (`name:`).
  virtual const std::string& name() const = 0;
  virtual std::vector<DaemonJobVertex> Vertices() const = 0;
  virtual std::vector<DaemonJobOutput> Outputs() const = 0;
  /// Runs the job to its end on the calling thread and returns its final state (FINISHED, FAILED
  /// or CANCELED). Never throws: whatever goes wrong ends the job FAILED with the cause kept.
  virtual JobState Run() = 0;
  /// Asks the job to stop (it ends CANCELED unless it already ended). Before `Run`: it is
  /// cancelled as soon as it starts. Never blocks on the job.
  virtual void Cancel() = 0;
  /// kCreated before `Run`, kRunning while running, then the final state.
  virtual JobState state() const = 0;
  /// The first failure's cause ("" while none).
  virtual std::string failure_cause() const = 0;
  /// The latest per-subtask figures (final ones after `Run` returned).
  virtual std::vector<SubtaskMetrics> Metrics() const = 0;
  /// The `report:` summary line, nullopt when the job has none. Called after the job finished.
  virtual std::optional<std::string> ReportLine() const = 0;
  /// After `Run`: `tidemark run --explain`'s text for the ended job (why each operator's watermark
  /// stood where it did when end of input reached it), keyed by operator id; key "" holds the
  /// default selection (every window and join operator). Empty when the job never ran its tasks.
  virtual std::map<std::string, std::string> WatermarkExplanations() const { return {}; }
  /// While the job runs: `tidemark explain`'s text of where each watermark stands now (live
  /// snapshots from the running tasks), for `operator_id` ("" = the default selection, as
  /// WatermarkExplanations). `done` is called exactly once, on any thread (possibly this one,
  /// before the call returns), with the text, or nullopt when the job cannot answer (not running,
  /// its worker gone). May block the caller up to a few seconds (the tasks' answers).
  /// Default: nullopt.
  virtual void ExplainLive(const std::string& operator_id,
                           std::function<void(std::optional<std::string>)> done) {
    (void)operator_id;
    done(std::nullopt);
  }
  /// The pid of the process running the job while it runs in a worker; -1 otherwise.
  virtual int worker_pid() const { return -1; }
  /// Sets this job's memory limit (bytes) before `Run`: a job-level override of the daemon's. An
  /// error message when the job cannot take it (not in a worker, over the daemon's cap, zero).
  virtual std::optional<std::string> LimitMemory(uint64_t bytes) {
    (void)bytes;
    return "a memory limit applies to jobs run in worker processes only";
  }
  /// Takes a savepoint of the running job; `done` is called exactly once, on any thread (possibly
  /// this one, before the call returns), with the outcome. Never blocks on the job.
  virtual void TriggerSavepoint(const DaemonSavepointRequest& request,
                                std::function<void(DaemonSavepointResult)> done) {
    (void)request;
    done(DaemonSavepointResult{false, "", "this job cannot take savepoints"});
  }
  /// The latest checkpoint figures (see EmptyCheckpointStatsJson for the shape).
  virtual nlohmann::json CheckpointStatsJson() const { return EmptyCheckpointStatsJson(); }
  /// False when the job ended before it was made (its worker could not build it: a restore from
  /// a savepoint that cannot be read, say), so nothing was restored. A job built in-process
  /// either is made or fails its submission: true.
  virtual bool created() const { return true; }
};

/// A DaemonJob over a JobExecution in this process: subclasses own the execution.
class ExecutionDaemonJob : public DaemonJob {
 public:
  /// The compiled, not yet started execution. Thread-safe as JobExecution is.
  virtual JobExecution& execution() = 0;
  virtual const JobExecution& execution() const = 0;

  std::vector<DaemonJobVertex> Vertices() const override { return VerticesOf(execution().graph()); }
  std::vector<DaemonJobOutput> Outputs() const override { return OutputsOf(execution().graph()); }
  JobState Run() override;
  void Cancel() override;
  JobState state() const override;
  std::string failure_cause() const override { return execution().failure_cause(); }
  std::vector<SubtaskMetrics> Metrics() const override { return execution().Metrics(); }

 private:
  mutable std::mutex start_mu_;  // Run's start against Cancel
  bool started_ = false;
  bool cancelled_before_start_ = false;
};

/// Makes a compiled, not yet started job from its YAML text. `file_name` is the name used in
/// diagnostics (`jobs/x.yaml:4:9: error: ...`); `line_writer` receives every print-sink line;
/// `run` says where its checkpoints go and what it restores from.
/// Throws `ConfigError` or `JobCompileError` for an invalid job; any other exception is treated
/// as an internal error. Called on a daemon I/O thread, possibly from several threads at once.
using JobFactory = std::function<std::unique_ptr<DaemonJob>(
    const std::string& yaml, const std::string& file_name, JobResources::LineWriter line_writer,
    const DaemonRunOptions& run)>;

}  // namespace tidemark

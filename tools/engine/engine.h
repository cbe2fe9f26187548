#pragma once

#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "config/job_loader.h"
#include "config/job_spec.h"
#include "runtime/graph/job_execution.h"
#include "runtime/graph/job_resources.h"
#include "runtime/graph/operator_registry.h"

namespace tidemark {

/// The registry with every built-in operator and source type (explicit registration).
/// Built once on first use; thread-safe to read.
const OperatorRegistry& BuiltinRegistry();

/// The block registry with every built-in `type:`-keyed block (config/block_registry.h: the source
/// types, the watermarks, window and sink blocks), which the job loader reads blocks through. Built
/// once on first use by explicit registration; thread-safe to read.
const BlockRegistry& BuiltinBlockRegistry();

/// `LoadJobSpecFile` / `LoadJobSpecString` (config/job_loader.h) with `BuiltinBlockRegistry()`.
JobSpec LoadJobSpecFile(const std::string& path);
JobSpec LoadJobSpecString(const std::string& yaml, const std::string& file_name = "<string>");

/// How a job starts beyond its YAML: where its checkpoints go and what it resumes from
/// (Flink's `-s SAVEPOINT_PATH` / `--allowNonRestoredState` and the HA store's latest checkpoint).
struct JobRunOptions {
  /// Overrides the YAML's `checkpointing.dir` when not empty (the daemon keeps every job's
  /// checkpoints under its `--state-dir`).
  std::filesystem::path checkpoint_dir;
  /// Empty: start fresh. Otherwise restore from this directory: a completed checkpoint
  /// (`.../chk-<id>`), a savepoint directory, or a checkpoint root (its latest completed
  /// checkpoint that verifies). Operator state is matched by operator `id`.
  std::filesystem::path restore_from;
  /// Flink's `--allowNonRestoredState`: state of an operator id the job no longer has is skipped
  /// (logged) instead of refusing the restore.
  bool allow_non_restored_state = false;
};

/// Checkpoint figures for `status` (a subset of Flink's CheckpointStatsSnapshot).
struct CheckpointStats {
  int64_t restarts = 0;           ///< restarts under the restart strategy so far
  int64_t completed = 0;          ///< checkpoints completed (savepoints included)
  int64_t failed = 0;             ///< checkpoints aborted or failed
  int64_t last_completed_id = 0;  ///< 0: none yet
  int64_t last_size_bytes = 0;    ///< state bytes of the last completed checkpoint
  int64_t last_duration_ms = 0;   ///< trigger to complete
  int64_t last_alignment_ms = 0;  ///< longest barrier alignment of any task in it
  std::string last_path;          ///< its directory
  /// The last 10 ended checkpoints and savepoints, oldest first (Flink's checkpoint history).
  std::vector<CheckpointCoordinator::HistoryEntry> history;
  /// The failure cause of each restarted attempt, oldest first (JobExecution::restart_causes).
  std::vector<std::string> restart_causes;
};

/// A savepoint request (Flink's `flink savepoint` / `flink stop --savepointPath [--drain]`).
struct SavepointRequest {
  std::filesystem::path
      dir;             ///< target directory; the savepoint is written to `dir/savepoint-<id>`
  bool stop = false;   ///< end the job after the savepoint completes (FINISHED)
  bool drain = false;  ///< with `stop`: emit MAX_WATERMARK first, so every window fires
};

/// The outcome of a savepoint request.
struct SavepointResult {
  bool ok = false;
  std::string path;   ///< when ok: the savepoint's directory
  std::string error;  ///< when not ok: why (e.g. the job has no checkpointing, or it ended)
};

/// A compiled and deployed job: its resources, its execution, its report. What `tidemark run`
/// and the daemon both hold per job.
/// Thread-safe as JobExecution is; the object must outlive its execution (destroying it cancels
/// and joins a running job).
class LocalJob {
 public:
  /// Compiles `spec` (throws JobCompileError with file:line:column lines). `line_writer`
  /// receives print-sink lines (default stdout).
  static std::unique_ptr<LocalJob> Create(const JobSpec& spec,
                                          JobResources::LineWriter line_writer = {});
  /// As above, compiling against `registry` (e.g. built-ins plus user operator types, or a
  /// C++ JobBuilder's registry); `registry` is only used during the call.
  static std::unique_ptr<LocalJob> Create(const JobSpec& spec, const OperatorRegistry& registry,
                                          JobResources::LineWriter line_writer = {});
  /// As above, with checkpoint/restore options. Throws JobCompileError (or Error) when
  /// `options.restore_from` cannot be restored into this job (missing, corrupt, another job's,
  /// or state of an unknown operator id without `allow_non_restored_state`).
  static std::unique_ptr<LocalJob> Create(const JobSpec& spec, const OperatorRegistry& registry,
                                          JobResources::LineWriter line_writer,
                                          const JobRunOptions& options);

  /// Takes a savepoint of the running job. Thread-safe; the future becomes ready when the
  /// savepoint completed or failed.
  std::future<SavepointResult> TriggerSavepoint(const SavepointRequest& request);
  /// The same with a callback, run on the job's master thread; for a stop it runs before the
  /// tasks are told to end, so the answer precedes the job's end wherever the two are reported.
  void TriggerSavepoint(const SavepointRequest& request, std::function<void(SavepointResult)> done);
  /// Thread-safe snapshot of the checkpoint figures.
  CheckpointStats checkpoint_stats() const;

  JobExecution& execution() { return *execution_; }
  JobResources& resources() { return *resources_; }
  const JobSpec& spec() const { return spec_; }

  /// The `report:` summary line from what the sinks received, e.g.
  /// `>>> mode=split: windows fired=15, records in windows=400, late records=0 (from slow split:
  /// 0), total=400`; nullopt when the job has no report.
  std::optional<std::string> ReportLine() const;

 private:
  LocalJob() = default;
  JobSpec spec_;
  JobRunOptions options_;
  std::unique_ptr<JobResources> resources_;
  std::unique_ptr<JobExecution> execution_;
};

}  // namespace tidemark

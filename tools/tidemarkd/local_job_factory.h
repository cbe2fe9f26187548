#pragma once

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "config/job_loader.h"
#include "tools/daemon/daemon_job.h"
#include "tools/daemon/worker.h"
#include "tools/engine/engine.h"
#include "tools/engine/explain.h"

namespace tidemark {

/// The engine's run options of a daemon job.
inline JobRunOptions ToJobRunOptions(const DaemonRunOptions& run) {
  return JobRunOptions{run.checkpoint_dir, run.restore_from, run.allow_non_restored_state};
}

/// CheckpointStats in the daemon's JSON shape (EmptyCheckpointStatsJson).
inline nlohmann::json CheckpointStatsToJson(const CheckpointStats& s) {
  nlohmann::json history = nlohmann::json::array();
  for (const CheckpointCoordinator::HistoryEntry& h : s.history) {
    history.push_back(
        {{"id", h.id},
         {"status", h.completed ? "COMPLETED" : "FAILED"},
         {"is_savepoint", h.savepoint},
         {"trigger_timestamp", h.trigger_ms},
         {"end_to_end_duration", h.duration_ms},
         {"state_size", h.size_bytes},
         {"alignment_duration", h.alignment_ms},
         {"failure_message", h.completed ? nlohmann::json(nullptr) : nlohmann::json(h.failure)}});
  }
  return nlohmann::json{{"restarts", s.restarts},
                        {"completed", s.completed},
                        {"failed", s.failed},
                        {"last-completed-id", s.last_completed_id},
                        {"last-size-bytes", s.last_size_bytes},
                        {"last-duration-ms", s.last_duration_ms},
                        {"last-alignment-ms", s.last_alignment_ms},
                        {"last-path", s.last_path},
                        {"history", std::move(history)},
                        {"restart-causes", s.restart_causes}};
}

/// A job of the built-in (or a given registry's) operators in this process: YAML text ->
/// LocalJob (the same loading and compiling as `tidemark run`, so an invalid job gets the same
/// file:line:column lines). What a worker process runs, and what a daemon without workers
/// (tests, an embedding program) runs on its own threads.
class LocalDaemonJob : public ExecutionDaemonJob {
 public:
  /// Takes the watermark snapshots `WatermarkExplanations` reads (one per task, before end of
  /// input).
  explicit LocalDaemonJob(std::unique_ptr<LocalJob> job) : job_(std::move(job)) {
    job_->execution().EnableWatermarkSnapshots();
  }
  const std::string& name() const override { return job_->spec().name; }
  JobExecution& execution() override { return job_->execution(); }
  const JobExecution& execution() const override { return job_->execution(); }
  std::optional<std::string> ReportLine() const override { return job_->ReportLine(); }
  std::map<std::string, std::string> WatermarkExplanations() const override {
    const std::vector<TaskWatermarkSnapshot> snapshots = job_->execution().WatermarkSnapshots();
    const ExplainContext context{false, ToString(job_->execution().state())};
    std::map<std::string, std::string> out{
        {"", ExplainWatermarks(job_->spec(), snapshots, "", context)}};
    for (const auto& op : job_->spec().operators) {
      out.emplace(op.id, ExplainWatermarks(job_->spec(), snapshots, op.id, context));
    }
    return out;
  }
  /// Live snapshots of the running tasks (waiting up to 2 s for their answers), explained on the
  /// calling thread before `done` returns.
  void ExplainLive(const std::string& operator_id,
                   std::function<void(std::optional<std::string>)> done) override {
    const std::vector<TaskWatermarkSnapshot> snapshots =
        job_->execution().LiveWatermarkSnapshots(std::chrono::seconds(2));
    done(ExplainWatermarks(job_->spec(), snapshots, operator_id, ExplainContext{true, ""}));
  }
  /// LocalJob::TriggerSavepoint; `done` runs on the job's master thread (or at once when refused)
  /// and, for a stop, before the job ends: a worker reports the answer before the job's end.
  void TriggerSavepoint(const DaemonSavepointRequest& request,
                        std::function<void(DaemonSavepointResult)> done) override {
    job_->TriggerSavepoint(SavepointRequest{request.dir, request.stop, request.drain},
                           [done = std::move(done)](SavepointResult r) {
                             done(DaemonSavepointResult{r.ok, r.path, r.error});
                           });
  }
  nlohmann::json CheckpointStatsJson() const override {
    return CheckpointStatsToJson(job_->checkpoint_stats());
  }

 private:
  std::unique_ptr<LocalJob> job_;
};

/// A JobFactory compiling against `registry` instead of the built-ins alone: a daemon embedded in
/// a C++ program (or a test) can run YAML jobs that use operator types registered by C++
/// (operators/user_operators.h). The factory shares ownership of `registry`, which must not be
/// modified afterwards (the factory is called from several threads at once).
inline JobFactory LocalJobFactory(std::shared_ptr<const OperatorRegistry> registry) {
  return
      [registry = std::move(registry)](const std::string& yaml, const std::string& file_name,
                                       JobResources::LineWriter line_writer,
                                       const DaemonRunOptions& run) -> std::unique_ptr<DaemonJob> {
        return std::make_unique<LocalDaemonJob>(LocalJob::Create(LoadJobSpecString(yaml, file_name),
                                                                 *registry, std::move(line_writer),
                                                                 ToJobRunOptions(run)));
      };
}

/// Throws ConfigError / JobCompileError for an invalid job, as JobFactory requires.
inline std::unique_ptr<DaemonJob> MakeLocalDaemonJob(const std::string& yaml,
                                                     const std::string& file_name,
                                                     JobResources::LineWriter line_writer,
                                                     const DaemonRunOptions& run) {
  return std::make_unique<LocalDaemonJob>(
      LocalJob::Create(LoadJobSpecString(yaml, file_name), BuiltinRegistry(),
                       std::move(line_writer), ToJobRunOptions(run)));
}

/// The daemon side of a worker job: loads and compiles the YAML against `registry` (the same
/// diagnostics as `tidemark run`) without deploying it, so no task, channel or thread of the job
/// exists in the daemon. Thread-safe; shares ownership of `registry`.
inline JobValidator LocalJobValidator(std::shared_ptr<const OperatorRegistry> registry) {
  return [registry = std::move(registry)](const std::string& yaml, const std::string& file_name) {
    const JobSpec spec = LoadJobSpecString(yaml, file_name);
    JobResources resources;
    const JobGraph graph = CompileJobGraph(spec, *registry, resources);
    return JobDescription{spec.name, VerticesOf(graph), OutputsOf(graph)};
  };
}

/// tidemarkd's factory: validated here, run in a worker process (`options.executable --worker`,
/// whose main() calls WorkerMain with a factory over the same registry).
inline JobFactory LocalWorkerJobFactory(std::shared_ptr<const OperatorRegistry> registry,
                                        WorkerOptions options) {
  return WorkerJobFactory(LocalJobValidator(std::move(registry)), std::move(options));
}

}  // namespace tidemark

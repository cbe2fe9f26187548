#include "tools/engine/engine.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/block_registry.h"
#include "operators/builtins.h"
#include "operators/lookup_join_operator.h"
#include "operators/sink_block.h"
#include "operators/window/window_block.h"
#include "runtime/checkpoint/state_assignment.h"
#include "runtime/core/errors.h"
#include "runtime/core/logging.h"
#include "runtime/eventtime/watermark_strategy_block.h"
#include "runtime/graph/state_layout.h"
#include "sources/builtins.h"
#include "sources/lookup_table_file.h"
#include "sources/source_blocks.h"

namespace tidemark {

const OperatorRegistry& BuiltinRegistry() {
  static const OperatorRegistry registry = [] {
    OperatorRegistry r;
    RegisterSourceBuiltins(r);
    RegisterOperatorBuiltins(r);
    RegisterLookupJoin(r, ReadLookupTableFile);
    return r;
  }();
  return registry;
}

const BlockRegistry& BuiltinBlockRegistry() {
  static const BlockRegistry registry = [] {
    BlockRegistry r;
    RegisterSourceBlocks(r);
    RegisterWatermarkStrategyBlock(r);
    RegisterWindowBlock(r);
    RegisterSinkBlock(r);
    r.SetOperatorTypes(BuiltinRegistry().Types());
    return r;
  }();
  return registry;
}

JobSpec LoadJobSpecFile(const std::string& path) {
  return LoadJobSpecFile(path, BuiltinBlockRegistry());
}

JobSpec LoadJobSpecString(const std::string& yaml, const std::string& file_name) {
  return LoadJobSpecString(yaml, file_name, BuiltinBlockRegistry());
}

std::unique_ptr<LocalJob> LocalJob::Create(const JobSpec& spec,
                                           JobResources::LineWriter line_writer) {
  return Create(spec, BuiltinRegistry(), std::move(line_writer));
}

namespace {

// The number of subtasks of `op` that hold state in `checkpoint` (the highest subtask + 1).
int SinkParallelismNeeded(const CompletedCheckpoint& checkpoint, const std::string& op) {
  int n = 0;
  for (const auto& [key, bytes] : checkpoint.states) {
    if (key.first == op) {
      n = std::max(n, key.second + 1);
    }
  }
  return n;
}

}  // namespace

std::unique_ptr<LocalJob> LocalJob::Create(const JobSpec& spec, const OperatorRegistry& registry,
                                           JobResources::LineWriter line_writer) {
  return Create(spec, registry, std::move(line_writer), JobRunOptions{});
}

std::unique_ptr<LocalJob> LocalJob::Create(const JobSpec& spec, const OperatorRegistry& registry,
                                           JobResources::LineWriter line_writer,
                                           const JobRunOptions& options) {
  std::unique_ptr<LocalJob> job(new LocalJob());
  job->spec_ = spec;
  job->options_ = options;
  job->resources_ = std::make_unique<JobResources>();
  if (line_writer) {
    job->resources_->SetLineWriter(std::move(line_writer));
  }
  if (spec.report) {
    job->resources_->RetainRowsOf(spec.report->windows_sink);
    job->resources_->RetainRowsOf(spec.report->late_sink);
  }
  JobGraph graph = CompileJobGraph(job->spec_, registry, *job->resources_);
  JobCheckpointOptions checkpoint_options;
  checkpoint_options.checkpoint_dir = options.checkpoint_dir;
  if (!options.restore_from.empty()) {
    std::vector<std::string> skipped;
    auto restored = std::make_shared<CompletedCheckpoint>(
        CheckpointStorage::Load(options.restore_from, spec.name, &skipped));
    // Never write committed output twice (as the daemon's recovery): a checkpoint root whose
    // newer completed checkpoints were passed over is refused when that is unsafe.
    if (std::optional<std::string> unsafe =
            CheckpointStorage::UnsafeFallBack(spec, options.restore_from, restored->id, skipped)) {
      throw Error(fmt::format(
          "cannot restore from {}: {}; restore from a checkpoint or savepoint you trust by naming "
          "its directory (--from-checkpoint DIR/chk-<id>), or run without one to start from "
          "scratch",
          options.restore_from.string(), *unsafe));
    }
    if (restored->drained && spec.checkpointing && spec.checkpointing->restore_watermarks) {
      // Its watermarks are the end of time: restored, every record the sources read on is late.
      throw Error(
          fmt::format("cannot restore from {} with checkpointing.restore-watermarks: it is the "
                      "savepoint of a stop "
                      "with drain, whose watermarks are at the end of time, so every record read "
                      "after it would be "
                      "late; restore it without restore-watermarks (as Flink does), or from a "
                      "savepoint taken without "
                      "drain",
                      restored->directory.string()));
    }
    // An operator restored at another parallelism than it was checkpointed at (Flink's
    // StateAssignmentOperation): keyed state goes to the subtasks that own its key groups now, a
    // source's splits are handed round-robin to the new readers, each resuming from its position.
    {
      std::map<std::string, RestoreTarget> targets;
      for (const JobVertex& v : graph.vertices) {
        targets[v.spec.id] = RestoreTarget{v.parallelism, graph.pipeline.max_parallelism,
                                           v.spec.type == "source" || !v.spec.key_by.empty()};
      }
      const bool restore_watermarks = spec.checkpointing && spec.checkpointing->restore_watermarks;
      for (const std::string& op : AssignStatesForRestore(*restored, targets, restore_watermarks)) {
        GetLogger("checkpoint")
            ->info("restoring from {}: operator \"{}\" redistributed to parallelism {}",
                   restored->directory.string(), op, targets[op].parallelism);
      }
    }
    // State is matched by operator id (and subtask): state of an operator the job no longer has
    // is an error unless allowed (Flink's --allowNonRestoredState).
    std::vector<std::string> unknown;
    for (auto it = restored->states.begin(); it != restored->states.end();) {
      const auto& [op, subtask] = it->first;
      bool found = false;
      for (const JobVertex& v : graph.vertices) {
        found = found || (v.spec.id == op && subtask < v.parallelism);
        if (v.spec.id == op && subtask >= v.parallelism && v.spec.type == "sink") {
          // A sink's state is per subtask (its file position, the files a checkpoint covered and
          // not yet committed) and is not handed to another subtask: skipping it would lose rows
          // the checkpoint covered, so no flag allows it (Flink hands a FileSink's committables
          // to the remaining subtasks; tidemark does not yet).
          throw Error(fmt::format(
              "cannot restore from {}: sink \"{}\" ran with more subtasks in the checkpoint than "
              "its parallelism {} here, and the state of its subtask {} (output the checkpoint "
              "covered and not yet committed) cannot be handed to another subtask, so it would be "
              "lost; restore with this sink at parallelism {} or more (an operator's own "
              "`parallelism:` sets it apart from the pipeline's)",
              restored->directory.string(), op, v.parallelism, subtask,
              SinkParallelismNeeded(*restored, op)));
        }
      }
      if (found) {
        ++it;
        continue;
      }
      unknown.push_back(fmt::format("{}#{}", op, subtask));
      it = restored->states.erase(it);
    }
    if (!unknown.empty()) {
      std::string list;
      for (const std::string& u : unknown) {
        list += (list.empty() ? "" : ", ") + u;
      }
      if (!options.allow_non_restored_state) {
        throw Error(
            fmt::format("cannot restore from {}: it holds state of operator subtasks this job does "
                        "not have ({}); "
                        "pass --allow-non-restored-state to skip it",
                        restored->directory.string(), list));
      }
      GetLogger("checkpoint")
          ->warn("restoring from {}: skipping state of {} (not in this job)",
                 restored->directory.string(), list);
    }
    // What the state means must not have changed for the same operator id (Flink: an
    // incompatible key serializer or state type is a StateMigrationException): a changed key
    // would split a window over the old and the new key.
    const std::map<std::string, OperatorStateLayout> layouts = StateLayoutsOf(graph);
    for (const auto& [op, checkpointed] : restored->layouts) {
      bool has_state = false;
      for (const auto& [key, bytes] : restored->states) {
        has_state = has_state || key.first == op;
      }
      auto now = layouts.find(op);
      if (!has_state) {
        continue;
      }
      const std::string change = StateLayoutChange(
          op, checkpointed, now == layouts.end() ? OperatorStateLayout{} : now->second);
      if (!change.empty()) {
        throw Error(
            fmt::format("cannot restore from {}: {}; its checkpointed state cannot be read as the "
                        "new one. Restore it into "
                        "the job as it was, or give the changed operator a new id and pass "
                        "--allow-non-restored-state to "
                        "start it empty",
                        restored->directory.string(), change));
      }
    }
    // An incremental checkpoint's state is RocksDB's own files (its "shared" SST files): only
    // the RocksDB state backend reads it, and a job on another backend would fail the same way
    // on every attempt (Flink restores an incremental RocksDB checkpoint only into RocksDB).
    if (graph.pipeline.state_backend != "rocksdb") {
      for (const auto& [key, files] : restored->shared) {
        const bool restored_here =
            std::any_of(restored->states.begin(), restored->states.end(),
                        [&op = key.first](const auto& state) { return state.first.first == op; });
        if (!files.empty() && restored_here) {
          throw Error(fmt::format(
              "cannot restore from {}: the state of operator \"{}\" is an incremental RocksDB "
              "checkpoint, which restores only with pipeline.state-backend: rocksdb (this job "
              "has {}); to change the state backend, restore from a savepoint (tidemark "
              "savepoint, or stop --savepoint), which is canonical and backend-independent",
              restored->directory.string(), key.first, graph.pipeline.state_backend));
        }
      }
    }
    checkpoint_options.restored = std::move(restored);
  }
  job->execution_ = std::make_unique<JobExecution>(std::move(graph), std::move(checkpoint_options));
  return job;
}

std::future<SavepointResult> LocalJob::TriggerSavepoint(const SavepointRequest& request) {
  auto promise = std::make_shared<std::promise<SavepointResult>>();
  std::future<SavepointResult> future = promise->get_future();
  TriggerSavepoint(request, [promise](SavepointResult r) { promise->set_value(std::move(r)); });
  return future;
}

void LocalJob::TriggerSavepoint(const SavepointRequest& request,
                                std::function<void(SavepointResult)> done) {
  execution_->TriggerSavepoint(
      request.dir, request.stop, request.drain,
      [done = std::move(done)](const SavepointOutcome& o) {
        done(SavepointResult{o.ok, o.ok ? o.path.string() : std::string(), o.error});
      });
}

CheckpointStats LocalJob::checkpoint_stats() const {
  const CheckpointCoordinator::Stats s = execution_->checkpoint_stats();
  CheckpointStats out;
  out.restarts = execution_->restarts();
  out.completed = s.completed;
  out.failed = s.failed;
  out.last_completed_id = s.latest_completed_id;
  out.last_size_bytes = static_cast<int64_t>(s.latest_size_bytes);
  out.last_duration_ms = s.latest_duration_ms;
  out.last_alignment_ms = s.latest_alignment_ms;
  if (s.latest_completed_id > 0) {
    out.last_path = s.latest_path.string();
  }
  out.history = s.history;
  out.restart_causes = execution_->restart_causes();
  return out;
}

std::optional<std::string> LocalJob::ReportLine() const {
  if (!spec_.report) {
    return std::nullopt;
  }
  const ReportSpec& r = *spec_.report;
  int64_t windows = 0;
  int64_t in_windows = 0;
  if (auto sink = resources_->FindSinkResult(r.windows_sink)) {
    const int count_slot = sink->schema().IndexOf("count");
    for (const StreamRecord& rec : sink->Records()) {
      ++windows;
      if (count_slot >= 0) {
        in_windows += AsInt64(rec.row.Get(static_cast<size_t>(count_slot))).value_or(0);
      }
    }
  }
  int64_t late = 0;
  int64_t late_breakdown = 0;
  if (auto sink = resources_->FindSinkResult(r.late_sink)) {
    const int field_slot =
        r.breakdown_field.empty() ? -1 : sink->schema().IndexOf(r.breakdown_field);
    for (const StreamRecord& rec : sink->Records()) {
      ++late;
      if (field_slot >= 0) {
        const Value v = rec.row.Get(static_cast<size_t>(field_slot));
        const auto* s = std::get_if<std::string>(&v);
        if ((s != nullptr && *s == r.breakdown_value) ||
            (s == nullptr && ValueToJson(v) == r.breakdown_value)) {
          ++late_breakdown;
        }
      }
    }
  }
  // A report without a label prints none (not ">>> : ...").
  std::string line = fmt::format(">>> {}{}windows fired={}, records in windows={}, late records={}",
                                 r.label, r.label.empty() ? "" : ": ", windows, in_windows, late);
  if (!r.breakdown_field.empty()) {
    line += fmt::format(" (from {} {}: {})", r.breakdown_value, r.breakdown_field, late_breakdown);
  }
  line += fmt::format(", total={}", in_windows + late);
  return line;
}

}  // namespace tidemark

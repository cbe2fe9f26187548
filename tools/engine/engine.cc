#include "tools/engine/engine.h"

#include <fmt/format.h>

#include "operators/builtins.h"
#include "runtime/core/errors.h"
#include "sources/builtins.h"

namespace tidemark {

const OperatorRegistry& BuiltinRegistry() {
  static const OperatorRegistry registry = [] {
    OperatorRegistry r;
    RegisterSourceBuiltins(r);
    RegisterOperatorBuiltins(r);
    return r;
  }();
  return registry;
}

std::unique_ptr<LocalJob> LocalJob::Create(const JobSpec& spec, JobResources::LineWriter line_writer) {
  return Create(spec, BuiltinRegistry(), std::move(line_writer));
}

std::unique_ptr<LocalJob> LocalJob::Create(const JobSpec& spec, const OperatorRegistry& registry,
                                           JobResources::LineWriter line_writer) {
  return Create(spec, registry, std::move(line_writer), JobRunOptions{});
}

std::unique_ptr<LocalJob> LocalJob::Create(const JobSpec& spec, const OperatorRegistry& registry,
                                           JobResources::LineWriter line_writer, const JobRunOptions& options) {
  std::unique_ptr<LocalJob> job(new LocalJob());
  job->spec_ = spec;
  job->options_ = options;
  if (!options.restore_from.empty()) {
    throw Error(fmt::format("cannot restore from '{}': this build does not restore jobs yet",
                            options.restore_from.string()));
  }
  job->resources_ = std::make_unique<JobResources>();
  if (line_writer) {
    job->resources_->SetLineWriter(std::move(line_writer));
  }
  if (spec.report) {
    job->resources_->RetainRowsOf(spec.report->windows_sink);
    job->resources_->RetainRowsOf(spec.report->late_sink);
  }
  JobGraph graph = CompileJobGraph(job->spec_, registry, *job->resources_);
  job->execution_ = std::make_unique<JobExecution>(std::move(graph));
  return job;
}

std::future<SavepointResult> LocalJob::TriggerSavepoint(const SavepointRequest&) {
  std::promise<SavepointResult> promise;
  promise.set_value(SavepointResult{false, {}, "savepoints are not supported by this build yet"});
  return promise.get_future();
}

CheckpointStats LocalJob::checkpoint_stats() const { return {}; }

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
        in_windows += AsInt64(rec.row[static_cast<size_t>(count_slot)]).value_or(0);
      }
    }
  }
  int64_t late = 0;
  int64_t late_breakdown = 0;
  if (auto sink = resources_->FindSinkResult(r.late_sink)) {
    const int field_slot = r.breakdown_field.empty() ? -1 : sink->schema().IndexOf(r.breakdown_field);
    for (const StreamRecord& rec : sink->Records()) {
      ++late;
      if (field_slot >= 0) {
        const Value& v = rec.row[static_cast<size_t>(field_slot)];
        const auto* s = std::get_if<std::string>(&v);
        if ((s != nullptr && *s == r.breakdown_value) || (s == nullptr && ValueToJson(v) == r.breakdown_value)) {
          ++late_breakdown;
        }
      }
    }
  }
  std::string line = fmt::format(">>> {}: windows fired={}, records in windows={}, late records={}", r.label,
                                 windows, in_windows, late);
  if (!r.breakdown_field.empty()) {
    line += fmt::format(" (from {} {}: {})", r.breakdown_value, r.breakdown_field, late_breakdown);
  }
  line += fmt::format(", total={}", in_windows + late);
  return line;
}

}  // namespace tidemark

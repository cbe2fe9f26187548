#pragma once

#include <memory>
#include <optional>
#include <string>

#include "config/job_spec.h"
#include "runtime/graph/job_execution.h"
#include "runtime/graph/job_resources.h"
#include "runtime/graph/operator_registry.h"

namespace tidemark {

/// The registry with every built-in operator and source type (explicit registration).
/// Built once on first use; thread-safe to read.
const OperatorRegistry& BuiltinRegistry();

/// A compiled and deployed job: its resources, its execution, its report. What `tidemark run`
/// and the daemon both hold per job.
/// Thread-safe as JobExecution is; the object must outlive its execution (destroying it cancels
/// and joins a running job).
class LocalJob {
 public:
  /// Compiles `spec` (throws JobCompileError with file:line:column lines). `line_writer`
  /// receives print-sink lines (default stdout).
  static std::unique_ptr<LocalJob> Create(const JobSpec& spec, JobResources::LineWriter line_writer = {});
  /// As above, compiling against `registry` (e.g. built-ins plus user operator types, or a
  /// C++ JobBuilder's registry); `registry` is only used during the call.
  static std::unique_ptr<LocalJob> Create(const JobSpec& spec, const OperatorRegistry& registry,
                                          JobResources::LineWriter line_writer = {});

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
  std::unique_ptr<JobResources> resources_;
  std::unique_ptr<JobExecution> execution_;
};

}  // namespace tidemark

#pragma once

#include <memory>
#include <optional>
#include <string>

#include "config/job_loader.h"
#include "runtime/daemon/job_manager.h"
#include "tools/engine/engine.h"

namespace tidemark {

/// The daemon's job factory over the built-in operators: YAML text -> LocalJob (the same loading
/// and compiling as `tidemark run`, so an invalid job gets the same file:line:column lines).
/// Thread-safe (LoadJobSpecString and LocalJob::Create share no mutable state).
class LocalDaemonJob : public DaemonJob {
 public:
  explicit LocalDaemonJob(std::unique_ptr<LocalJob> job) : job_(std::move(job)) {}
  const std::string& name() const override { return job_->spec().name; }
  JobExecution& execution() override { return job_->execution(); }
  std::optional<std::string> ReportLine() const override { return job_->ReportLine(); }

 private:
  std::unique_ptr<LocalJob> job_;
};

/// A JobFactory compiling against `registry` instead of the built-ins alone: a daemon embedded in
/// a C++ program (or a test) can run YAML jobs that use operator types registered by C++
/// (operators/user_operators.h). The factory shares ownership of `registry`, which must not be
/// modified afterwards (the factory is called from several threads at once).
inline JobFactory LocalJobFactory(std::shared_ptr<const OperatorRegistry> registry) {
  return [registry = std::move(registry)](const std::string& yaml, const std::string& file_name,
                                          JobResources::LineWriter line_writer) -> std::unique_ptr<DaemonJob> {
    return std::make_unique<LocalDaemonJob>(
        LocalJob::Create(LoadJobSpecString(yaml, file_name), *registry, std::move(line_writer)));
  };
}

/// Throws ConfigError / JobCompileError for an invalid job, as JobFactory requires.
inline std::unique_ptr<DaemonJob> MakeLocalDaemonJob(const std::string& yaml, const std::string& file_name,
                                                     JobResources::LineWriter line_writer) {
  return std::make_unique<LocalDaemonJob>(
      LocalJob::Create(LoadJobSpecString(yaml, file_name), std::move(line_writer)));
}

}  // namespace tidemark

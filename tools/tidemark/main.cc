// `tidemark`: the command line. `tidemark run JOB.yaml` runs a job embedded, without a daemon.
//
// Exit codes: 0 the job FINISHED; 1 the job FAILED or was CANCELED; 2 usage error or invalid job
// (file:line:column diagnostics on stderr).

#include <csignal>
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "config/job_loader.h"
#include "runtime/core/logging.h"
#include "runtime/graph/job_graph.h"
#include "tools/bench/bench_command.h"
#include "tools/engine/engine.h"

namespace {

std::atomic<tidemark::JobExecution*> g_running{nullptr};

void OnSignal(int) {
  if (auto* e = g_running.load()) {
    e->Cancel();  // only sets flags and signals condition variables' atomics
  }
}

int RunJob(const std::string& path, bool print_metrics) {
  using namespace tidemark;
  std::unique_ptr<LocalJob> job;
  try {
    job = LocalJob::Create(LoadJobSpecFile(path));
  } catch (const ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const JobCompileError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  g_running.store(&job->execution());
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  job->execution().Start();
  const JobState state = job->execution().Wait();
  g_running.store(nullptr);
  if (print_metrics) {
    for (const auto& m : job->execution().Metrics()) {
      std::cerr << fmt::format("metrics: task={}#{} records_in={} finished={}\n", m.task, m.subtask_index,
                               m.records_in, m.finished);
    }
  }
  if (state != JobState::kFinished) {
    std::cerr << fmt::format("job '{}' {}: {}\n", job->spec().name, ToString(state),
                             job->execution().failure_cause());
    return 1;
  }
  if (auto line = job->ReportLine()) {
    job->resources().WriteLine(*line);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tidemark: a single-node stream processor with Flink's event-time semantics"};
  app.require_subcommand(1);
  std::string job_path;
  bool metrics = false;
  auto* run = app.add_subcommand("run", "Run a job embedded, without a daemon; exit 0 when it FINISHED");
  run->add_option("job", job_path, "job YAML file")->required();
  run->add_flag("--metrics", metrics, "print per-subtask metrics to stderr at the end");
  tidemark::bench::BenchOptions bench_options;
  auto* bench = tidemark::bench::AddBenchSubcommand(app, bench_options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*run) {
    return RunJob(job_path, metrics);
  }
  if (*bench) {
    return tidemark::bench::RunBench(bench_options);
  }
  return 2;
}

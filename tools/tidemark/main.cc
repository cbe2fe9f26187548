// `tidemark`: the command line. `tidemark run JOB.yaml` runs a job embedded, without a daemon;
// `tidemark validate JOB.yaml` only loads and compiles it; `submit`, `list`, `status`, `cancel`,
// `logs`, `explain`, `savepoint` and `stop` talk to `tidemarkd` (tools/tidemark/daemon_commands.h).
//
// Exit codes: 0 ok (the job FINISHED; the job is valid); 1 the job FAILED or was CANCELED, or
// `cancel` found it already ended; 2 usage error, invalid job (file:line:column diagnostics on
// stderr) or unknown job id; 3 the daemon is unreachable.

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <pthread.h>
#include <string>
#include <sys/file.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "config/job_loader.h"
#include "config/rocksdb_local_dir_check.h"
#include "runtime/core/logging.h"
#include "runtime/core/thread_entry.h"
#include "runtime/core/time_format.h"
#include "runtime/graph/dropped_records.h"
#include "runtime/graph/job_graph.h"
#include "runtime/task/watermark_trace.h"
#include "tools/analyze/lateness_analysis.h"
#include "tools/bench/bench_command.h"
#include "tools/daemon/daemon_paths.h"
#include "tools/engine/engine.h"
#include "tools/engine/explain.h"
#include "tools/export/flink_sql_export.h"
#include "tools/tidemark/daemon_commands.h"
#include "tools/tidemark/kafka_mock_command.h"
#include "tools/tidemark/progress.h"

namespace {

std::atomic<int> g_signal{0};  ///< the signal that cancelled the running job; 0: none
/// g_signal's value when the signal thread failed and cancelled the job itself.
constexpr int kSignalThreadFailed = -1;
/// Why the signal thread failed; written once, before g_signal is set to kSignalThreadFailed.
std::string g_signal_thread_failure;  // NOLINT(cert-err58-cpp)

/// Ctrl-C (SIGINT) and SIGTERM cancel the running job. `JobExecution::Cancel` takes locks, which a
/// signal handler must not (a signal landing in a thread that holds one deadlocks), so the two
/// signals are blocked in every thread (`Block`, before any thread of the job exists: threads
/// inherit the mask) and one thread takes them with sigwait and cancels the job from there. Made
/// before the job starts (its thread must not be the one that finds no room left, see
/// TidemarkRunBinaryTest); a signal taken before `Start` is acted on by `CancelIfSignalled` after.
/// When its thread cannot be created, the signals are unblocked again: they end the process.
class SignalCanceller {
 public:
  static void Block() { Mask(SIG_BLOCK); }
  explicit SignalCanceller(tidemark::JobExecution& execution) : execution_(execution) {
    try {
      thread_ = std::thread([this] {
        tidemark::RunThreadEntry(
            "signal",
            [this] {
              const sigset_t set = Signals();
              int signal = 0;
              while (sigwait(&set, &signal) == 0 && !done_.load()) {
                g_signal.store(signal);
                execution_.Cancel();
              }
            },
            [this](const std::string& cause) {
              // Ctrl-C could no longer stop the job (the signals stay blocked in its threads):
              // the job is cancelled now, and the run's last line says why.
              g_signal_thread_failure = cause;
              g_signal.store(kSignalThreadFailed);
              execution_.Cancel();
            });
      });
    } catch (const std::system_error&) {
      Mask(SIG_UNBLOCK);
    }
  }
  /// After `Start`: a signal taken before it (when Cancel had nothing to stop yet).
  void CancelIfSignalled() {
    if (g_signal.load() != 0) {
      execution_.Cancel();
    }
  }
  ~SignalCanceller() {
    if (thread_.joinable()) {
      done_.store(true);
      pthread_kill(thread_.native_handle(), SIGTERM);  // wakes the sigwait, which then returns
      thread_.join();
    }
  }
  SignalCanceller(const SignalCanceller&) = delete;
  SignalCanceller& operator=(const SignalCanceller&) = delete;

 private:
  static void Mask(int how) {
    const sigset_t set = Signals();
    pthread_sigmask(how, &set, nullptr);
  }
  static sigset_t Signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    return set;
  }
  tidemark::JobExecution& execution_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

/// Why the job ended as it did, for the last line on stderr: the failure, or who cancelled it
/// (a CANCELED job has no failure cause of its own).
std::string EndCause(tidemark::JobState state, const std::string& failure_cause) {
  if (!failure_cause.empty()) {
    return failure_cause;
  }
  if (state == tidemark::JobState::kCanceled) {
    switch (g_signal.load()) {
      case SIGINT:
        return "cancelled by the user (SIGINT, Ctrl-C)";
      case SIGTERM:
        return "cancelled by SIGTERM";
      case kSignalThreadFailed:
        return "cancelled: the thread that takes Ctrl-C and SIGTERM failed (" +
               g_signal_thread_failure + ")";
      default:
        return "cancelled";
    }
  }
  return "no cause recorded";
}

struct RunOptions {
  bool print_metrics = false;
  std::string trace_path;  ///< --trace: JSON Lines of the event-time flow; empty: none
  bool explain = false;    ///< --explain: why each window's watermark stood where it did
  std::string explain_operator;
  tidemark::JobRunOptions
      job;  ///< --from-checkpoint / --from-savepoint, --allow-non-restored-state
};

// Loads and compiles the job as `run` would, runs nothing: every problem on stderr and exit 2,
// or one line on stdout and exit 0.
int ValidateJob(const std::string& path) {
  using namespace tidemark;
  try {
    JobSpec spec = LoadJobSpecFile(path);
    if (std::vector<Diagnostic> problems = WorkingDirectoryProblems(spec); !problems.empty()) {
      throw ConfigError(std::move(problems));
    }
    std::unique_ptr<LocalJob> job = LocalJob::Create(spec);
    std::cout << fmt::format("{}: valid: job '{}', {} operators\n", EscapeControlCharacters(path),
                             EscapeControlCharacters(job->spec().name),
                             job->spec().operators.size());
    return 0;
  } catch (const ConfigError& e) {
    std::cerr << e.what() << "\n";
  } catch (const JobCompileError& e) {
    std::cerr << e.what() << "\n";
  } catch (const Error& e) {
    std::cerr << e.what() << "\n";  // what `run` would refuse the job with before it starts
  }
  return 2;
}

/// `tidemark run` of a job that checkpoints into `dir` (its `checkpointing.dir`): takes an
/// exclusive flock(2) on `dir/tidemark-run.lock` (created with `dir`, mode 0600, this process's
/// pid written into it) for the rest of the process's life; the kernel releases it at exit, even
/// after kill -9. Two runs writing the same checkpoints would fence each other's Kafka
/// transactions at best and commit twice at worst (a stopped run woken after its restored
/// successor finished). Empty when locked, else the error to print (the holder's pid when known).
std::string LockCheckpointDirectory(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path path = dir / "tidemark-run.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return fmt::format("tidemark run: cannot lock checkpoint directory '{}': {}: {}", dir.string(),
                       path.string(),
                       ec ? ec.message() : std::string(std::generic_category().message(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    ::close(fd);
    std::string holder(buf, n > 0 ? static_cast<size_t>(n) : 0);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) {
      holder.pop_back();
    }
    return fmt::format(
        "tidemark run: checkpoint directory '{}' is in use by {}: another run of a job "
        "checkpointing there (stopped or running); end it first, or give this run another "
        "checkpointing.dir",
        dir.string(), holder.empty() ? "another process" : "pid " + holder);
  }
  const std::string pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The lock holds regardless; the pid is only for the message above.
  }
  return "";  // fd stays open (and locked) until this process exits
}

int RunJob(const std::string& path, const RunOptions& options) {
  using namespace tidemark;
  const bool print_metrics = options.print_metrics;
  // Declared before the job, so it outlives every task that records into it; opened (and an
  // existing file truncated) only once the job is valid, so a job refused leaves it as it was.
  std::ofstream trace_file;
  std::unique_ptr<WatermarkTrace> trace;
  SignalCanceller::Block();  // a Ctrl-C from now on waits (pending) for the canceller below
  std::unique_ptr<LocalJob> job;
  try {
    JobSpec spec = LoadJobSpecFile(path);
    if (std::vector<Diagnostic> problems = WorkingDirectoryProblems(spec); !problems.empty()) {
      throw ConfigError(std::move(problems));
    }
    if (spec.checkpointing && !spec.checkpointing->dir.empty()) {
      if (const std::string error = LockCheckpointDirectory(spec.checkpointing->dir);
          !error.empty()) {
        std::cerr << error << "\n";
        return 2;
      }
    }
    job = LocalJob::Create(std::move(spec), BuiltinRegistry(), {}, options.job);
  } catch (const ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const JobCompileError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << e.what() << "\n";  // a checkpoint or savepoint that cannot be restored
    return 2;
  }
  if (!options.explain_operator.empty()) {
    // A misspelt id is a usage error before the job runs, not a line after a whole run.
    std::string ids;
    bool known = false;
    for (const OperatorSpec& op : job->spec().operators) {
      known = known || op.id == options.explain_operator;
      ids += (ids.empty() ? "" : ", ") + op.id;
    }
    if (!known) {
      std::cerr << fmt::format(
          "--explain-operator: no operator '{}' in job '{}' (its operators: {})\n",
          EscapeControlCharacters(options.explain_operator),
          EscapeControlCharacters(job->spec().name), EscapeControlCharacters(ids));
      return 2;
    }
  }
  if (!options.trace_path.empty()) {
    trace_file.open(options.trace_path, std::ios::out | std::ios::trunc);
    if (!trace_file) {
      std::cerr << fmt::format("--trace: cannot write {}: {}\n", options.trace_path,
                               std::generic_category().message(errno));
      return 2;
    }
    trace = std::make_unique<WatermarkTrace>(
        [&trace_file](const std::string& line) { trace_file << line << '\n'; });
    job->execution().SetTrace(trace.get());
  }
  if (options.explain) {
    job->execution().EnableWatermarkSnapshots();
  }
  std::optional<SignalCanceller> canceller;
  canceller.emplace(job->execution());
  job->execution().Start();
  canceller->CancelIfSignalled();
  // On a terminal, a progress line on stderr (records per split, the current watermark),
  // refreshed every 250 ms and erased at the end; never when stderr is a file or a pipe.
  if (isatty(STDERR_FILENO) != 0) {
    const auto t0 = std::chrono::steady_clock::now();
    while (!job->execution().WaitFor(std::chrono::milliseconds(250))) {
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::cerr << "\r\033[K" << ProgressLine(job->execution().Metrics(), elapsed) << std::flush;
    }
    std::cerr << "\r\033[K" << std::flush;
  }
  const JobState state = job->execution().Wait();
  canceller.reset();
  if (print_metrics) {
    for (const auto& m : job->execution().Metrics()) {
      std::cerr << fmt::format("metrics: task={}#{} records_in={} input_watermark={} finished={}\n",
                               m.task, m.subtask_index, m.records_in,
                               FormatEventTime(m.input_watermark), m.finished);
      for (const auto& op : m.operators) {
        std::string line =
            fmt::format("metrics:   operator={} records_out={} output_watermark={}", op.name,
                        op.records_out, FormatEventTime(op.output_watermark));
        for (const auto& [name, value] : op.gauges) {
          const bool is_time = name.find("atermark") != std::string::npos;
          line +=
              fmt::format(" {}={}", name, is_time ? FormatEventTime(value) : std::to_string(value));
        }
        std::cerr << line << "\n";
      }
    }
  }
  if (options.explain) {
    std::cerr << ExplainWatermarks(job->spec(), job->execution().WatermarkSnapshots(),
                                   options.explain_operator);
  }
  if (trace) {
    trace_file.flush();
    if (!trace_file) {
      std::cerr << fmt::format("--trace: writing {} failed\n", options.trace_path);
    }
  }
  // What the job did not turn into results (rejected input, records without timestamp, late
  // records dropped, records not delivered), one line each; nothing when all are zero.
  const std::vector<std::string> dropped = DroppedRecordLines(job->execution().Metrics());
  // Operators that kept their keyed state on the heap with `state-backend: rocksdb`.
  const std::vector<std::string> fallbacks = StateBackendFallbackLines(job->execution().Metrics());
  // The failures the job restarted from: its results came after them, and a user must not learn
  // of one only from a log line far above (a restart may have resumed on changed input).
  const CheckpointStats checkpoints = job->checkpoint_stats();
  std::vector<std::string> restarts;
  if (checkpoints.restarts > 0) {
    restarts.push_back(fmt::format(
        "job '{}' restarted {} time{} from a failure{}:", EscapeControlCharacters(job->spec().name),
        checkpoints.restarts, checkpoints.restarts == 1 ? "" : "s",
        checkpoints.restarts > static_cast<int64_t>(checkpoints.restart_causes.size())
            ? fmt::format(" (the last {} causes)", checkpoints.restart_causes.size())
            : std::string()));
    for (const std::string& cause : checkpoints.restart_causes) {
      restarts.push_back("  restart cause: " + EscapeControlCharacters(cause));
    }
  }
  std::string end;
  if (state != JobState::kFinished) {
    end = fmt::format("job '{}' {}: {}\n", EscapeControlCharacters(job->spec().name),
                      ToString(state), EndCause(state, job->execution().failure_cause()));
    // The job goes first, its operators with it: a Kafka client's threads log a fatal error
    // (librdkafka's own "%3|..." lines) until the client is destroyed, and the run's last line
    // is the one that states its outcome.
    job.reset();
  }
  for (const std::string& line : fallbacks) {
    std::cerr << line << "\n";
  }
  for (const std::string& line : restarts) {
    std::cerr << line << "\n";
  }
  for (const std::string& line : dropped) {
    std::cerr << line << "\n";
  }
  if (!end.empty()) {
    std::cerr << end;
    return 1;
  }
  if (auto line = job->ReportLine()) {
    job->resources().WriteLine(*line);
  }
  return 0;
}

/// `tidemark analyze`: exit 0 with the report; 2 for a usage error or an invalid job.
int AnalyzeJob(const std::string& path, const std::string& source, const std::string& late,
               bool json, const std::string& svg_path, bool run, int64_t max_records) {
  using namespace tidemark;
  const std::optional<double> target = analyze::ParseLateTarget(late);
  if (!target) {
    std::cerr << fmt::format(
        "tidemark analyze: --late: expected a percentage in [0%, 100%) like 0.1%, got '{}'\n",
        late);
    return 2;
  }
  if (max_records <= 0) {
    std::cerr << "tidemark analyze: --max-records: must be at least 1\n";
    return 2;
  }
  try {
    const JobSpec spec = LoadJobSpecFile(path);
    analyze::AnalyzeOptions options;
    options.source_id = source;
    options.target_late = *target;
    options.run = run;
    options.max_records = max_records;
    const std::vector<analyze::SourceAnalysis> result = analyze::Analyze(spec, options);
    if (!svg_path.empty()) {
      std::ofstream out(svg_path, std::ios::binary | std::ios::trunc);
      out << analyze::FormatSvg(spec, result);
      if (!out.flush()) {
        std::cerr << fmt::format("tidemark analyze: cannot write '{}'\n", svg_path);
        return 2;
      }
    }
    std::cout << (json ? analyze::FormatJson(spec, result) : analyze::FormatText(spec, result));
    return 0;
  } catch (const ConfigError& e) {
    std::cerr << e.what() << "\n";
  } catch (const JobCompileError& e) {
    std::cerr << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "tidemark analyze: " << e.what() << "\n";
  }
  return 2;
}

/// `tidemark export --flink-sql JOB.yaml [-o FILE] [--best-effort]`: exit 0 with the script; 2 for
/// a job that does not load or compile, or (without --best-effort) has features Flink SQL cannot
/// express — one `file:line:column: error: ...` line each on stderr, and nothing written.
int ExportJob(const std::string& path, const std::string& output, bool best_effort) {
  using namespace tidemark;
  FlinkSqlExport result;
  try {
    const JobSpec spec = LoadJobSpecFile(path);
    JobResources resources;
    const JobGraph graph = CompileJobGraph(spec, BuiltinRegistry(), resources);
    result = ExportFlinkSql(spec, graph);
  } catch (const ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const JobCompileError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  for (const ExportProblem& p : result.problems) {
    std::string line = p.ToString();
    if (best_effort) {
      line.replace(line.find(": error: "), 9, ": warning: ");
    }
    std::cerr << line << "\n";
  }
  if (!result.problems.empty() && !best_effort) {
    std::cerr << fmt::format(
        "tidemark export: {} feature(s) of '{}' have no Flink SQL form; nothing written "
        "(--best-effort writes the rest)\n",
        result.problems.size(), path);
    return 2;
  }
  if (output.empty() || output == "-") {
    std::cout << result.sql << std::flush;
    return 0;
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out << result.sql;
  out.close();
  if (!out) {
    std::cerr << fmt::format("tidemark export: cannot write '{}'\n", output);
    return 2;
  }
  return 0;
}

/// The first word of the command line that is neither an option, an option's value nor a
/// subcommand of `app`, when no subcommand was given; "" otherwise.
std::string UnknownCommand(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--socket" || arg == "--url" || arg == "--token-file") {
      ++i;  // its value
      continue;
    }
    if (arg.empty() || arg.front() == '-') {
      continue;
    }
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == arg) {
        return "";
      }
    }
    return arg;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tidemark: a single-node stream processor with Flink's event-time semantics"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tidemark ") + TM_VERSION);
  std::string job_path;
  bool metrics = false;
  std::string trace_path;
  bool explain = false;
  std::string explain_operator;
  auto* run =
      app.add_subcommand("run", "Run a job embedded, without a daemon; exit 0 when it FINISHED");
  run->add_option("job", job_path, "job YAML file")->required();
  run->add_flag("--metrics", metrics, "print per-subtask metrics to stderr at the end");
  std::string from_checkpoint;
  std::string from_savepoint;
  bool allow_non_restored = false;
  auto* from_checkpoint_opt = run->add_option("--from-checkpoint", from_checkpoint,
                                              "restore from a checkpoint: a chk-<id> directory, or "
                                              "a checkpoint directory (its latest complete one)");
  run->add_option("--from-savepoint", from_savepoint,
                  "restore from a savepoint directory (savepoint-<id>)")
      ->excludes(from_checkpoint_opt);
  run->add_flag("--allow-non-restored-state", allow_non_restored,
                "skip state of operator ids the job no longer has instead of refusing the restore");
  std::string analyze_source;
  std::string analyze_late = "0.1%";
  std::string analyze_svg;
  bool analyze_json = false;
  bool analyze_run = false;
  int64_t analyze_max_records = 1'000'000;
  auto* analyze = app.add_subcommand(
      "analyze",
      "Measure the job's lateness through its sources (without running operators) and suggest "
      "the out-of-orderness bound, the idleness timeout and the window state");
  analyze->add_option("job", job_path, "job YAML file")->required();
  analyze->add_option("--source", analyze_source,
                      "only this source operator (default: every source)");
  analyze->add_option("--late", analyze_late,
                      "target fraction of late records, as a percentage (default 0.1%)");
  analyze->add_flag("--json", analyze_json, "print JSON");
  analyze->add_option("--svg", analyze_svg, "also write the lateness histogram as an SVG file");
  analyze->add_flag(
      "--run", analyze_run,
      "also run the job and show the measured late records and window state beside the estimates");
  analyze->add_option("--max-records", analyze_max_records,
                      "read at most this many records per source subtask (default 1000000)");
  run->add_option("--trace", trace_path,
                  "write the event-time flow to FILE as JSON Lines: every split and subtask "
                  "watermark and status, every operator input / output watermark change, idleness "
                  "and alignment pause / resume, with processing time");
  run->add_flag(
      "--explain", explain,
      "print to stderr, at the end, why each window's (or --explain-operator's) watermark "
      "stood where it did until end of input: the channel, subtask and split holding it, "
      "idle / paused / finished inputs, what would move it, the likely mistake");
  run->add_option("--explain-operator", explain_operator, "the operator id --explain explains");
  bool flink_sql = false;
  bool best_effort = false;
  std::string export_output;
  auto* export_cmd =
      app.add_subcommand("export", "Translate a job to another engine's language (Flink SQL)");
  export_cmd->add_option("job", job_path, "job YAML file")->required();
  export_cmd->add_flag("--flink-sql", flink_sql, "write Flink SQL (2.x) DDL and DML")->required();
  export_cmd->add_option("-o,--output", export_output, "write to FILE instead of stdout");
  export_cmd->add_flag(
      "--best-effort", best_effort,
      "write what Flink SQL can express, with a comment at each dropped feature (exit 0)");
  auto* validate = app.add_subcommand(
      "validate",
      "Load and compile a job without running it; exit 0 if valid, 2 with every problem");
  validate->add_option("job", job_path, "job YAML file")->required();
  tidemark::bench::BenchOptions bench_options;
  auto* bench = tidemark::bench::AddBenchSubcommand(app, bench_options);
  tidemark::KafkaMockOptions kafka_mock_options;
  auto* kafka_mock = tidemark::AddKafkaMockSubcommand(app, kafka_mock_options);

  // Daemon commands. Global options go before the subcommand: `tidemark --socket PATH submit
  // x.yaml`.
  std::string socket_path;
  std::string url;
  std::string token_file;
  app.add_option(
      "--socket", socket_path,
      fmt::format("the daemon's Unix socket (default {})", tidemark::DefaultSocketPath()));
  app.add_option("--url", url, "reach the daemon over TCP instead, e.g. http://127.0.0.1:8081");
  app.add_option("--token-file", token_file,
                 "bearer token file for --url (default <runtime dir>/token)");
  bool wait = false;
  bool json = false;
  std::string job_id;
  auto* submit = app.add_subcommand("submit", "Submit a job to the daemon; prints its id");
  submit->add_option("job", job_path, "job YAML file")->required();
  submit->add_flag("--wait", wait,
                   "wait until the job ended; exit 0 when it FINISHED, 1 otherwise");
  submit->add_flag("--json", json, "print JSON");
  std::string memory_limit;
  submit->add_option(
      "--memory-limit", memory_limit,
      "this job's worker memory limit (address space, e.g. 512m), at most the daemon's "
      "--worker-memory-limit");
  // from_savepoint and allow_non_restored are shared with `run` (one subcommand runs).
  submit->add_option("--from-savepoint", from_savepoint,
                     "start from this savepoint (or checkpoint) directory; operator state is "
                     "matched by operator id");
  submit->add_flag("--allow-non-restored-state", allow_non_restored,
                   "with --from-savepoint: skip state of operator ids the job no longer has "
                   "instead of refusing");
  // A job id as `submit` and `list` print it: an empty one (`tidemark status ''`, an unset shell
  // variable) is a usage error here, not a request for a job named nothing.
  const CLI::Validator kJobId(
      [](const std::string& id) {
        return id.empty() ? std::string("empty; give a job id as `tidemark list` shows it")
                          : std::string();
      },
      "JOB_ID");
  std::string savepoint_dir;
  auto* savepoint = app.add_subcommand("savepoint",
                                       "Take a savepoint of a running job; prints its path (DIR "
                                       "default: the daemon's state-dir/savepoints)");
  savepoint->add_option("id", job_id, "job id")->required()->check(kJobId);
  savepoint->add_option("dir", savepoint_dir,
                        "target directory (the savepoint goes into DIR/savepoint-<id>)");
  savepoint->add_flag("--json", json, "print JSON (as GET /jobs/ID/savepoints/REQUEST)");
  bool drain = false;
  auto* stop = app.add_subcommand("stop",
                                  "Stop a running job with a savepoint: it ends FINISHED once the "
                                  "savepoint is taken; prints its path");
  stop->add_option("id", job_id, "job id")->required()->check(kJobId);
  stop->add_option("--savepoint", savepoint_dir,
                   "target directory (default: the daemon's state-dir/savepoints)");
  stop->add_flag("--drain", drain,
                 "emit MAX_WATERMARK first, so every window fires and timers run (for a job that "
                 "will not resume)");
  stop->add_flag("--json", json, "print JSON (as GET /jobs/ID/savepoints/REQUEST)");
  auto* list = app.add_subcommand("list", "List running and recently finished jobs");
  list->add_flag("--json", json, "print JSON (as GET /jobs)");
  auto* status = app.add_subcommand("status", "Show a job: state, tasks, records, watermarks");
  status->add_option("id", job_id, "job id")->required()->check(kJobId);
  status->add_flag("--json", json, "print JSON (as GET /jobs/ID)");
  auto* cancel =
      app.add_subcommand("cancel", "Cancel a running job; exit 1 if it had already ended");
  cancel->add_option("id", job_id, "job id")->required()->check(kJobId);
  auto* logs = app.add_subcommand("logs", "Print a job's output: print-sink lines and its report");
  logs->add_option("id", job_id, "job id")->required()->check(kJobId);
  logs->add_flag("--json", json, "print JSON (as GET /jobs/ID/logs)");
  std::string explain_op;
  auto* explain_cmd = app.add_subcommand(
      "explain",
      "Why a job's watermarks stand where they do: live while it runs, at end of input once it "
      "ended (as run --explain), per operator; exit 1 for a FAILED or CANCELED job");
  explain_cmd->add_option("id", job_id, "job id")->required()->check(kJobId);
  explain_cmd->add_option("operator", explain_op,
                          "operator id (default: every window and join operator)");
  explain_cmd->add_flag("--json", json, "print JSON (as GET /jobs/ID/explain)");
  // How times are printed (runtime/core/time_format.h), on every command that prints them.
  std::string time_format = "readable";
  for (CLI::App* sub : {run, analyze, list, status, logs, explain_cmd, submit}) {
    sub->add_option("--time-format", time_format,
                    "readable (default: ISO-8601 UTC event times like 2001-04-24T10:16:59.999Z, "
                    "durations like 3m 27s) or epoch-ms (integer milliseconds, for scripts)")
        ->check(CLI::IsMember({"readable", "epoch-ms"}));
  }
  app.footer(
      "Exit codes: 0 ok; 1 the job FAILED or was CANCELED (or had already ended, for cancel); 2 "
      "usage\n"
      "error, invalid job or unknown id;\n"
      "3 the daemon is unreachable (start it with `tidemarkd`).");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (const std::string unknown = UnknownCommand(app, argc, argv); !unknown.empty()) {
      // CLI11 would say "A subcommand is required" about `tidemark stauts ID`.
      std::cerr << fmt::format(
          "tidemark: unknown command '{}' (commands: run, validate, analyze, export, bench, "
          "kafka-mock, "
          "submit, list, status, cancel, logs, explain, savepoint, stop)\nRun with --help for more "
          "information.\n",
          unknown);
      return 2;
    }
    return app.exit(e) == 0 ? 0 : 2;
  }
  tidemark::TimeFormat format = tidemark::TimeFormat::kReadable;
  (void)tidemark::ParseTimeFormat(time_format, &format);  // CLI11 checked it
  tidemark::SetTimeFormat(format);
  if (*run) {
    tidemark::JobRunOptions restore;
    restore.restore_from = !from_savepoint.empty() ? from_savepoint : from_checkpoint;
    restore.allow_non_restored_state = allow_non_restored;
    return RunJob(job_path, RunOptions{metrics, trace_path, explain || !explain_operator.empty(),
                                       explain_operator, restore});
  }
  if (*export_cmd) {
    return ExportJob(job_path, export_output, best_effort);
  }
  if (*validate) {
    return ValidateJob(job_path);
  }
  if (*bench) {
    return tidemark::bench::RunBench(bench_options);
  }
  if (*kafka_mock) {
    return tidemark::RunKafkaMock(kafka_mock_options);
  }
  if (*analyze) {
    return AnalyzeJob(job_path, analyze_source, analyze_late, analyze_json, analyze_svg,
                      analyze_run, analyze_max_records);
  }
  if (!url.empty()) {
    // A malformed URL is a usage error (2), not an unreachable daemon (3).
    const size_t colon = url.rfind(':');
    if (url.rfind("http://", 0) != 0 || colon < 7 || colon + 1 == url.size()) {
      std::cerr << fmt::format("tidemark: --url: expected http://HOST:PORT, got '{}'\n", url);
      return 2;
    }
  }
  tidemark::DaemonEndpoint endpoint;
  endpoint.socket_path = socket_path.empty() ? tidemark::DefaultSocketPath() : socket_path;
  endpoint.url = url;
  if (!url.empty()) {
    const std::string path =
        token_file.empty() ? tidemark::DefaultRuntimeDir() + "/token" : token_file;
    try {
      endpoint.token = tidemark::ReadTokenFile(path, false);
    } catch (const std::exception& e) {
      if (!token_file.empty()) {
        std::cerr << "tidemark: " << e.what() << "\n";
        return 2;
      }
    }
  }
  tidemark::DaemonCommands commands(endpoint);
  if (*submit) {
    return commands.Submit(job_path, wait, json, memory_limit, from_savepoint, allow_non_restored);
  }
  if (*savepoint) {
    return commands.Savepoint(job_id, savepoint_dir, false, false, json);
  }
  if (*stop) {
    return commands.Savepoint(job_id, savepoint_dir, true, drain, json);
  }
  if (*list) {
    return commands.List(json);
  }
  if (*status) {
    return commands.Status(job_id, json);
  }
  if (*cancel) {
    return commands.Cancel(job_id);
  }
  if (*logs) {
    return commands.Logs(job_id, json);
  }
  if (*explain_cmd) {
    return commands.Explain(job_id, explain_op, json);
  }
  return 2;
}

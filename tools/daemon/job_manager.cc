#include "tools/daemon/job_manager.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <malloc.h>
#include <random>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>

#include <boost/algorithm/string.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/diagnostic.h"
#include "config/job_loader.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/core/durable_file.h"
#include "runtime/core/logging.h"
#include "runtime/core/thread_entry.h"
#include "runtime/graph/dropped_records.h"
#include "runtime/graph/job_graph.h"
#include "tools/daemon/daemon_paths.h"
#include "tools/daemon/prometheus_metrics.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

/// The entry of `owned` (canonical output path -> owner) that `path` collides with: the same path,
/// a directory above it (an exactly-once sink's directory of part files), or a path below it.
std::map<std::string, std::string>::const_iterator FindOverlappingOutput(
    const std::map<std::string, std::string>& owned, const std::string& path) {
  if (auto same = owned.find(path); same != owned.end()) {
    return same;
  }
  for (std::filesystem::path up = std::filesystem::path(path).parent_path();
       !up.empty() && up != up.parent_path(); up = up.parent_path()) {
    if (auto above = owned.find(up.string()); above != owned.end()) {
      return above;
    }
  }
  const std::string prefix = path + "/";
  if (auto below = owned.lower_bound(prefix);
      below != owned.end() && below->first.starts_with(prefix)) {
    return below;
  }
  return owned.end();
}

/// The brokers of a `bootstrap-servers` list, each trimmed and in lower case: two lists naming one
/// broker in common reach one cluster.
std::set<std::string> BrokerSet(const std::string& servers) {
  std::vector<std::string> parts;
  boost::algorithm::split(parts, servers, boost::algorithm::is_any_of(","));
  std::set<std::string> out;
  for (std::string& broker : parts) {
    boost::algorithm::trim(broker);
    boost::algorithm::to_lower(broker);
    if (!broker.empty()) {
      out.insert(std::move(broker));
    }
  }
  return out;
}

/// Whether two exactly-once Kafka sinks would use the same transactional ids on one cluster.
bool SameTransactionalIds(const DaemonJobOutput& a, const DaemonJobOutput& b) {
  if (a.transactional_id_prefix != b.transactional_id_prefix) {
    return false;
  }
  const std::set<std::string> x = BrokerSet(a.bootstrap_servers);
  const std::set<std::string> y = BrokerSet(b.bootstrap_servers);
  return std::any_of(x.begin(), x.end(),
                     [&](const std::string& broker) { return y.contains(broker); });
}

namespace fs = std::filesystem;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool IsTerminal(JobState s) {
  return s == JobState::kFinished || s == JobState::kFailed || s == JobState::kCanceled;
}

nlohmann::json WatermarkJson(Timestamp ts) {
  if (ts == kMinTimestamp) {
    return nullptr;  // no watermark yet
  }
  return ts;
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      end = text.size();
    }
    if (end > start) {
      out.push_back(text.substr(start, end - start));
    }
    start = end + 1;
  }
  return out;
}

}  // namespace

void JobLog::Append(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  lines_.push_back(line);
  bytes_ += line.size();
  while (!lines_.empty() && (lines_.size() > max_lines_ || bytes_ > max_bytes_)) {
    bytes_ -= lines_.front().size();
    lines_.pop_front();
    ++dropped_;
  }
}

std::vector<std::string> JobLog::Lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {lines_.begin(), lines_.end()};
}

int64_t JobLog::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

JobManager::JobManager(JobFactory factory, JobManagerOptions options)
    : factory_(std::move(factory)), options_(options), started_ms_(NowMs()) {
  std::random_device rd;
  id_state_ = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(started_ms_);
  if (options_.finished_job_ttl.count() > 0) {
    expirer_ = std::thread([this] { RunExpirer(); });
  }
  if (!options_.state_dir.empty()) {
    Recover();
  }
}

JobManager::~JobManager() {
  Shutdown();
}

std::string JobManager::NewJobId() {
  // splitmix64: distinct ids without a shared RNG object; 16 hex digits.
  for (;;) {
    uint64_t z = (id_state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    std::string id = fmt::format("{:016x}", z);
    std::error_code ec;
    if (jobs_.count(id) == 0 && (options_.state_dir.empty() || !fs::exists(JobDir(id), ec))) {
      return id;
    }
  }
}

JobManager::SubmitResult JobManager::Submit(const std::string& yaml, const std::string& file_name,
                                            std::optional<uint64_t> memory_limit_bytes,
                                            std::string restore_from,
                                            bool allow_non_restored_state) {
  using Status = SubmitResult::Status;
  auto entry = std::make_shared<Entry>();
  if (!restore_from.empty()) {
    std::error_code ec;
    const fs::path p = fs::absolute(restore_from, ec);
    if (ec || !fs::is_directory(p, ec)) {
      return {
          Status::kInvalidJob,
          "",
          {fmt::format(
              "--from-savepoint: '{}' is not a directory (a savepoint, a chk-<id> checkpoint or a "
              "checkpoint directory)",
              restore_from)}};
    }
    restore_from = p.lexically_normal().string();
  }
  entry->file_name = file_name;
  entry->memory_limit = memory_limit_bytes;
  entry->restore_from = restore_from;
  entry->submitted_restore_from = restore_from;
  entry->allow_non_restored_state = allow_non_restored_state;
  entry->start_ms = NowMs();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shutting_down_) {
      return {Status::kShuttingDown, "", {"the daemon is shutting down"}};
    }
    if (running_ >= options_.max_running_jobs) {
      ++rejected_total_;
      return {Status::kTooManyJobs,
              "",
              {fmt::format("too many running jobs (limit {}); retry when one has ended",
                           options_.max_running_jobs)}};
    }
    ++running_;  // reserve a slot while compiling outside the lock
    entry->id = NewJobId();
  }
  return Launch(entry, yaml, false);
}

namespace {

// A `stdin` source reads the standard input of `tidemark run`; a daemon's job has none, so it
// would finish at once with no records. Refused at submission, at the source's `type`.
std::optional<std::string> StdinRefusal(const std::string& yaml, const std::string& file_name) {
  JobSpec spec;
  try {
    spec = LoadJobSpecString(yaml, file_name);
  } catch (const std::exception&) {
    return std::nullopt;  // the launch reports what is wrong with it
  }
  for (size_t i = 0; i < spec.operators.size(); ++i) {
    const OperatorSpec& op = spec.operators[i];
    if (op.source && op.source->type == "stdin") {
      return FormatDiagnostic(op.source->key_locations.Of("type", op.source->location),
                              fmt::format("operators[{}].source.type", i),
                              "a stdin source reads the standard input of `tidemark run`; jobs "
                              "submitted to the daemon have none: run it with `tidemark run`, or "
                              "read a file");
    }
  }
  return std::nullopt;
}

}  // namespace

std::string JobManager::OutputConflict(
    const std::string& file_name, const std::shared_ptr<Entry>& entry,
    const std::vector<std::pair<std::string, std::string>>& outputs,
    const std::vector<DaemonJobOutput>& transactions,
    std::map<std::string, std::string>* mine) const {
  for (const auto& [path, sink] : outputs) {
    if (auto owner = FindOverlappingOutput(owned_files_, path); owner != owned_files_.end()) {
      const auto other = jobs_.find(owner->second);
      const std::string other_name = other != jobs_.end() ? other->second->name : "?";
      return owner->first == path
                 ? fmt::format(
                       "{}: sink '{}' writes '{}', which running job {} ('{}') writes too; "
                       "cancel that job or wait until it ends, or write another path",
                       file_name, sink, path, owner->second, other_name)
                 : fmt::format(
                       "{}: sink '{}' writes '{}', which overlaps '{}' of running job {} "
                       "('{}'); cancel that job or wait until it ends, or write another "
                       "path",
                       file_name, sink, path, owner->first, owner->second, other_name);
    }
    if (auto it = FindOverlappingOutput(*mine, path); it != mine->end()) {
      return it->first == path
                 ? fmt::format("{}: sinks '{}' and '{}' both write '{}'", file_name, it->second,
                               sink, path)
                 : fmt::format("{}: sink '{}' writes '{}', which overlaps '{}' of sink '{}'",
                               file_name, sink, path, it->first, it->second);
    }
    mine->emplace(path, sink);
  }
  for (size_t i = 0; i < transactions.size(); ++i) {
    const DaemonJobOutput& t = transactions[i];
    for (size_t j = 0; j < i; ++j) {
      if (SameTransactionalIds(transactions[j], t)) {
        return fmt::format(
            "{}: sinks '{}' and '{}' both use transactional-id-prefix '{}' on the same Kafka "
            "cluster; their producers would fence each other: give each its own "
            "transactional-id-prefix",
            file_name, transactions[j].operator_id, t.operator_id, t.transactional_id_prefix);
      }
    }
    for (const auto& [id, other] : jobs_) {
      if (other->ended || other == entry) {
        continue;
      }
      for (const DaemonJobOutput& theirs : other->owned_transactions) {
        if (SameTransactionalIds(theirs, t)) {
          return fmt::format(
              "{}: sink '{}' uses transactional-id-prefix '{}' on {}, which sink '{}' of running "
              "job {} ('{}') uses too (on {}); their producers would fence each other: give each "
              "job its own transactional-id-prefix, or cancel that job or wait until it ends",
              file_name, t.operator_id, t.transactional_id_prefix, t.bootstrap_servers,
              theirs.operator_id, id, other->name, theirs.bootstrap_servers);
        }
      }
    }
  }
  return "";
}

JobManager::SubmitResult JobManager::Launch(const std::shared_ptr<Entry>& entry,
                                            const std::string& yaml, bool resumed) {
  using Status = SubmitResult::Status;
  auto log = GetLogger("daemon");
  const std::string& file_name = entry->file_name;
  const std::optional<uint64_t> memory_limit_bytes = entry->memory_limit;
  auto release_slot = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
    cv_.notify_all();
  };
  if (!entry->log) {
    entry->log = std::make_shared<JobLog>(options_.max_log_lines, options_.max_log_bytes);
  }
  std::weak_ptr<JobLog> weak_log = entry->log;
  std::shared_ptr<JobLog> job_log = entry->log;
  const std::string job_id = entry->id;
  // Print-sink lines go to the job's bounded buffer (served by `logs`), tagged in the daemon's
  // debug log with the job id, never to the daemon's stdout.
  JobResources::LineWriter writer = [job_log, job_id](const std::string& line) {
    job_log->Append(line);
    SPDLOG_LOGGER_DEBUG(GetLogger("daemon"), "[job {}] {}", job_id, line);
  };
  DaemonRunOptions run_options;
  run_options.restore_from = entry->restore_from;
  run_options.allow_non_restored_state = entry->allow_non_restored_state;
  const std::string job_dir = JobDir(entry->id);
  if (!job_dir.empty()) {
    // Every job checkpoints into the state dir, so a restarted daemon finds where to resume from.
    std::error_code ec;
    fs::create_directories(job_dir, ec);
    run_options.checkpoint_dir = job_dir + "/checkpoints";
    run_options.run_lock = job_dir + "/run.lock";
  }
  // A refused submission (an invalid job, a conflicting output, a memory limit it cannot have)
  // leaves nothing in the state directory: its directory, made above for a new id, holds no
  // job.json, and every later daemon start would log it as an unreadable job.
  struct RemoveUnlessAccepted {
    const std::string& dir;
    bool accepted;
    ~RemoveUnlessAccepted() {
      if (!accepted && !dir.empty()) {
        std::error_code rm;
        fs::remove_all(dir, rm);
      }
    }
  } new_dir{job_dir, resumed};
  if (std::optional<std::string> refusal = StdinRefusal(yaml, file_name)) {
    release_slot();
    return {Status::kInvalidJob, "", {*refusal}};
  }
  try {
    entry->job = factory_(yaml, file_name, std::move(writer), run_options);
  } catch (const ConfigError& e) {
    release_slot();
    return {Status::kInvalidJob, "", SplitLines(e.what())};
  } catch (const JobCompileError& e) {
    release_slot();
    return {Status::kInvalidJob, "", SplitLines(e.what())};
  } catch (const std::exception& e) {
    release_slot();
    const std::string cause = FailureCause(e);
    log->error("job submission failed: {}", EscapeControlCharacters(cause));
    return {Status::kInternalError, "", {cause}};
  } catch (...) {
    // Not a std::exception (user code's factory may throw anything): still a refused
    // submission with its slot released, never a leaked slot or a failed thread.
    release_slot();
    log->error("job submission failed: the job factory threw an unknown exception");
    return {Status::kInternalError, "", {"the job factory threw an unknown exception"}};
  }
  if (!entry->job) {
    release_slot();
    return {Status::kInternalError, "", {"the job factory returned no job"}};
  }
  if (memory_limit_bytes) {
    if (std::optional<std::string> error = entry->job->LimitMemory(*memory_limit_bytes)) {
      release_slot();
      return {Status::kInvalidJob, "", {*error}};
    }
  }
  entry->name = entry->job->name();
  entry->vertices = nlohmann::json::array();
  for (const DaemonJobVertex& v : entry->job->Vertices()) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const DaemonJobInput& in : v.inputs) {
      inputs.push_back({{"id", in.from},
                        {"ship_strategy", in.partitioning},
                        {"side-output", in.side_output.empty() ? nlohmann::json(nullptr)
                                                               : nlohmann::json(in.side_output)},
                        {"chained", in.chained}});
    }
    entry->vertices.push_back({{"id", v.id},
                               {"type", v.type},
                               {"parallelism", v.parallelism},
                               {"task", v.task},
                               {"inputs", std::move(inputs)}});
  }
  // The files it writes, as one path each however they were spelled (relative to the daemon's
  // directory, through symbolic links): another running job writing one of them would interleave
  // with or truncate this one's output.
  std::vector<std::pair<std::string, std::string>> outputs;  // canonical path, sink id
  // Exactly-once Kafka sinks: another running job with the same transactional ids on the same
  // cluster would fence this one's producers, and this one its.
  std::vector<DaemonJobOutput> transactions;
  for (const DaemonJobOutput& o : entry->job->Outputs()) {
    if (o.path.empty()) {
      transactions.push_back(o);
      continue;
    }
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::absolute(o.path, ec), ec);
    if (ec) {
      p = fs::absolute(o.path, ec).lexically_normal();
    }
    outputs.emplace_back(p.string(), o.operator_id);
  }
  std::shared_ptr<DaemonJob> job = entry->job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::map<std::string, std::string> mine;  // path -> sink id
    if (std::string refusal = OutputConflict(file_name, entry, outputs, transactions, &mine);
        !refusal.empty()) {
      --running_;
      cv_.notify_all();
      return {Status::kInvalidJob, "", {std::move(refusal)}};
    }
    for (const auto& [path, sink] : mine) {
      owned_files_.emplace(path, entry->id);
      entry->owned_files.push_back(path);
    }
    entry->owned_transactions = std::move(transactions);
    jobs_[entry->id] = entry;
    new_dir.accepted = true;
    if (!resumed) {
      order_.push_back(entry->id);
      ++submitted_total_;
    }
    ++waiters_;
  }
  if (!job_dir.empty()) {
    if (!resumed) {
      // An accepted job is on disk (fsynced) before the 202: a daemon restart resumes it. When it
      // cannot be kept, it is not started and the client is told why (507 for a full disk).
      try {
        WriteFileAtomically(job_dir + "/job.yaml", yaml);
        WriteFileAtomically(JobDir(entry->id) + "/job.json",
                            RegistryJson(*entry, "RUNNING")
                                    .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                                "\n");
      } catch (const std::exception& ex) {
        const auto* write_error = dynamic_cast<const FileWriteError*>(&ex);
        const bool full = write_error != nullptr && (write_error->error_number() == ENOSPC ||
                                                     write_error->error_number() == EDQUOT);
        log->error("[job {}] not started: cannot keep it in the state directory: {}", entry->id,
                   EscapeControlCharacters(ex.what()));
        {
          std::lock_guard<std::mutex> lock(mu_);
          jobs_.erase(entry->id);
          for (const std::string& path : entry->owned_files) {
            owned_files_.erase(path);
          }
          entry->owned_files.clear();
          order_.erase(std::remove(order_.begin(), order_.end(), entry->id), order_.end());
          --submitted_total_;
          --waiters_;
          --running_;
          cv_.notify_all();
        }
        std::error_code rm;
        fs::remove_all(job_dir, rm);
        return {
            full ? Status::kInsufficientStorage : Status::kNotDurable,
            "",
            {fmt::format(
                "the job was not started: the daemon cannot keep it in its state directory ({}){}",
                ex.what(), full ? "; free space there and submit it again" : "")}};
      }
    } else {
      Persist(entry->id, RegistryJson(*entry, "RUNNING"));
    }
  }
  if (!resumed) {
    log->info(
        "[job {}] submitted '{}' ({}){}", entry->id, EscapeControlCharacters(entry->name),
        EscapeControlCharacters(file_name),
        entry->restore_from.empty() ? "" : " from " + EscapeControlCharacters(entry->restore_from));
  }
  auto wait_for_end = [this, e = entry, job = std::move(job)](bool run) mutable {
    // No exception leaves this thread: the job ends FAILED with the cause instead of the daemon
    // ending in std::terminate.
    RunThreadEntry(
        "job waiter", [&] { OnJobEnded(e, std::move(job), run); },
        [&](const std::string& cause) { EndAfterWaiterFailure(e, cause); });
    e.reset();
    std::lock_guard<std::mutex> lock(mu_);
    --waiters_;
    cv_.notify_all();
  };
  try {
    std::thread(wait_for_end, true)
        .detach();  // a copy: on failure `wait_for_end` still holds the job
  } catch (const std::system_error& ex) {
    // No thread to run it on (resources exhausted): end the job here rather than leave it
    // RUNNING for ever with a waiter that Shutdown would wait for.
    log->error("[job {}] no thread to run it ({})", entry->id, ex.what());
    wait_for_end(false);
  }
  return {Status::kAccepted, entry->id, {}};
}

void JobManager::OnJobEnded(const std::shared_ptr<Entry>& e, std::shared_ptr<DaemonJob> job,
                            bool run) {
  // Run joins every task thread (in tidemarkd: reaps the job's worker process).
  JobState state = JobState::kFailed;
  std::string cause = run ? "" : "no thread to run the job on (resources exhausted)";
  bool returned = false;
  if (run) {
    RunThreadEntry(
        "job waiter",
        [&] {
          state = job->Run();
          returned = true;
        },
        [&](const std::string& why) {
          cause = "the daemon's thread running the job failed: " + why;
        });
  }
  if (run && !returned) {
    // Run threw (out of memory, say): whatever of the job still runs is asked to stop.
    state = JobState::kFailed;
    if (cause.empty()) {
      cause = "the daemon's thread running the job failed";
    }
    job->Cancel();
  } else if (run) {
    cause = job->failure_cause();
  }
  std::optional<std::string> report;
  if (state == JobState::kFinished) {
    try {
      report = job->ReportLine();
    } catch (const std::exception& ex) {
      e->log->Append(fmt::format("report failed: {}", ex.what()));
    }
  }
  if (report) {
    e->log->Append(*report);
  }
  auto log = GetLogger("daemon");
  if (state == JobState::kFailed) {
    log->error("[job {}] '{}' FAILED: {}", e->id, e->name, cause);
  } else {
    log->info("[job {}] '{}' {}", e->id, e->name, ToString(state));
  }
  const std::vector<SubtaskMetrics> final_metrics = job->Metrics();
  nlohmann::json final_tasks = TasksJson(final_metrics);
  std::vector<std::string> dropped_records = DroppedRecordLines(final_metrics);
  nlohmann::json final_checkpoints = run ? job->CheckpointStatsJson() : EmptyCheckpointStatsJson();
  std::map<std::string, std::string> explanations =
      run ? job->WatermarkExplanations() : std::map<std::string, std::string>{};
  const int64_t end_ms = NowMs();
  const bool restore_failed = !e->restore_from.empty() && !job->created();
  if (!options_.state_dir.empty()) {
    // On disk before anyone can see it ended. A job cancelled by the daemon's shutdown (not by a
    // user) is SUSPENDED there, as Flink's jobs are when their cluster stops: the next daemon
    // resumes it.
    nlohmann::json record;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const bool suspended = state == JobState::kCanceled && shutting_down_ && !e->user_cancelled;
      Entry ended = *e;
      ended.end_ms = suspended ? -1 : end_ms;
      ended.failure_cause = cause;
      ended.report = report;
      ended.final_tasks = final_tasks;
      ended.dropped_records = dropped_records;
      ended.final_checkpoints = final_checkpoints;
      ended.restore_failed = restore_failed;
      record = RegistryJson(ended, suspended ? "SUSPENDED" : ToString(state));
    }
    Persist(e->id, record);
  }
  std::unique_lock<std::mutex> lock(mu_);
  // First what may throw (it allocates), so that a failure here leaves the entry as it was for
  // EndAfterWaiterFailure; from `ended` on, nothing throws before the counts are right.
  finished_order_.push_back(e->id);
  for (const std::string& path : e->owned_files) {
    owned_files_.erase(path);
  }
  e->ended = true;
  for (auto& [request, op] : e->savepoints) {
    op->done = op->done || op->has_result;  // a stop-with-savepoint completes with the job's end
  }
  e->end_ms = end_ms;
  e->final_checkpoints = std::move(final_checkpoints);
  e->restore_failed = restore_failed;
  e->end_steady = std::chrono::steady_clock::now();
  e->final_state = state;
  e->failure_cause = std::move(cause);
  e->report = std::move(report);
  e->explanations = std::move(explanations);
  e->final_tasks = std::move(final_tasks);
  e->dropped_records = std::move(dropped_records);
  e->job.reset();  // readers still holding a copy keep it alive until they are done
  --running_;
  switch (state) {
    case JobState::kFinished:
      ++finished_total_;
      break;
    case JobState::kFailed:
      ++failed_total_;
      break;
    default:
      ++canceled_total_;
      break;
  }
  TrimHistory();
  if (finished_order_.size() == 1) {
    expirer_cv_.notify_one();  // it may be sleeping without a deadline
  }
  const bool idle = running_ == 0;
  lock.unlock();
  job.reset();  // frees the job's tasks, channels and sink results
  if (idle) {
    // Threads of finished jobs leave freed memory in glibc's per-thread arenas; hand it back so the
    // daemon's footprint returns to its baseline when no job runs.
    malloc_trim(0);
  }
  lock.lock();
  cv_.notify_all();
}

void JobManager::EndAfterWaiterFailure(const std::shared_ptr<Entry>& e,
                                       const std::string& cause) noexcept {
  ReportServiceThreadFailure("job waiter", cause);
  try {
    std::shared_ptr<DaemonJob> job;
    nlohmann::json record;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (e->ended) {
        return;  // its end was recorded; what failed came after
      }
      finished_order_.push_back(e->id);
      for (const std::string& path : e->owned_files) {
        owned_files_.erase(path);
      }
      job = std::move(e->job);
      e->ended = true;
      e->end_ms = NowMs();
      e->end_steady = std::chrono::steady_clock::now();
      e->final_state = JobState::kFailed;
      --running_;
      ++failed_total_;
      e->failure_cause = "the daemon could not record the job's end: " + cause;
      if (!options_.state_dir.empty()) {
        record = RegistryJson(*e, "FAILED");
      }
      TrimHistory();
      expirer_cv_.notify_one();
      cv_.notify_all();
    }
    GetLogger("daemon")->error("[job {}] FAILED: {}", e->id, e->failure_cause);
    if (job) {
      job->Cancel();
    }
    if (!record.is_null()) {
      Persist(e->id, record);
    }
  } catch (...) {
    std::fputs("tidemarkd: job waiter: could not record a job's failure (out of memory?)\n",
               stderr);
  }
}

void JobManager::ReportServiceThreadFailure(const char* thread, const std::string& cause) noexcept {
  try {
    GetLogger("daemon")->error("daemon thread '{}' failed: {}", thread,
                               EscapeControlCharacters(cause));
  } catch (...) {  // NOLINT(bugprone-empty-catch): the count below still shows it
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++service_thread_failures_;
  try {
    last_service_thread_failure_ = fmt::format("{}: {}", thread, cause);
  } catch (...) {  // NOLINT(bugprone-empty-catch): the count is what must not be lost
  }
}

void JobManager::RunExpirer() {
  for (;;) {
    RunThreadEntry(
        "job expirer", [this] { ExpireHistory(); },
        [this](const std::string& cause) { ReportServiceThreadFailure("job expirer", cause); });
    std::unique_lock<std::mutex> lock(mu_);
    // ExpireHistory returns at shutdown only, else it failed: again after a pause, so that a
    // failure that persists does not spin.
    if (expirer_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return shutting_down_; })) {
      return;
    }
  }
}

void JobManager::TrimHistory() {
  while (finished_order_.size() > options_.max_finished_jobs) {
    DropFinished(finished_order_.front());
  }
}

void JobManager::DropFinished(std::string id) {
  if (!finished_order_.empty() && finished_order_.front() == id) {
    finished_order_.pop_front();
  }
  jobs_.erase(id);
  if (const std::string dir = JobDir(id); !dir.empty()) {
    std::error_code ec;
    fs::remove_all(dir, ec);  // its registry record and retained checkpoints
  }
  for (auto it = order_.begin(); it != order_.end(); ++it) {
    if (*it == id) {
      order_.erase(it);
      break;
    }
  }
}

void JobManager::ExpireHistory() {
  const auto ttl = options_.finished_job_ttl;
  std::unique_lock<std::mutex> lock(mu_);
  while (!shutting_down_) {
    if (finished_order_.empty()) {
      expirer_cv_.wait(lock);
      continue;
    }
    // finished_order_ is in end order, so its front expires first.
    const auto deadline = jobs_.at(finished_order_.front())->end_steady + ttl;
    if (std::chrono::steady_clock::now() < deadline) {
      expirer_cv_.wait_until(lock, deadline);
      continue;
    }
    lock.unlock();
    // The entries are freed on a thread of their own: glibc caches a thread's freed blocks until
    // the thread ends, and this thread lives as long as the daemon.
    bool idle = false;
    auto drop_expired = [this, ttl, &idle] {
      std::lock_guard<std::mutex> drop_lock(mu_);
      const auto now = std::chrono::steady_clock::now();
      int64_t dropped = 0;
      while (!finished_order_.empty() &&
             jobs_.at(finished_order_.front())->end_steady + ttl <= now) {
        DropFinished(finished_order_.front());
        ++dropped;
      }
      expired_total_ += dropped;
      idle = running_ == 0;
    };
    std::exception_ptr drop_error;  // a failure on the dropping thread fails this one
    try {
      std::thread([&] {
        try {
          drop_expired();
        } catch (...) {
          drop_error = std::current_exception();
        }
      }).join();
    } catch (const std::system_error&) {
      drop_expired();  // no thread to be had: free them here, the cache is a detail
    }
    if (drop_error) {
      std::rethrow_exception(drop_error);
    }
    if (idle) {
      std::lock_guard<std::mutex> hook_lock(idle_hook_mu_);
      if (idle_hook_) {
        idle_hook_();
      }
    }
    // The expired summaries, metrics and logs were freed (a reader holding one frees it on its way
    // out); return the pages glibc keeps for reuse.
    malloc_trim(0);
    lock.lock();
  }
}

void JobManager::SetIdleHook(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(idle_hook_mu_);
  idle_hook_ = std::move(hook);
}

std::shared_ptr<JobManager::Entry> JobManager::Find(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second;
}

nlohmann::json JobManager::SummaryJson(const Entry& e) const {
  // Until the waiter has recorded the end (report, final metrics), a job counts as RUNNING even if
  // its tasks are already done, so a reader never sees FINISHED without its report.
  const JobState state = e.ended ? e.final_state : JobState::kRunning;
  const int64_t end = e.ended ? e.end_ms : -1;
  return nlohmann::json{{"jid", e.id},
                        {"name", e.name},
                        {"state", ToString(state)},
                        {"start-time", e.start_ms},
                        {"end-time", end},
                        {"duration", (e.ended ? e.end_ms : NowMs()) - e.start_ms}};
}

nlohmann::json JobManager::ListJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json jobs = nlohmann::json::array();
  for (const std::string& id : order_) {
    jobs.push_back(SummaryJson(*jobs_.at(id)));
  }
  return nlohmann::json{{"jobs", std::move(jobs)}};
}

nlohmann::json JobManager::TasksJson(const std::vector<SubtaskMetrics>& metrics) {
  // Tasks (chains) with their subtasks, in the order the execution built them.
  nlohmann::json tasks = nlohmann::json::array();
  std::map<std::string, size_t> task_slot;
  for (const SubtaskMetrics& m : metrics) {
    auto [it, inserted] = task_slot.emplace(m.task, tasks.size());
    if (inserted) {
      tasks.push_back(
          {{"name", m.task}, {"parallelism", 0}, {"subtasks", nlohmann::json::array()}});
    }
    nlohmann::json& task = tasks[it->second];
    task["parallelism"] = task["parallelism"].get<int>() + 1;
    nlohmann::json ops = nlohmann::json::array();
    for (const OperatorMetrics& o : m.operators) {
      // The operator's own gauges (late records, per-split watermark / idle / paused, ...);
      // names containing "atermark" are event times and are rendered like the others.
      nlohmann::json gauges = nlohmann::json::object();
      for (const auto& [name, value] : o.gauges) {
        gauges[name] = name.find("atermark") != std::string::npos ? WatermarkJson(value)
                                                                  : nlohmann::json(value);
      }
      nlohmann::json side = nlohmann::json::object();
      for (const auto& [tag, count] : o.side_records_out) {
        side[tag] = count;
      }
      nlohmann::json notes = nlohmann::json::object();
      for (const auto& [name, text] : o.notes) {
        notes[name] = text;
      }
      ops.push_back({{"name", o.name},
                     {"records-out", o.records_out},
                     {"side-records-out", std::move(side)},
                     {"output-watermark", WatermarkJson(o.output_watermark)},
                     {"metrics", std::move(gauges)},
                     {"notes", std::move(notes)}});
    }
    nlohmann::json task_metrics = nlohmann::json::object();
    for (const auto& [name, value] : m.task_gauges) {
      task_metrics[name] = value;
    }
    task["subtasks"].push_back({{"subtask", m.subtask_index},
                                {"records-in", m.records_in},
                                {"metrics", std::move(task_metrics)},
                                {"input-watermark", WatermarkJson(m.input_watermark)},
                                {"finished", m.finished},
                                {"operators", std::move(ops)}});
  }
  return tasks;
}

std::optional<nlohmann::json> JobManager::JobJson(const std::string& id) const {
  auto e = Find(id);
  if (!e) {
    return std::nullopt;
  }
  nlohmann::json j;
  std::shared_ptr<DaemonJob> job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    j = SummaryJson(*e);
    job = e->job;
    if (e->ended) {
      j["failure-cause"] =
          e->failure_cause.empty() ? nlohmann::json(nullptr) : nlohmann::json(e->failure_cause);
      j["report"] = e->report ? nlohmann::json(*e->report) : nlohmann::json(nullptr);
      j["tasks"] = e->final_tasks;
      j["dropped-records"] = e->dropped_records;
    }
  }
  j["file"] = e->file_name;
  j["vertices"] = e->vertices;
  if (job) {
    const std::string cause = job->failure_cause();
    j["failure-cause"] = cause.empty() ? nlohmann::json(nullptr) : nlohmann::json(cause);
    j["report"] = nullptr;
    const std::vector<SubtaskMetrics> metrics = job->Metrics();
    j["tasks"] = TasksJson(metrics);
    j["dropped-records"] = DroppedRecordLines(metrics);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    j["checkpoints"] = job ? job->CheckpointStatsJson() : e->final_checkpoints;
    // A job whose worker could not build it (an unreadable savepoint, say) restored nothing.
    const bool restore_failed =
        e->restore_failed || (!e->restore_from.empty() && job && !job->created());
    j["restored-from"] = e->restore_from.empty() || restore_failed
                             ? nlohmann::json(nullptr)
                             : nlohmann::json(e->restore_from);
    j["restore-failed-from"] =
        restore_failed ? nlohmann::json(e->restore_from) : nlohmann::json(nullptr);
  }
  // The worker process running it (Flink's TaskManager of its tasks); null in-process and ended.
  const int pid = job ? job->worker_pid() : -1;
  j["worker-pid"] = pid > 0 ? nlohmann::json(pid) : nlohmann::json(nullptr);
  return j;
}

std::optional<nlohmann::json> JobManager::ExceptionsJson(const std::string& id) const {
  auto e = Find(id);
  if (!e) {
    return std::nullopt;
  }
  std::lock_guard<std::mutex> lock(mu_);
  const std::string cause =
      e->ended ? e->failure_cause : e->job->failure_cause();  // job set until ended
  // The causes of the attempts the restart strategy restarted, oldest first.
  const nlohmann::json stats = e->job ? e->job->CheckpointStatsJson() : e->final_checkpoints;
  nlohmann::json history = stats.value("restart-causes", nlohmann::json::array());
  if (cause.empty()) {
    return nlohmann::json{{"root-exception", nullptr},
                          {"timestamp", nullptr},
                          {"restart-causes", std::move(history)}};
  }
  return nlohmann::json{
      {"root-exception", cause},
      {"timestamp", e->ended ? nlohmann::json(e->end_ms) : nlohmann::json(NowMs())},
      {"restart-causes", std::move(history)}};
}

std::optional<nlohmann::json> JobManager::ExplainJson(const std::string& id,
                                                      const std::string& operator_id) const {
  auto e = Find(id);
  if (!e) {
    return std::nullopt;
  }
  nlohmann::json j;
  std::shared_ptr<DaemonJob> job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    j = nlohmann::json{{"jid", id},
                       {"state", ToString(e->ended ? e->final_state : JobState::kRunning)},
                       {"operator", operator_id},
                       {"live", !e->ended},
                       {"operator-found", operator_id.empty()},
                       {"explain", nullptr}};
    for (const auto& v : e->vertices) {
      if (v.value("id", "") == operator_id) {
        j["operator-found"] = true;
      }
    }
    if (j["operator-found"] == false) {
      return j;
    }
    if (e->ended) {
      if (auto it = e->explanations.find(operator_id); it != e->explanations.end()) {
        j["explain"] = it->second;
      }
      return j;
    }
    job = e->job;
  }
  if (!job) {
    return j;
  }
  // Live: the running tasks' snapshots (the worker waits up to 2 s for them; 5 s here covers its
  // poll interval and the way back).
  struct Answer {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    std::optional<std::string> text;
  };
  auto answer = std::make_shared<Answer>();
  job->ExplainLive(operator_id, [answer](std::optional<std::string> text) {
    std::lock_guard<std::mutex> lock(answer->mu);
    answer->text = std::move(text);
    answer->done = true;
    answer->cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(answer->mu);
  answer->cv.wait_for(lock, std::chrono::seconds(5), [&] { return answer->done; });
  if (answer->text) {
    j["explain"] = *answer->text;
  }
  return j;
}

std::optional<nlohmann::json> JobManager::LogJson(const std::string& id) const {
  auto e = Find(id);
  if (!e) {
    return std::nullopt;
  }
  std::vector<std::string> dropped_records;
  std::shared_ptr<DaemonJob> job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dropped_records = e->dropped_records;
    job = e->job;
  }
  if (job) {
    dropped_records = DroppedRecordLines(job->Metrics());
  }
  return nlohmann::json{{"lines", e->log->Lines()},
                        {"dropped", e->log->dropped()},
                        {"dropped-records", std::move(dropped_records)}};
}

nlohmann::json JobManager::OverviewJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t counts[5] = {0, 0, 0, 0, 0};
  for (const auto& [id, e] : jobs_) {
    ++counts[static_cast<int>(e->ended ? e->final_state : JobState::kRunning)];
  }
  return nlohmann::json{
      {"jobs-running",
       counts[static_cast<int>(JobState::kRunning)] + counts[static_cast<int>(JobState::kCreated)]},
      {"jobs-finished", counts[static_cast<int>(JobState::kFinished)]},
      {"jobs-failed", counts[static_cast<int>(JobState::kFailed)]},
      {"jobs-cancelled", counts[static_cast<int>(JobState::kCanceled)]},
      {"jobs-submitted-total", submitted_total_},
      {"service-thread-failures", service_thread_failures_},
      {"last-service-thread-failure", last_service_thread_failure_.empty()
                                          ? nlohmann::json(nullptr)
                                          : nlohmann::json(last_service_thread_failure_)},
      {"max-running-jobs", options_.max_running_jobs},
      {"max-finished-jobs", options_.max_finished_jobs},
      {"finished-job-ttl", options_.finished_job_ttl.count()},
      {"uptime", NowMs() - started_ms_},
      {"version", "0.1.0"}};
}

std::string JobManager::PrometheusText() const {
  DaemonMetricCounts counts;
  std::vector<std::pair<std::shared_ptr<Entry>, std::shared_ptr<DaemonJob>>> entries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    counts = DaemonMetricCounts{static_cast<int64_t>(running_),
                                static_cast<int64_t>(jobs_.size()),
                                submitted_total_,
                                rejected_total_,
                                expired_total_,
                                finished_total_,
                                failed_total_,
                                canceled_total_,
                                service_thread_failures_};
    for (const auto& [id, e] : jobs_) {
      if (!e->ended) {
        entries.emplace_back(e, e->job);
      }
    }
  }
  std::vector<JobMetricsSample> jobs;
  for (const auto& [e, job] : entries) {
    jobs.push_back(JobMetricsSample{e->id, e->name, e->start_ms, job->Metrics()});
  }
  return PrometheusExposition(counts, jobs, NowMs());
}

JobManager::CancelStatus JobManager::Cancel(const std::string& id) {
  auto e = Find(id);
  if (!e) {
    return CancelStatus::kUnknown;
  }
  std::shared_ptr<DaemonJob> job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job = e->job;
  }
  if (!job || IsTerminal(job->state())) {
    return CancelStatus::kAlreadyEnded;
  }
  GetLogger("daemon")->info("[job {}] cancel requested", id);
  {
    std::lock_guard<std::mutex> lock(mu_);
    e->user_cancelled = true;
  }
  job->Cancel();
  return CancelStatus::kCanceling;
}

void JobManager::Shutdown() {
  std::vector<std::shared_ptr<DaemonJob>> running;
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutting_down_ = true;
    for (const auto& [id, e] : jobs_) {
      if (e->job) {
        running.push_back(e->job);
      }
    }
  }
  for (const auto& job : running) {
    job->Cancel();
  }
  running.clear();
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return waiters_ == 0; });
  expirer_cv_.notify_all();
  lock.unlock();
  if (expirer_.joinable()) {
    expirer_.join();
  }
}

std::string JobManager::JobDir(const std::string& id) const {
  return options_.state_dir.empty() ? std::string() : options_.state_dir + "/jobs/" + id;
}

nlohmann::json JobManager::RegistryJson(const Entry& e, const std::string& state) const {
  return nlohmann::json{
      {"version", 1},
      {"jid", e.id},
      {"name", e.name},
      {"file", e.file_name},
      {"yaml-file", "job.yaml"},
      {"submit-time", e.start_ms},
      {"state", state},
      {"end-time", e.end_ms},
      {"failure-cause", e.failure_cause},
      {"report", e.report ? nlohmann::json(*e.report) : nlohmann::json(nullptr)},
      {"tasks", e.final_tasks.is_null() ? nlohmann::json::array() : e.final_tasks},
      {"dropped-records", e.dropped_records},
      {"vertices", e.vertices},
      {"checkpoints", e.final_checkpoints},
      {"memory-limit", e.memory_limit ? nlohmann::json(*e.memory_limit) : nlohmann::json(nullptr)},
      {"restore-from", e.submitted_restore_from},
      {"allow-non-restored-state", e.allow_non_restored_state},
      // What this run started from, and whether that restore failed (the job did not start; the
      // failure cause says why), so a restarted daemon's `status` says the same as this one's.
      {"restored-from", e.restore_from.empty() || e.restore_failed
                            ? nlohmann::json(nullptr)
                            : nlohmann::json(e.restore_from)},
      {"restore-failed-from",
       e.restore_failed ? nlohmann::json(e.restore_from) : nlohmann::json(nullptr)},
  };
}

void JobManager::Persist(const std::string& id, const nlohmann::json& record) const {
  try {
    WriteFileAtomically(
        JobDir(id) + "/job.json",
        record.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  } catch (const std::exception& ex) {
    GetLogger("daemon")->error("[job {}] cannot write its registry record: {}", id, ex.what());
  }
}

namespace {

constexpr std::string_view kResumeByHand =
    "resume it by hand from a checkpoint or savepoint you trust (tidemark submit --from-savepoint "
    "DIR "
    "job.yaml), or submit it again without one to start from scratch";

}  // namespace

std::string JobManager::UnsafeResumeCause(const std::string& yaml, const std::string& checkpoints,
                                          int64_t restore_id,
                                          const std::vector<std::string>& skipped) const {
  std::optional<std::string> unsafe;
  try {
    unsafe = CheckpointStorage::UnsafeFallBack(LoadJobSpecString(yaml, "job.yaml"), checkpoints,
                                               restore_id, skipped);
  } catch (const std::exception&) {
    return "";  // the launch reports what is wrong with it
  }
  return unsafe ? fmt::format("could not resume after the daemon restarted: {}; {}", *unsafe,
                              kResumeByHand)
                : "";
}

void JobManager::Recover() {
  auto log = GetLogger("daemon");
  struct Record {
    std::string id;
    nlohmann::json json;
    std::string yaml;
  };
  std::vector<Record> records;
  const fs::path jobs_dir = fs::path(options_.state_dir) / "jobs";
  std::error_code ec;
  fs::create_directories(jobs_dir, ec);
  for (fs::directory_iterator it(jobs_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory()) {
      continue;
    }
    const std::string id = it->path().filename().string();
    if (id.size() != 16 || id.find_first_not_of("0123456789abcdef") != std::string::npos) {
      log->warn("state directory: ignoring {}: not a job's directory (16 hex digits)",
                it->path().string());
      continue;
    }
    const fs::path record_path = it->path() / "job.json";
    std::ifstream in(record_path);
    if (!in) {
      log->error("state directory: skipping job {}: no readable {}", id, record_path.string());
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    Record r{id, nlohmann::json::parse(text.str(), nullptr, false), ""};
    std::string problem;
    if (r.json.is_discarded() || !r.json.is_object()) {
      problem = "not a JSON object";
    } else {
      try {
        if (r.json.at("jid").get<std::string>() != id) {
          problem = "its jid is not its directory's name";
        }
        (void)r.json.at("name").get<std::string>();
        (void)r.json.at("file").get<std::string>();
        (void)r.json.at("submit-time").get<int64_t>();
        (void)r.json.at("end-time").get<int64_t>();
        (void)r.json.at("failure-cause").get<std::string>();
        const std::string state = r.json.at("state").get<std::string>();
        if (state != "RUNNING" && state != "SUSPENDED" && state != "FINISHED" &&
            state != "FAILED" && state != "CANCELED") {
          problem = fmt::format("unknown state '{}'", state);
        }
      } catch (const nlohmann::json::exception& ex) {
        problem = ex.what();
      }
    }
    if (!problem.empty()) {
      log->error("state directory: skipping job {}: {} is corrupt ({})", id, record_path.string(),
                 problem);
      continue;
    }
    std::ifstream yaml_in(it->path() / "job.yaml");
    std::stringstream yaml;
    yaml << yaml_in.rdbuf();
    r.yaml = yaml.str();
    records.push_back(std::move(r));
  }
  std::sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
    return a.json["submit-time"].get<int64_t>() < b.json["submit-time"].get<int64_t>();
  });
  const int64_t now = NowMs();
  for (Record& r : records) {
    const nlohmann::json& j = r.json;
    auto e = std::make_shared<Entry>();
    e->id = r.id;
    e->name = j["name"].get<std::string>();
    e->file_name = j["file"].get<std::string>();
    e->start_ms = j["submit-time"].get<int64_t>();
    e->log = std::make_shared<JobLog>(options_.max_log_lines, options_.max_log_bytes);
    e->vertices = nlohmann::json::array();
    if (j.contains("memory-limit") && j["memory-limit"].is_number_unsigned()) {
      e->memory_limit = j["memory-limit"].get<uint64_t>();
    }
    e->submitted_restore_from = j.value("restore-from", "");
    e->allow_non_restored_state = j.value("allow-non-restored-state", false);
    const std::string state = j["state"].get<std::string>();
    if (state == "RUNNING" || state == "SUSPENDED") {
      // Resume it: from its latest completed checkpoint that verifies, else from what it was
      // submitted with (a savepoint, or nothing).
      const std::string checkpoints = JobDir(r.id) + "/checkpoints";
      std::vector<std::string> skipped;
      std::optional<CompletedCheckpoint> latest;
      try {
        // Verified by streaming, none of its state kept: the worker loads it (bounded memory here).
        latest =
            CheckpointStorage(checkpoints, e->name, 1).LoadLatest(&skipped, /*load_states=*/false);
      } catch (const std::exception& ex) {
        skipped.push_back(ex.what());
      }
      for (const std::string& line : skipped) {
        log->warn("[job {}] {}", r.id, line);
      }
      // Never write committed output twice: a skipped checkpoint that completed (its _metadata
      // was written) may have had its output committed by the sinks.
      std::string refusal =
          UnsafeResumeCause(r.yaml, checkpoints, latest ? latest->id : 0, skipped);
      e->restore_from = latest ? latest->directory.string() : e->submitted_restore_from;
      log->info("[job {}] resuming '{}' after a daemon restart {}", r.id, e->name,
                latest ? fmt::format("from checkpoint {} ({})", latest->id, e->restore_from)
                : e->restore_from.empty()
                    ? fmt::format("from scratch (no completed checkpoint in {})", checkpoints)
                    : "from " + e->restore_from + " (no completed checkpoint yet)");
      e->log->Append(
          fmt::format("resumed after a daemon restart {}",
                      e->restore_from.empty() ? "from scratch" : "from " + e->restore_from));
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++running_;
        order_.push_back(r.id);
        ++submitted_total_;
      }
      SubmitResult result;
      if (!refusal.empty()) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          --running_;
        }
        result = {SubmitResult::Status::kInternalError, "", {refusal}};
      } else if (r.yaml.empty()) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          --running_;
        }
        result = {SubmitResult::Status::kInternalError, "", {"its job.yaml is missing or empty"}};
      } else {
        result = Launch(e, r.yaml, true);
      }
      if (result.status == SubmitResult::Status::kAccepted) {
        continue;
      }
      e->failure_cause = !refusal.empty() ? refusal
                                          : "could not resume after the daemon restarted: " +
                                                fmt::format("{}", fmt::join(result.errors, "; "));
      log->error("[job {}] {}", r.id, e->failure_cause);
      // It did not start, so it was not restored from the checkpoint it would have resumed from.
      e->restore_failed = !e->restore_from.empty();
      e->final_state = JobState::kFailed;
      e->end_ms = now;
    } else {
      e->final_state = state == "FINISHED" ? JobState::kFinished
                       : state == "FAILED" ? JobState::kFailed
                                           : JobState::kCanceled;
      e->end_ms = j["end-time"].get<int64_t>();
      e->failure_cause = j["failure-cause"].get<std::string>();
      if (j.contains("report") && j["report"].is_string()) {
        e->report = j["report"].get<std::string>();
        e->log->Append(*e->report);
      }
      if (j.contains("tasks") && j["tasks"].is_array()) {
        e->final_tasks = j["tasks"];
      }
      if (j.contains("dropped-records") && j["dropped-records"].is_array()) {
        e->dropped_records = j["dropped-records"].get<std::vector<std::string>>();
      }
      if (j.contains("checkpoints") && j["checkpoints"].is_object()) {
        e->final_checkpoints = j["checkpoints"];
      }
      if (j.contains("vertices") && j["vertices"].is_array()) {
        e->vertices = j["vertices"];
      }
      // Records written before these keys existed have neither: nothing is said about a restore.
      if (j.contains("restore-failed-from") && j["restore-failed-from"].is_string()) {
        e->restore_from = j["restore-failed-from"].get<std::string>();
        e->restore_failed = true;
      } else if (j.contains("restored-from") && j["restored-from"].is_string()) {
        e->restore_from = j["restored-from"].get<std::string>();
      }
    }
    e->ended = true;
    e->end_steady = std::chrono::steady_clock::now() -
                    std::chrono::milliseconds(std::max<int64_t>(0, now - e->end_ms));
    std::lock_guard<std::mutex> lock(mu_);
    if (std::find(order_.begin(), order_.end(), r.id) == order_.end()) {
      order_.push_back(r.id);
    }
    jobs_[r.id] = e;
    finished_order_.push_back(r.id);
    if (e->final_state == JobState::kFailed && e->failure_cause.rfind("could not resume", 0) == 0) {
      Persist(r.id, RegistryJson(*e, "FAILED"));
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  // finished_order_ is in end order (the expirer's front expires first).
  std::stable_sort(finished_order_.begin(), finished_order_.end(),
                   [this](const std::string& a, const std::string& b) {
                     return jobs_.at(a)->end_ms < jobs_.at(b)->end_ms;
                   });
  TrimHistory();
  expirer_cv_.notify_one();
}

JobManager::SavepointTrigger JobManager::TriggerSavepoint(const std::string& id, std::string dir,
                                                          bool stop, bool drain) {
  auto e = Find(id);
  if (!e) {
    return {SavepointTrigger::Status::kUnknownJob, "", fmt::format("no such job: {}", id)};
  }
  if (dir.empty()) {
    dir = !options_.savepoint_dir.empty() ? options_.savepoint_dir
          : !options_.state_dir.empty()   ? options_.state_dir + "/savepoints"
                                          : std::string();
  }
  if (dir.empty()) {
    return {SavepointTrigger::Status::kNoDirectory, "",
            "no savepoint directory given, and the daemon has no state directory for a default"};
  }
  std::error_code ec;
  dir = fs::absolute(dir, ec).lexically_normal().string();
  // Checked before anything starts: a target that cannot be made is the request's error, never
  // a failed checkpoint of the job.
  if (std::optional<std::string> why = CheckpointStorage::CheckSavepointTarget(dir)) {
    return {SavepointTrigger::Status::kBadDirectory, "", *why};
  }
  std::shared_ptr<DaemonJob> job;
  auto op = std::make_shared<SavepointOp>();
  op->stop = stop;
  std::string request_id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job = e->job;
    if (!job || e->ended) {
      return {SavepointTrigger::Status::kNotRunning, "",
              fmt::format("job {} has already ended ({}); savepoints are taken of running jobs", id,
                          ToString(e->final_state))};
    }
    if (e->user_cancelled) {
      return {SavepointTrigger::Status::kNotRunning, "",
              fmt::format("job {} is being cancelled", id)};
    }
    request_id =
        fmt::format("{:016x}{:04x}", static_cast<uint64_t>(NowMs()), ++e->next_savepoint & 0xffff);
    e->savepoints.emplace(request_id, op);
    while (e->savepoints.size() > 64) {  // ids start with the trigger time: the first is the oldest
      e->savepoints.erase(e->savepoints.begin());
    }
  }
  GetLogger("daemon")->info("[job {}] savepoint {} requested into {}{}", id, request_id,
                            EscapeControlCharacters(dir),
                            stop ? (drain ? " (stop, drain)" : " (stop)") : "");
  std::weak_ptr<SavepointOp> weak_op = op;
  std::weak_ptr<Entry> weak_entry = e;
  job->TriggerSavepoint(
      DaemonSavepointRequest{dir, stop, drain},
      [this, weak_op, weak_entry, id, request_id](DaemonSavepointResult r) {
        if (r.ok) {
          GetLogger("daemon")->info("[job {}] savepoint {} completed: {}", id, request_id, r.path);
        } else {
          GetLogger("daemon")->warn("[job {}] savepoint {} failed: {}", id, request_id, r.error);
        }
        std::lock_guard<std::mutex> lock(mu_);
        if (auto pending = weak_op.lock()) {
          pending->has_result = true;
          pending->result = std::move(r);
          // A completed stop waits for the job's end (OnJobEnded marks it done).
          const auto entry = weak_entry.lock();
          pending->done = !pending->stop || !pending->result.ok || !entry || entry->ended;
        }
      });
  return {SavepointTrigger::Status::kTriggered, request_id, ""};
}

std::optional<nlohmann::json> JobManager::SavepointStatusJson(const std::string& id,
                                                              const std::string& request_id) const {
  auto e = Find(id);
  if (!e) {
    return std::nullopt;
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = e->savepoints.find(request_id);
  if (it == e->savepoints.end()) {
    return std::nullopt;
  }
  const SavepointOp& op = *it->second;
  if (!op.done) {
    return nlohmann::json{{"status", {{"id", "IN_PROGRESS"}}}, {"operation", nullptr}};
  }
  nlohmann::json operation =
      op.result.ok
          ? nlohmann::json{{"location", op.result.path}}
          : nlohmann::json{{"failure-cause",
                            {{"class", "SavepointException"}, {"stack-trace", op.result.error}}}};
  return nlohmann::json{{"status", {{"id", "COMPLETED"}}}, {"operation", std::move(operation)}};
}

std::optional<nlohmann::json> JobManager::CheckpointsJson(const std::string& id) const {
  auto e = Find(id);
  if (!e) {
    return std::nullopt;
  }
  nlohmann::json stats;
  std::string restored;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A running job's figures are a copy under the job's own lock: this never waits for the job.
    stats = e->job ? e->job->CheckpointStatsJson() : e->final_checkpoints;
    restored = e->restore_failed ? std::string() : e->restore_from;
  }
  const int64_t completed = stats.value("completed", int64_t{0});
  const int64_t failed = stats.value("failed", int64_t{0});
  nlohmann::json latest_completed = nullptr;
  if (stats.value("last-completed-id", int64_t{0}) > 0) {
    latest_completed = {{"id", stats.value("last-completed-id", int64_t{0})},
                        {"status", "COMPLETED"},
                        {"state_size", stats.value("last-size-bytes", int64_t{0})},
                        {"end_to_end_duration", stats.value("last-duration-ms", int64_t{0})},
                        {"alignment_duration", stats.value("last-alignment-ms", int64_t{0})},
                        {"external_path", stats.value("last-path", "")}};
  }
  return nlohmann::json{
      {"counts",
       {{"restored", restored.empty() ? 0 : 1},
        {"total", completed + failed},
        {"in_progress", 0},
        {"completed", completed},
        {"failed", failed}}},
      {"latest",
       {{"completed", std::move(latest_completed)},
        {"restored", restored.empty() ? nlohmann::json(nullptr)
                                      : nlohmann::json{{"external_path", restored}}}}},
      {"history", stats.value("history", nlohmann::json::array())},
      {"restarts", stats.value("restarts", int64_t{0})}};
}

bool JobManager::WaitForJob(const std::string& id, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] {
    auto it = jobs_.find(id);
    return it == jobs_.end() || it->second->ended;
  });
}

size_t JobManager::running_jobs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

}  // namespace tidemark

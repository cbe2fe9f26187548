#include "runtime/daemon/job_manager.h"

#include <malloc.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "config/diagnostic.h"
#include "runtime/core/logging.h"
#include "runtime/daemon/prometheus_metrics.h"
#include "runtime/graph/job_graph.h"

namespace tidemark {
namespace {

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
    expirer_ = std::thread([this] { ExpireHistory(); });
  }
}

JobManager::~JobManager() { Shutdown(); }

std::string JobManager::NewJobId() {
  // splitmix64: distinct ids without a shared RNG object; 16 hex digits.
  for (;;) {
    uint64_t z = (id_state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    std::string id = fmt::format("{:016x}", z);
    if (jobs_.count(id) == 0) {
      return id;
    }
  }
}

JobManager::SubmitResult JobManager::Submit(const std::string& yaml, const std::string& file_name,
                                            std::optional<uint64_t> memory_limit_bytes) {
  using Status = SubmitResult::Status;
  auto log = GetLogger("daemon");
  auto entry = std::make_shared<Entry>();
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
  auto release_slot = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
    cv_.notify_all();
  };
  entry->file_name = file_name;
  entry->log = std::make_shared<JobLog>(options_.max_log_lines, options_.max_log_bytes);
  std::weak_ptr<JobLog> weak_log = entry->log;
  std::shared_ptr<JobLog> job_log = entry->log;
  const std::string job_id = entry->id;
  // Print-sink lines go to the job's bounded buffer (served by `logs`), tagged in the daemon's
  // debug log with the job id, never to the daemon's stdout.
  JobResources::LineWriter writer = [job_log, job_id](const std::string& line) {
    job_log->Append(line);
    SPDLOG_LOGGER_DEBUG(GetLogger("daemon"), "[job {}] {}", job_id, line);
  };
  try {
    entry->job = factory_(yaml, file_name, std::move(writer));
  } catch (const ConfigError& e) {
    release_slot();
    return {Status::kInvalidJob, "", SplitLines(e.what())};
  } catch (const JobCompileError& e) {
    release_slot();
    return {Status::kInvalidJob, "", SplitLines(e.what())};
  } catch (const std::exception& e) {
    release_slot();
    log->error("job submission failed: {}", e.what());
    return {Status::kInternalError, "", {e.what()}};
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
  entry->start_ms = NowMs();
  entry->vertices = nlohmann::json::array();
  for (const DaemonJobVertex& v : entry->job->Vertices()) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const DaemonJobInput& in : v.inputs) {
      inputs.push_back({{"id", in.from},
                        {"ship_strategy", in.partitioning},
                        {"side-output", in.side_output.empty() ? nlohmann::json(nullptr) : nlohmann::json(in.side_output)},
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
  for (const DaemonJobOutput& o : entry->job->Outputs()) {
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
    for (const auto& [path, sink] : outputs) {
      auto owner = owned_files_.find(path);
      if (owner != owned_files_.end()) {
        const auto other = jobs_.find(owner->second);
        const std::string other_name = other != jobs_.end() ? other->second->name : "?";
        --running_;
        cv_.notify_all();
        return {Status::kInvalidJob,
                "",
                {fmt::format("{}: sink '{}' writes '{}', which running job {} ('{}') writes too; cancel that job "
                             "or wait until it ends, or write another path",
                             file_name, sink, path, owner->second, other_name)}};
      }
      auto [it, inserted] = mine.emplace(path, sink);
      if (!inserted) {
        --running_;
        cv_.notify_all();
        return {Status::kInvalidJob,
                "",
                {fmt::format("{}: sinks '{}' and '{}' both write '{}'", file_name, it->second, sink, path)}};
      }
    }
    for (const auto& [path, sink] : mine) {
      owned_files_.emplace(path, entry->id);
      entry->owned_files.push_back(path);
    }
    jobs_[entry->id] = entry;
    order_.push_back(entry->id);
    ++submitted_total_;
    ++waiters_;
  }
  log->info("[job {}] submitted '{}' ({})", entry->id, entry->name, file_name);
  auto wait_for_end = [this, e = entry, job = std::move(job)](bool run) mutable {
    OnJobEnded(e, std::move(job), run);
    e.reset();
    std::lock_guard<std::mutex> lock(mu_);
    --waiters_;
    cv_.notify_all();
  };
  try {
    std::thread(wait_for_end, true).detach();  // a copy: on failure `wait_for_end` still holds the job
  } catch (const std::system_error& ex) {
    // No thread to run it on (resources exhausted): end the job here rather than leave it
    // RUNNING for ever with a waiter that Shutdown would wait for.
    log->error("[job {}] no thread to run it ({})", entry->id, ex.what());
    wait_for_end(false);
  }
  return {Status::kAccepted, entry->id, {}};
}

void JobManager::OnJobEnded(const std::shared_ptr<Entry>& e, std::shared_ptr<DaemonJob> job, bool run) {
  // Run joins every task thread (in tidemarkd: reaps the job's worker process).
  const JobState state = run ? job->Run() : JobState::kFailed;
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
  const std::string cause = run ? job->failure_cause() : "no thread to run the job on (resources exhausted)";
  auto log = GetLogger("daemon");
  if (state == JobState::kFailed) {
    log->error("[job {}] '{}' FAILED: {}", e->id, e->name, cause);
  } else {
    log->info("[job {}] '{}' {}", e->id, e->name, ToString(state));
  }
  nlohmann::json final_tasks = TasksJson(job->Metrics());
  std::map<std::string, std::string> explanations = run ? job->WatermarkExplanations()
                                                        : std::map<std::string, std::string>{};
  std::unique_lock<std::mutex> lock(mu_);
  for (const std::string& path : e->owned_files) {
    owned_files_.erase(path);
  }
  e->ended = true;
  e->end_ms = NowMs();
  e->end_steady = std::chrono::steady_clock::now();
  e->final_state = state;
  e->failure_cause = cause;
  e->report = std::move(report);
  e->explanations = std::move(explanations);
  e->final_tasks = std::move(final_tasks);
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
  finished_order_.push_back(e->id);
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
      while (!finished_order_.empty() && jobs_.at(finished_order_.front())->end_steady + ttl <= now) {
        DropFinished(finished_order_.front());
        ++dropped;
      }
      expired_total_ += dropped;
      idle = running_ == 0;
    };
    try {
      std::thread(drop_expired).join();
    } catch (const std::system_error&) {
      drop_expired();  // no thread to be had: free them here, the cache is a detail
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
      tasks.push_back({{"name", m.task}, {"parallelism", 0}, {"subtasks", nlohmann::json::array()}});
    }
    nlohmann::json& task = tasks[it->second];
    task["parallelism"] = task["parallelism"].get<int>() + 1;
    nlohmann::json ops = nlohmann::json::array();
    for (const OperatorMetrics& o : m.operators) {
      // The operator's own gauges (late records, per-split watermark / idle / paused, ...);
      // names containing "atermark" are event times and are rendered like the others.
      nlohmann::json gauges = nlohmann::json::object();
      for (const auto& [name, value] : o.gauges) {
        gauges[name] = name.find("atermark") != std::string::npos ? WatermarkJson(value) : nlohmann::json(value);
      }
      ops.push_back({{"name", o.name},
                     {"records-out", o.records_out},
                     {"output-watermark", WatermarkJson(o.output_watermark)},
                     {"metrics", std::move(gauges)}});
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
      j["failure-cause"] = e->failure_cause.empty() ? nlohmann::json(nullptr) : nlohmann::json(e->failure_cause);
      j["report"] = e->report ? nlohmann::json(*e->report) : nlohmann::json(nullptr);
      j["tasks"] = e->final_tasks;
    }
  }
  j["file"] = e->file_name;
  j["vertices"] = e->vertices;
  if (job) {
    const std::string cause = job->failure_cause();
    j["failure-cause"] = cause.empty() ? nlohmann::json(nullptr) : nlohmann::json(cause);
    j["report"] = nullptr;
    j["tasks"] = TasksJson(job->Metrics());
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
  const std::string cause = e->ended ? e->failure_cause : e->job->failure_cause();  // job set until ended
  if (cause.empty()) {
    return nlohmann::json{{"root-exception", nullptr}, {"timestamp", nullptr}};
  }
  return nlohmann::json{{"root-exception", cause},
                        {"timestamp", e->ended ? nlohmann::json(e->end_ms) : nlohmann::json(NowMs())}};
}

std::optional<nlohmann::json> JobManager::ExplainJson(const std::string& id, const std::string& operator_id) const {
  auto e = Find(id);
  if (!e) {
    return std::nullopt;
  }
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json j{{"jid", id},
                   {"state", ToString(e->ended ? e->final_state : JobState::kRunning)},
                   {"operator", operator_id},
                   {"explain", nullptr}};
  if (e->ended) {
    if (auto it = e->explanations.find(operator_id); it != e->explanations.end()) {
      j["explain"] = it->second;
    }
  }
  return j;
}

std::optional<nlohmann::json> JobManager::LogJson(const std::string& id) const {
  auto e = Find(id);
  if (!e) {
    return std::nullopt;
  }
  return nlohmann::json{{"lines", e->log->Lines()}, {"dropped", e->log->dropped()}};
}

nlohmann::json JobManager::OverviewJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t counts[5] = {0, 0, 0, 0, 0};
  for (const auto& [id, e] : jobs_) {
    ++counts[static_cast<int>(e->ended ? e->final_state : JobState::kRunning)];
  }
  return nlohmann::json{{"jobs-running", counts[static_cast<int>(JobState::kRunning)] +
                                             counts[static_cast<int>(JobState::kCreated)]},
                        {"jobs-finished", counts[static_cast<int>(JobState::kFinished)]},
                        {"jobs-failed", counts[static_cast<int>(JobState::kFailed)]},
                        {"jobs-cancelled", counts[static_cast<int>(JobState::kCanceled)]},
                        {"jobs-submitted-total", submitted_total_},
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
    counts = DaemonMetricCounts{static_cast<int64_t>(running_), static_cast<int64_t>(jobs_.size()),
                                submitted_total_, rejected_total_, expired_total_, finished_total_,
                                failed_total_, canceled_total_};
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

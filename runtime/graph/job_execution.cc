#include "runtime/graph/job_execution.h"

#include <map>
#include <random>
#include <system_error>
#include <unistd.h>

#include "runtime/core/logging.h"
#include "runtime/core/thread_entry.h"
#include "runtime/core/timestamp.h"
#include "runtime/graph/operator_chains.h"
#include "runtime/graph/state_layout.h"
#include "runtime/state/rocksdb_local_dir.h"
#include "runtime/task/cpu_affinity.h"
#include "runtime/time/system_processing_time_service.h"

namespace tidemark {
namespace {
constexpr size_t kBatchSize = 256;
}  // namespace

const char* ToString(JobState s) {
  switch (s) {
    case JobState::kCreated:
      return "CREATED";
    case JobState::kRunning:
      return "RUNNING";
    case JobState::kFinished:
      return "FINISHED";
    case JobState::kFailed:
      return "FAILED";
    case JobState::kCanceled:
      return "CANCELED";
  }
  return "?";
}

JobExecution::JobExecution(JobGraph graph, JobCheckpointOptions options)
    : graph_(std::move(graph)), options_(std::move(options)) {
  Build();
}

JobExecution::~JobExecution() {
  if (state() == JobState::kRunning) {
    Cancel();
  }
  Wait();
  // Tasks go before the coordinator and storage they point to.
  tasks_.clear();
  retired_tasks_.clear();
  coordinator_.reset();
  storage_.reset();
  if (remove_checkpoint_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(checkpoint_dir_, ec);
  }
}

void JobExecution::Build() {
  if (graph_.pipeline.state_backend == "rocksdb") {
    // Before any task: a local directory that cannot hold instances fails the job once, naming
    // the key (the tasks would fail every attempt); what dead processes left there goes.
    PrepareRocksDbLocalDir(graph_.pipeline.rocksdb);
  }
  const bool virtual_time = graph_.pipeline.clock == "virtual";
  if (virtual_time) {
    virtual_clock_ = std::make_unique<VirtualClock>();
  } else {
    timer_thread_ = std::make_unique<TimerThread>();
    // A timer lost to a failed allocation on the timer thread would stall its task silently.
    timer_thread_->SetFailureHandler(
        [this](const std::string& cause) { FailJob(fmt::format("timer thread: {}", cause)); });
  }
  const bool supervised =
      graph_.checkpointing.has_value() || graph_.restart_strategy.type != "none";
  if (supervised) {
    if (virtual_time) {
      auto pts = std::make_unique<VirtualProcessingTimeService>(*virtual_clock_);
      master_virtual_pts_ = pts.get();
      master_pts_ = std::move(pts);
    } else {
      master_pts_ = std::make_unique<SystemProcessingTimeService>(*timer_thread_, master_mailbox_);
    }
    restart_clock_ = std::make_unique<ProcessingTimeRelativeClock>(*master_pts_);
    // Jitter of exponential-delay: reproducible under the virtual clock.
    const uint64_t seed = virtual_time ? 0 : std::random_device{}();
    restart_strategy_ =
        CreateRestartBackoffTimeStrategy(graph_.restart_strategy, *restart_clock_, seed);
  }
  restored_ = options_.restored;
  for (const FaultSpec& fault : graph_.faults) {
    fault_budgets_.push_back(std::make_shared<FaultBudget>(fault));
  }
  if (graph_.checkpointing) {
    checkpoint_dir_ = options_.checkpoint_dir;
    if (checkpoint_dir_.empty()) {
      checkpoint_dir_ = graph_.checkpointing->dir;
    }
    if (checkpoint_dir_.empty()) {
      static std::atomic<int> counter{0};
      checkpoint_dir_ = std::filesystem::temp_directory_path() /
                        fmt::format("tidemark-checkpoints-{}-{}", ::getpid(), counter.fetch_add(1));
      remove_checkpoint_dir_ = true;
    }
    storage_ = std::make_unique<CheckpointStorage>(checkpoint_dir_, graph_.name,
                                                   graph_.checkpointing->num_retained);
    storage_->SetOperatorLayouts(StateLayoutsOf(graph_));
    storage_->SetIncremental(graph_.checkpointing->incremental);
    std::map<std::string, OperatorParallelism> parallelism;
    for (const JobVertex& v : graph_.vertices) {
      parallelism[v.spec.id] = OperatorParallelism{v.parallelism, graph_.pipeline.max_parallelism};
    }
    storage_->SetOperatorParallelism(std::move(parallelism));
    CheckpointCoordinator::Hooks hooks;
    hooks.trigger_sources = [this](const CheckpointBarrier& barrier) {
      for (auto& t : tasks_) {
        if (dynamic_cast<SourceOperatorBase*>(&t->op(0)) != nullptr) {
          t->TriggerCheckpoint(barrier);
        }
      }
    };
    hooks.notify_complete = [this](int64_t id) {
      for (auto& t : tasks_) {
        t->NotifyCheckpointComplete(id);
      }
      if (checkpoint_listener_) {
        checkpoint_listener_(id);
      }
      if (auto it = savepoints_.find(id); it != savepoints_.end()) {
        PendingSavepoint sp = std::move(it->second);
        savepoints_.erase(it);
        // Answer before a stop ends the tasks: once they end, the job's end can be reported (and
        // a worker process exit) before this thread got to the answer, which was then lost.
        if (sp.done) {
          sp.done(SavepointOutcome{true, id, sp.path, {}});
        }
        if (sp.stop) {
          {
            MutexLock lock(mu_);
            stop_with_savepoint_ = true;
          }
          for (auto& t : tasks_) {
            t->Cancel();
          }
        }
      }
    };
    hooks.notify_aborted = [this](int64_t id, const std::string& reason) {
      for (auto& t : tasks_) {
        t->NotifyCheckpointAborted(id);
      }
      if (auto it = savepoints_.find(id); it != savepoints_.end()) {
        PendingSavepoint sp = std::move(it->second);
        savepoints_.erase(it);
        if (sp.done) {
          sp.done(SavepointOutcome{false, id, {}, reason});
        }
      }
    };
    hooks.fail_job = [this](const std::string& reason) {
      FailJob(reason);
    };
    hooks.post = [this](std::function<void()> action) {
      master_mailbox_.Put(Mail{std::move(action), "checkpoint coordinator"});
    };
    {
      MutexLock lock(mu_);
      BuildTasks();
    }
    std::vector<std::string> names;
    for (const auto& t : tasks_) {
      names.push_back(t->checkpoint_task_name());
    }
    coordinator_ = std::make_unique<CheckpointCoordinator>(
        *graph_.checkpointing, std::move(names), storage_.get(), *master_pts_, std::move(hooks));
    // Ids continue after the restored checkpoint and after any completed one in the directory,
    // so a resumed job's checkpoints are newer than what it resumed from (LoadLatest picks by id).
    int64_t next = restored_ ? restored_->id + 1 : 1;
    if (const std::vector<int64_t> ids = storage_->CompletedIds(); !ids.empty()) {
      next = std::max(next, ids.back() + 1);
    }
    coordinator_->AdvanceCheckpointIdTo(next);
    first_own_checkpoint_id_ = next;
    EnableTaskCheckpoints();
    return;
  }
  {
    MutexLock lock(mu_);
    BuildTasks();
  }
  EnableTaskCheckpoints();
}

void JobExecution::EnableTaskCheckpoints() {
  if (!coordinator_) {
    // Restored without checkpointing (Flink restores a savepoint whether or not the job
    // checkpoints): before, such a job started from scratch and wrote again what the savepoint
    // covered.
    for (auto& t : tasks_) {
      t->SetRestored(restored_.get());
    }
    return;
  }
  const auto mode = graph_.checkpointing->mode == "at-least-once"
                        ? CheckpointBarrierHandler::Mode::kAtLeastOnce
                        : CheckpointBarrierHandler::Mode::kExactlyOnce;
  for (auto& t : tasks_) {
    t->EnableCheckpoints(mode, storage_.get(), coordinator_.get(), restored_.get());
    t->SetRestoreWatermarks(graph_.checkpointing->restore_watermarks);
  }
}

void JobExecution::BuildTasks() {
  const bool virtual_time = graph_.pipeline.clock == "virtual";

  // Chain heads: vertices whose input edge is not chained (sources, keyBy targets, ...).
  const std::vector<int> head_of = ChainHeads(graph_);

  // task_index[(vertex, subtask)] and the operator index of that vertex inside its task.
  std::map<std::pair<int, int>, StreamTask*> task_of;
  std::map<std::pair<int, int>, int> op_index;
  for (const JobVertex& head : graph_.vertices) {
    if (head_of[static_cast<size_t>(head.id)] != head.id) {
      continue;
    }
    const std::string chain_name = ChainName(graph_, head_of, head.id);
    for (int s = 0; s < head.parallelism; ++s) {
      auto task = std::make_unique<StreamTask>(chain_name, s);
      if (virtual_time) {
        auto pts = std::make_unique<VirtualProcessingTimeService>(*virtual_clock_);
        auto* raw = pts.get();
        task->SetProcessingTimeService(std::move(pts), raw);
      } else {
        task->SetProcessingTimeService(
            std::make_unique<SystemProcessingTimeService>(*timer_thread_, task->mailbox()),
            nullptr);
      }
      task->SetAutoWatermarkIntervalMs(graph_.pipeline.auto_watermark_interval_ms);
      task->SetFinishedInputCountsAsMax(graph_.pipeline.finished_input == "max");
      task->SetStateBackend(graph_.pipeline.state_backend, graph_.pipeline.rocksdb);
      task->SetMaxParallelism(graph_.pipeline.max_parallelism);
      task->SetParallelism(head.parallelism);  // a chain's operators share its parallelism
      for (const JobVertex& v : graph_.vertices) {
        if (head_of[static_cast<size_t>(v.id)] == head.id) {
          std::unique_ptr<StreamOperator> op = v.compiled.factory(s, v.parallelism);
          for (const auto& fault : fault_budgets_) {
            if (fault->spec.operator_id == v.spec.id) {
              op = std::make_unique<FaultInjectingOperator>(std::move(op), fault);
            }
          }
          int idx = task->AddOperator(std::move(op), v.spec.id);
          op_index[{v.id, s}] = idx;
          task_of[{v.id, s}] = task.get();
        }
      }
      ConnectAlignment(*task);
      tasks_.push_back(std::move(task));
    }
  }

  // Channels of non-chained edges, grouped per (downstream vertex, subtask, input index).
  std::map<std::tuple<int, int, int>, std::vector<Channel*>> gate_channels;
  std::map<std::tuple<int, int, int>, std::vector<std::string>> gate_upstream;  // parallel to it
  const size_t capacity =
      static_cast<size_t>(std::max<int64_t>(4, graph_.pipeline.channel_capacity));
  for (const JobEdge& e : graph_.edges) {
    const JobVertex& up = graph_.vertices[static_cast<size_t>(e.from)];
    const JobVertex& down = graph_.vertices[static_cast<size_t>(e.to)];
    for (int u = 0; u < up.parallelism; ++u) {
      StreamTask* up_task = task_of.at({e.from, u});
      TaskOperatorOutput& out = up_task->output_of(op_index.at({e.from, u}));
      TaskOperatorOutput::Target target;
      if (graph_.IsChained(e)) {
        target.op = &task_of.at({e.to, u})->op(op_index.at({e.to, u}));
        target.op_name = &task_of.at({e.to, u})->op_name(op_index.at({e.to, u}));
        target.input = e.input_index;
      } else {
        std::vector<Channel*> chans;
        for (int d = 0; d < down.parallelism; ++d) {
          if (e.partitioning == Partitioning::kForward && d != u) {
            continue;
          }
          StreamTask* down_task = task_of.at({e.to, d});
          auto ch = std::make_unique<Channel>(capacity, &down_task->wakeup());
          ch->SetProducerWakeup(&up_task->wakeup());
          chans.push_back(ch.get());
          gate_channels[{e.to, d, e.input_index}].push_back(ch.get());
          gate_upstream[{e.to, d, e.input_index}].push_back(
              fmt::format("{}#{}", up_task->name(), up_task->subtask_index()));
          channels_.push_back(std::move(ch));
          channel_tasks_.emplace_back(up_task, down_task);
        }
        target.writer = up_task->AddWriter(std::make_unique<RecordWriter>(
            e.partitioning, chans, e.key_slots, u, kBatchSize, graph_.pipeline.max_parallelism));
        if (e.fields_read) {
          const Schema& rows = e.side_output.empty()
                                   ? up.compiled.output_schema
                                   : up.compiled.side_output_schemas.at(e.side_output);
          target.writer->SetFieldsRead(*e.fields_read, rows.size());
        }
      }
      if (e.side_output.empty()) {
        out.AddMainTarget(target);
      } else {
        out.AddSideTarget(e.side_output, target);
      }
    }
  }
  for (auto& [key, chans] : gate_channels) {
    auto [vertex, subtask, input] = key;
    task_of.at({vertex, subtask})->AddInput(input, chans, gate_upstream[key]);
  }
  task_finished_.assign(tasks_.size(), false);
}

void JobExecution::ConnectAlignment(StreamTask& task) {
  auto* participant = dynamic_cast<WatermarkAlignmentParticipant*>(&task.op(0));
  if (participant == nullptr) {
    return;
  }
  const std::optional<WatermarkAlignmentParams> params = participant->alignment_params();
  if (!params) {
    return;
  }
  // The announcement is handed over as a Mail: the operator only ever runs on its task thread.
  TaskMailbox* mailbox = &task.mailbox();
  const int id =
      source_coordinator_->RegisterSubtask(*params, [mailbox, participant](Timestamp max) {
        mailbox->Put(Mail{[participant, max] { participant->HandleAlignmentEvent(max); },
                          "watermark alignment"});
      });
  SourceCoordinator* coordinator = source_coordinator_.get();
  participant->SetWatermarkReporter(
      [coordinator, id](Timestamp watermark) { coordinator->ReportWatermark(id, watermark); });
}

void JobExecution::Start() {
  {
    MutexLock lock(mu_);
    if (state_ != JobState::kCreated) {
      return;
    }
    state_ = JobState::kRunning;
    tasks_running_ = tasks_.size();
    if (tasks_.empty()) {
      state_ = JobState::kFinished;
      ended_cv_.NotifyAll();
      return;
    }
    if (virtual_clock_) {
      // One driver thread steps every task (see RunVirtualClock).
      try {
        threads_.emplace_back([this] {
          RunThreadEntry(
              "virtual clock driver", [this] { RunVirtualClock(); },
              [this](const std::string& cause) { FailDriver(cause); });
        });
      } catch (const std::system_error& e) {
        failure_ = fmt::format("cannot start the job's thread: {}", e.what());
        state_ = JobState::kFailed;
        ended_cv_.NotifyAll();
      }
      return;
    }
    if (master_pts_) {
      try {
        master_thread_ = std::thread([this] {
          RunThreadEntry(
              "job master", [this] { RunMaster(); },
              [this](const std::string& cause) {
                FailJob(fmt::format("job master: {}", cause));
                FailPendingSavepoints("the job master failed");
              });
        });
      } catch (const std::system_error& e) {
        failure_ = fmt::format("cannot start the job master's thread: {}", e.what());
        state_ = JobState::kFailed;
        ended_cv_.NotifyAll();
        return;
      }
    }
  }
  StartTaskThreads();
}

std::vector<int> JobExecution::TaskCpus() const {
  if (graph_.pipeline.cpu_affinity != "auto") {
    return std::vector<int>(tasks_.size(), -1);
  }
  // A task is a source task when its head operator (op 0) is a source.
  std::vector<bool> is_source;
  is_source.reserve(tasks_.size());
  for (const auto& t : tasks_) {
    bool source = false;
    for (const JobVertex& v : graph_.vertices) {
      if (v.spec.id == t->op_name(0)) {
        source = v.spec.type == "source";
      }
    }
    is_source.push_back(source);
  }
  return PlaceTasksOnCpus(AllowedCpus(), is_source);
}

void JobExecution::MarkTasksSharingCpuWithConsumer(const std::vector<int>& cpus) {
  std::map<const StreamTask*, size_t> index_of;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    index_of[tasks_[i].get()] = i;
  }
  std::vector<std::pair<size_t, size_t>> channels;
  channels.reserve(channel_tasks_.size());
  for (const auto& [up, down] : channel_tasks_) {
    channels.emplace_back(index_of.at(up), index_of.at(down));
  }
  const std::vector<bool> shares = TasksSharingCpuWithConsumer(cpus, channels);
  for (size_t i = 0; i < tasks_.size(); ++i) {
    tasks_[i]->SetSharesCpuWithConsumer(shares[i]);
  }
}

void JobExecution::PinTaskThread(size_t i, const StreamTask& task, int cpu) {
  int pinned = -1;
  if (cpu >= 0) {
    const std::string error = PinCurrentThread(cpu);
    if (error.empty()) {
      pinned = CurrentThreadPinnedCpu();
    } else if (!pin_warned_.exchange(true)) {
      GetLogger("graph")->warn(
          "job {}: pipeline.cpu-affinity: cannot pin task {}#{} to CPU {} ({}); its tasks run "
          "where the kernel places them",
          EscapeControlCharacters(graph_.name), task.name(), task.subtask_index(), cpu, error);
    }
  }
  MutexLock l(mu_);
  if (i < pinned_cpus_.size()) {
    pinned_cpus_[i] = pinned;
  }
}

std::vector<int> JobExecution::PinnedCpus() const {
  MutexLock l(mu_);
  return pinned_cpus_;
}

bool JobExecution::StartTaskThreads() {
  size_t started = 0;
  {
    MutexLock lock(mu_);
    const std::vector<int> cpus = TaskCpus();
    pinned_cpus_.assign(tasks_.size(), -1);
    MarkTasksSharingCpuWithConsumer(cpus);
    for (; started < tasks_.size(); ++started) {
      const size_t i = started;
      StreamTask* t = tasks_[i].get();
      const int cpu = cpus[i];
      try {
        threads_.emplace_back([this, t, i, cpu] {
          RunThreadEntry(
              "task thread",
              [&] {
                PinTaskThread(i, *t, cpu);
                t->Run();
              },
              [t](const std::string& cause) { t->FailFromOutside(cause); });
          // OnTaskEnded must run once whatever happened above, or the job never ends.
          RunThreadEntry(
              "task thread",
              [&] {
                {
                  MutexLock l(mu_);
                  task_finished_[i] = !t->failed() && !t->cancelled();
                }
                OnTaskEnded(*t);
              },
              [this](const std::string& cause) { FailDriver(cause); });
        });
      } catch (const std::system_error& e) {
        // Out of threads or memory for stacks: the job fails like a failing task (the started
        // ones are cancelled below and end it), instead of the exception leaving a job whose
        // running-task count can never reach zero, or aborting `tidemark run`.
        failure_ =
            fmt::format("cannot start the thread of task {}#{} ({} of {} task threads started): {}",
                        t->name(), t->subtask_index(), started, tasks_.size(), e.what());
        if (const std::optional<uint64_t> limit = AddressSpaceLimitBytes()) {
          // Every thread's stack counts against RLIMIT_AS: the usual cause of EAGAIN here.
          failure_ += fmt::format(
              " (each task thread's stack counts against the process's address-space limit of "
              "{} MiB: RLIMIT_AS, tidemarkd --worker-memory-limit or ulimit -v)",
              *limit / (uint64_t{1024} * 1024));
        }
        tasks_running_ = started;
        if (started == 0) {
          EndJobLocked(JobState::kFailed);
        }
        break;
      }
    }
  }
  if (started < tasks_.size()) {
    for (size_t i = 0; i < started; ++i) {
      tasks_[i]->Cancel();
    }
    return false;
  }
  if (coordinator_) {
    master_mailbox_.Put(Mail{[this] { coordinator_->Start(); }, "start checkpoints"});
  }
  return true;
}

void JobExecution::RunMaster() {
  while (!master_stop_.load(std::memory_order_acquire)) {
    if (!RunMasterMails()) {
      master_wakeup_.WaitFor(std::chrono::milliseconds(100));
    }
  }
  FailPendingSavepoints("the job ended before the savepoint completed");
}

bool JobExecution::RunMasterMails() {
  bool any = false;
  while (auto mail = master_mailbox_.TryTake()) {
    any = true;
    try {
      mail->action();
    } catch (const std::exception& e) {
      FailJob(fmt::format("job master: {}", FailureCause(e)));
    }
  }
  if (master_virtual_pts_ != nullptr && master_virtual_pts_->FireDueTimers()) {
    any = true;
  }
  return any;
}

void JobExecution::FailJob(const std::string& reason) {
  {
    MutexLock lock(mu_);
    if (state_ != JobState::kRunning) {
      return;
    }
    if (failure_.empty()) {
      failure_ = reason;
    }
  }
  for (auto& t : tasks_) {
    t->Cancel();
  }
}

void JobExecution::FailDriver(const std::string& cause) {
  // The thread that moves the job on (the driver, or a task thread ending its task) failed:
  // nothing else would end the job, so it ends here, FAILED, with the cause.
  {
    MutexLock lock(mu_);
    if (failure_.empty()) {
      failure_ = fmt::format("job runtime: {}", cause);
    }
    if (state_ == JobState::kRunning) {
      EndJobLocked(JobState::kFailed);
    }
  }
  for (auto& t : tasks_) {
    t->Cancel();
  }
}

void JobExecution::EndJobLocked(JobState state) {
  state_ = state;
  restart_pending_ = false;
  master_stop_.store(true, std::memory_order_release);
  master_wakeup_.Signal();
  ended_cv_.NotifyAll();
}

void JobExecution::Restart() {
  // Every task of the failed attempt has ended (their threads are done). Under the virtual
  // clock this runs on the driver thread, the only one.
  if (!virtual_clock_) {
    for (auto& th : threads_) {
      if (th.joinable()) {
        th.join();
      }
    }
    threads_.clear();
  }
  {
    MutexLock lock(mu_);
    if (cancel_requested_) {
      EndJobLocked(JobState::kCanceled);
      return;
    }
  }
  if (coordinator_) {
    coordinator_->Stop();
    coordinator_->Reset("the job restarts");
    // A savepoint in flight (a drain among them) belonged to the failed attempt.
    FailPendingSavepoints("the job failed and restarts before the savepoint completed");
    // This run's own checkpoints only: what an earlier run left in the directory is not this
    // run's state (its input, data or output may since have changed). Without one of its own the
    // restart starts where the run started: the checkpoint it was restored from, or the start.
    std::vector<std::string> skipped;
    if (std::optional<CompletedCheckpoint> latest =
            storage_->LoadLatest(&skipped, /*load_states=*/true, first_own_checkpoint_id_)) {
      restored_ = std::make_shared<const CompletedCheckpoint>(*std::move(latest));
    }
  }
  std::string cause;
  {
    MutexLock lock(mu_);
    for (auto& t : tasks_) {
      retired_tasks_.push_back(std::move(t));
    }
    for (auto& c : channels_) {
      retired_channels_.push_back(std::move(c));
    }
    tasks_.clear();
    channels_.clear();
    channel_tasks_.clear();
    retired_source_coordinators_.push_back(std::move(source_coordinator_));
    source_coordinator_ = std::make_unique<SourceCoordinator>();
    cause = failure_;
  }
  GetLogger("job")->warn(
      "job {} restarts ({}) from {}: {}", graph_.name, restarts() + 1,
      restored_ ? fmt::format("checkpoint {}", restored_->id) : std::string("the start"), cause);
  bool cancel = false;
  {
    // Under mu_: Metrics and Cancel see either no tasks or all of the new attempt's.
    MutexLock lock(mu_);
    BuildTasks();
    EnableTaskCheckpoints();
    for (auto& t : tasks_) {
      if (trace_ != nullptr) {
        t->SetTrace(trace_);
      }
      if (watermark_snapshots_) {
        t->EnableWatermarkSnapshot();
      }
    }
    failure_.clear();
    failure_recoverable_ = true;
    restart_pending_ = false;
    ++restarts_;
    tasks_running_ = tasks_.size();
    cancel = cancel_requested_;  // cancelled while rebuilding: the new attempt ends at once
  }
  if (!virtual_clock_) {
    StartTaskThreads();
  }
  if (cancel) {
    for (auto& t : tasks_) {
      t->Cancel();
    }
  }
}

void JobExecution::EndTask(size_t i) {
  StreamTask& t = *tasks_[i];
  t.End();
  {
    MutexLock l(mu_);
    task_finished_[i] = !t.failed() && !t.cancelled();
  }
  OnTaskEnded(t);
}

void JobExecution::RunVirtualClock() {
  // A discrete-event run: every task's turns on this thread, round robin in a fixed order (the
  // tasks' build order: the sources first, source by source in job order, each subtask 0 first,
  // then the other tasks in topological order), so which elements sit in which channel at every
  // step, and so every operator's input order, is a function of the job alone. Processing time
  // moves only when every live task had a turn without progress since anything last changed
  // (inputs drained, no runnable mail or timer, sources waiting for their next arrival), and then
  // jumps to the earliest pending timer of the whole job. At every new instant the round starts
  // again at the first task, and each task reads its channels from the first one again
  // (design.md: "at one instant of the virtual clock tasks act in a fixed order"), so which
  // source subtask emits first at an instant, and which of their elements a downstream task
  // takes first, does not depend on where the previous instant's round stopped: a case written
  // from the rules predicts it. The job master's mails (the checkpoint coordinator) run before
  // each turn; its timers count as events once a task has one.
  while (true) {
    std::vector<size_t> live;
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (tasks_[i]->Begin()) {
        live.push_back(i);
      } else {
        EndTask(i);
      }
    }
    if (coordinator_ && !live.empty()) {
      coordinator_->Start();
    }
    size_t quiet_turns = 0;  // consecutive turns without progress
    size_t k = 0;            // position in `live` of the task whose turn is next
    while (!live.empty()) {
      if (RunMasterMails()) {
        quiet_turns = 0;
      }
      if (k >= live.size()) {
        k = 0;
      }
      const size_t i = live[k];
      const StreamTask::TurnResult r = tasks_[i]->Turn();
      if (r.ended) {
        EndTask(i);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
        quiet_turns = 0;
        continue;
      }
      ++k;
      quiet_turns = r.progressed ? 0 : quiet_turns + 1;
      if (quiet_turns < live.size()) {
        continue;
      }
      quiet_turns = 0;
      if (master_mailbox_.HasMail()) {
        continue;
      }
      Timestamp next = kMaxTimestamp;
      for (size_t j : live) {
        next = std::min(next, tasks_[j]->NextTimerTime());
      }
      if (next == kMaxTimestamp) {
        // Nothing can ever happen again: no input in flight, no mail, no timer. Under the system
        // clock this job would wait for ever; here it fails with the reason instead.
        {
          MutexLock lock(mu_);
          if (failure_.empty()) {
            std::string waiting;
            for (size_t j : live) {
              waiting += (waiting.empty() ? "" : ", ") +
                         fmt::format("{}#{}", tasks_[j]->name(), tasks_[j]->subtask_index());
            }
            failure_ = fmt::format(
                "virtual clock stuck at {} ms: tasks {} wait for input, but no task has input, "
                "mail or a processing-time timer left",
                virtual_clock_->Now(), waiting);
          }
        }
        for (size_t j : live) {
          tasks_[j]->Cancel();
        }
        continue;
      }
      if (master_virtual_pts_ != nullptr) {
        next = std::min(next, master_virtual_pts_->NextTimerTime());
      }
      virtual_clock_->AdvanceTo(next);
      // A new instant: the fixed order starts again at the first task, and every task reads
      // its channels from the first one again.
      k = 0;
      for (size_t j : live) {
        tasks_[j]->StartInstant();
      }
    }
    int64_t backoff = 0;
    {
      MutexLock lock(mu_);
      if (!restart_pending_) {
        break;
      }
      backoff = restart_backoff_ms_;
    }
    if (coordinator_) {
      coordinator_->Stop();
    }
    RunMasterMails();
    // The restart's backoff passes on the job's clock.
    virtual_clock_->AdvanceTo(virtual_clock_->Now() + backoff);
    Restart();
    if (state() != JobState::kRunning) {
      break;
    }
  }
  if (coordinator_) {
    FailPendingSavepoints("the job ended before the savepoint completed");
  }
}

void JobExecution::OnTaskEnded(StreamTask& task) {
  bool cancel_others = false;
  bool restart = false;
  {
    MutexLock lock(mu_);
    if (task.failed() && failure_.empty()) {
      failure_ = fmt::format("task {}#{}: {}", task.name(), task.subtask_index(), task.failure());
      failure_recoverable_ = task.failure_recoverable();
      cancel_others = true;
    }
    if (--tasks_running_ == 0) {
      if (!failure_.empty() && !failure_recoverable_ && restart_strategy_) {
        // Flink's NonRecoverableError: the restart strategy is not asked.
        GetLogger("job")->error("job {} fails without a restart (no restart can cure it): {}",
                                graph_.name, failure_);
      }
      if (!failure_.empty() && failure_recoverable_ && !cancel_requested_ &&
          !stop_with_savepoint_ && restart_strategy_) {
        restart_strategy_->NotifyFailure(failure_);
        if (restart_strategy_->CanRestart()) {
          if (restart_causes_.size() >= 10) {
            restart_causes_.erase(restart_causes_.begin());
          }
          restart_causes_.push_back(failure_);
          restart_pending_ = true;
          restart_backoff_ms_ = restart_strategy_->GetBackoffTimeMs();
          restart = true;
        }
      }
      if (!restart) {
        if (!failure_.empty()) {
          EndJobLocked(JobState::kFailed);
        } else if (cancel_requested_ && !stop_with_savepoint_) {
          EndJobLocked(JobState::kCanceled);
        } else {
          EndJobLocked(JobState::kFinished);
        }
      }
    }
  }
  if (cancel_others) {
    for (auto& t : tasks_) {
      t->Cancel();
    }
  }
  if (restart && !virtual_clock_) {
    // On the job master: join the attempt's threads, wait the backoff on its clock, rebuild.
    master_mailbox_.Put(Mail{[this] {
                               int64_t backoff = 0;
                               {
                                 MutexLock lock(mu_);
                                 backoff = restart_backoff_ms_;
                               }
                               if (coordinator_) {
                                 coordinator_->Stop();
                               }
                               master_pts_->RegisterTimer(
                                   SaturatingAdd(master_pts_->GetCurrentProcessingTime(), backoff),
                                   [this](Timestamp) { Restart(); });
                             },
                             "restart"});
  }
}

JobState JobExecution::Wait() {
  {
    MutexLock lock(mu_);
    while (state_ == JobState::kRunning) {
      ended_cv_.Wait(mu_);
    }
    if (joined_) {
      return state_;
    }
    joined_ = true;
  }
  for (auto& th : threads_) {
    if (th.joinable()) {
      th.join();
    }
  }
  if (master_thread_.joinable()) {
    master_thread_.join();
  }
  if (timer_thread_) {
    timer_thread_->Stop();
  }
  return state();
}

bool JobExecution::WaitFor(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(mu_);
  while (state_ == JobState::kRunning) {
    if (!ended_cv_.WaitUntil(mu_, deadline)) {
      return state_ != JobState::kRunning;
    }
  }
  return true;
}

void JobExecution::Cancel() {
  {
    MutexLock lock(mu_);
    if (state_ != JobState::kRunning) {
      return;
    }
    cancel_requested_ = true;
    if (restart_pending_) {
      // Waiting for the restart's backoff: nothing runs; the job master ends the job (unless
      // it is rebuilding right now: then the new attempt sees the flag and is cancelled).
      master_mailbox_.Put(Mail{[this] {
                                 MutexLock l(mu_);
                                 if (state_ == JobState::kRunning && restart_pending_) {
                                   EndJobLocked(JobState::kCanceled);
                                 }
                               },
                               "cancel during restart"});
      return;
    }
    for (auto& t : tasks_) {
      t->Cancel();
    }
  }
}

void JobExecution::EnableWatermarkSnapshots() {
  watermark_snapshots_ = true;
  for (auto& t : tasks_) {
    t->EnableWatermarkSnapshot();
  }
}

std::vector<TaskWatermarkSnapshot> JobExecution::WatermarkSnapshots() const {
  std::vector<TaskWatermarkSnapshot> out;
  for (const auto& t : tasks_) {
    out.push_back(t->watermark_snapshot());
  }
  return out;
}

std::vector<TaskWatermarkSnapshot> JobExecution::LiveWatermarkSnapshots(
    std::chrono::milliseconds timeout) const {
  // Shared with the tasks' mails: one that answers after the timeout writes into it harmlessly.
  struct Answers {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<TaskWatermarkSnapshot> snapshots;
    size_t pending = 0;
  };
  auto answers = std::make_shared<Answers>();
  {
    MutexLock lock(mu_);
    answers->snapshots.resize(tasks_.size());
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (task_finished_[i]) {
        answers->snapshots[i] = tasks_[i]->watermark_snapshot();
        continue;
      }
      {
        std::lock_guard<std::mutex> l(answers->mu);
        ++answers->pending;
      }
      const bool asked =
          tasks_[i]->RequestLiveWatermarkSnapshot([answers, i](TaskWatermarkSnapshot s) {
            std::lock_guard<std::mutex> l(answers->mu);
            answers->snapshots[i] = std::move(s);
            --answers->pending;
            answers->cv.notify_all();
          });
      if (!asked) {  // it ended meanwhile: its end-of-input snapshot, if any
        std::lock_guard<std::mutex> l(answers->mu);
        --answers->pending;
        answers->snapshots[i] = tasks_[i]->watermark_snapshot();
      }
    }
  }
  std::unique_lock<std::mutex> l(answers->mu);
  answers->cv.wait_for(l, timeout, [&] { return answers->pending == 0; });
  return answers->snapshots;
}

void JobExecution::SetTrace(WatermarkTrace* trace) {
  trace_ = trace;
  for (auto& t : tasks_) {
    t->SetTrace(trace);
  }
}

CheckpointCoordinator::Stats JobExecution::checkpoint_stats() const {
  return coordinator_ ? coordinator_->stats() : CheckpointCoordinator::Stats{};
}

std::vector<int64_t> JobExecution::checkpoint_alignment_history_ns() const {
  return coordinator_ ? coordinator_->alignment_history_ns() : std::vector<int64_t>{};
}

int64_t JobExecution::restarts() const {
  MutexLock lock(mu_);
  return restarts_;
}

std::vector<std::string> JobExecution::restart_causes() const {
  MutexLock lock(mu_);
  return restart_causes_;
}

std::filesystem::path JobExecution::checkpoint_directory() const {
  return checkpoint_dir_;
}

void JobExecution::TriggerSavepoint(std::filesystem::path dir, bool stop, bool drain,
                                    std::function<void(const SavepointOutcome&)> done) {
  if (drain && !stop) {
    if (done) {
      done(SavepointOutcome{false, 0, {}, "drain needs stop (stop-with-savepoint --drain)"});
    }
    return;
  }
  if (!coordinator_ || state() != JobState::kRunning) {
    if (done) {
      done(SavepointOutcome{false,
                            0,
                            {},
                            !coordinator_ ? "the job does not checkpoint (no checkpointing: block)"
                                          : "the job is not running"});
    }
    return;
  }
  if (std::optional<std::string> why = CheckpointStorage::CheckSavepointTarget(dir)) {
    if (done) {
      done(SavepointOutcome{false, 0, {}, *why});  // before it starts: never a failed checkpoint
    }
    return;
  }
  master_mailbox_.Put(Mail{
      [this, dir = std::move(dir), stop, drain, done = std::move(done)]() mutable {
        if (coordinator_->draining()) {
          if (done) {
            done(SavepointOutcome{false, 0, {}, "the job is draining for a stop with savepoint"});
          }
          return;
        }
        if (drain) {
          BeginDrain(dir, std::move(done));
          return;
        }
        const int64_t id = coordinator_->NextCheckpointIdFor("");
        const std::filesystem::path path = dir / fmt::format("savepoint-{}", id);
        storage_->SetSavepointDirectory(id, path);
        savepoints_[id] = PendingSavepoint{path, stop, done};
        std::optional<int64_t> got = coordinator_->TriggerCheckpoint(SnapshotType::kSavepoint);
        if (!got || *got != id) {
          savepoints_.erase(id);
          if (done) {
            done(SavepointOutcome{false, 0, {}, "the savepoint could not be triggered"});
          }
        }
      },
      "trigger savepoint"});
}

void JobExecution::BeginDrain(const std::filesystem::path& dir,
                              std::function<void(const SavepointOutcome&)> done) {
  // Flink's stop-with-savepoint --drain: the sources stop and end their input (MAX_WATERMARK,
  // then end of input), every window and timer fires on the way down, every task finishes, and
  // the checkpoint after all tasks finished is the savepoint; the job then ends FINISHED.
  coordinator_->BeginDrain();
  const int64_t id = coordinator_->NextCheckpointIdFor("");
  const std::filesystem::path path = dir / fmt::format("savepoint-{}", id);
  storage_->SetSavepointDirectory(id, path);
  savepoints_[id] = PendingSavepoint{path, /*stop=*/false, std::move(done)};
  for (auto& t : tasks_) {
    t->Drain();
  }
}

void JobExecution::FailPendingSavepoints(const std::string& reason) {
  std::map<int64_t, PendingSavepoint> pending;
  pending.swap(savepoints_);
  for (auto& [id, sp] : pending) {
    if (sp.done) {
      sp.done(SavepointOutcome{false, id, {}, reason});
    }
  }
}

JobState JobExecution::state() const {
  MutexLock lock(mu_);
  return state_;
}

std::string JobExecution::failure_cause() const {
  MutexLock lock(mu_);
  return failure_;
}

std::vector<SubtaskMetrics> JobExecution::Metrics() const {
  std::vector<SubtaskMetrics> out;
  MutexLock lock(mu_);
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const StreamTask& t = *tasks_[i];
    SubtaskMetrics m{
        t.name(), t.subtask_index(), t.records_in(), kMinTimestamp, task_finished_[i], {}, {}};
    std::vector<MetricsWriter::Gauges> gauges = t.PublishedGauges();
    std::vector<MetricsWriter::Notes> notes = t.PublishedNotes();
    for (size_t o = 0; o < t.num_operators(); ++o) {
      m.operators.push_back(
          OperatorMetrics{t.operator_name(o), t.operator_output(o).records_out(),
                          t.operator_output(o).output_watermark(),
                          o < gauges.size() ? std::move(gauges[o]) : MetricsWriter::Gauges{},
                          o < notes.size() ? std::move(notes[o]) : MetricsWriter::Notes{},
                          t.operator_output(o).side_records_out()});
    }
    // After the outputs: the input watermark only grows, and the task publishes it before its
    // operators see it, so no operator shows an output ahead of this input.
    m.input_watermark = t.input_watermark();
    m.task_gauges = t.PublishedTaskGauges();
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<std::string> JobExecution::TaskNames() const {
  std::vector<std::string> out;
  for (const auto& t : tasks_) {
    out.push_back(fmt::format("{}#{}", t->name(), t->subtask_index()));
  }
  return out;
}

}  // namespace tidemark

#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/checkpoint/checkpoint_coordinator.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/checkpoint/restart_backoff_time_strategy.h"
#include "runtime/core/mutex.h"
#include "runtime/eventtime/relative_clock.h"
#include "runtime/eventtime/source_coordinator.h"
#include "runtime/graph/job_graph.h"
#include "runtime/io/channel.h"
#include "runtime/task/fault_injecting_operator.h"
#include "runtime/task/stream_task.h"
#include "runtime/time/timer_thread.h"
#include "runtime/time/virtual_clock.h"

namespace tidemark {

/// Job lifecycle, as in Flink's JobStatus (the subset a single node needs).
enum class JobState { kCreated, kRunning, kFinished, kFailed, kCanceled };
const char* ToString(JobState s);

/// Per-operator figures inside one subtask (one entry per chained operator, in chain order).
struct OperatorMetrics {
  std::string name;  ///< operator id, e.g. "windows"
  int64_t records_out = 0;
  Timestamp output_watermark = kMinTimestamp;  ///< last watermark it emitted; kMinTimestamp: none
  /// The operator's own figures (`StreamOperator::CollectMetrics`), e.g. numLateRecordsDropped,
  /// split.<id>.watermark; published every ~200 ms while running and at the end.
  MetricsWriter::Gauges gauges;
  /// The operator's notes (MetricsWriter::Note), e.g. firstInputError; published with `gauges`.
  MetricsWriter::Notes notes;
  /// Records emitted on each consumed side output, (tag, count) (e.g. ("late", 197)): with
  /// `records_out` what the chained operators after this one received.
  std::vector<std::pair<std::string, int64_t>> side_records_out;
};

/// Per-subtask figures for status and metrics. Snapshot values; reading is thread-safe.
struct SubtaskMetrics {
  std::string task;  ///< chain name, e.g. "source -> assign"
  int subtask_index = 0;
  int64_t records_in = 0;
  /// Minimum watermark the task's input valves emitted (kMinTimestamp: none, or a source task).
  Timestamp input_watermark = kMinTimestamp;
  bool finished = false;
  std::vector<OperatorMetrics> operators;
  /// The task's own figures (StreamTask::PublishedTaskGauges): busyTimeMsPerSecond,
  /// idleTimeMsPerSecond, backPressuredTimeMsPerSecond, numRecordsInPerSecond.
  MetricsWriter::Gauges task_gauges;
};

/// Checkpoint and restore settings of one execution, beyond the graph's `checkpointing:` block.
struct JobCheckpointOptions {
  /// Where checkpoints go; empty: the block's `dir`; both empty: a temporary directory removed
  /// with the execution (Flink's JobManagerCheckpointStorage: checkpoints that die with the job,
  /// still used by restarts).
  std::filesystem::path checkpoint_dir;
  /// The checkpoint or savepoint the first attempt restores from (null: a fresh start). Its
  /// operator ids must already be checked against the graph (LocalJob does).
  std::shared_ptr<const CompletedCheckpoint> restored;
};

/// The outcome of `JobExecution::TriggerSavepoint`, handed to its callback on the job's
/// checkpoint thread.
struct SavepointOutcome {
  bool ok = false;
  int64_t id = 0;
  std::filesystem::path path;  ///< when ok
  std::string error;           ///< when not ok
};

/// The running form of a JobGraph (Flink's ExecutionGraph): one StreamTask per (chain, subtask),
/// one SPSC Channel per (upstream subtask, downstream subtask) pair of every non-chained edge,
/// a TimerThread (system clock) or a VirtualClock (`pipeline.clock: virtual`). Under the system
/// clock every task has its own thread; under the virtual clock one driver thread steps every
/// task in a fixed order and moves the clock when all are quiescent (a discrete-event run: the
/// output is a function of the job alone).
///
/// Lifecycle: CREATED (constructed) -> RUNNING (`Start`) -> FINISHED when every task reached end
/// of input | FAILED when any task failed (the others are cancelled; the first cause is kept) |
/// CANCELED after `Cancel`. Every task thread is joined before `Wait` returns.
/// Thread-safe: `Start` once, then `Wait`, `Cancel`, `state`, `failure_cause`, `Metrics` from any
/// thread. The JobResources passed to the compiler must outlive this object.
///
/// Checkpoints (the graph has `checkpointing:`): one CheckpointCoordinator per job, on the job's
/// own mailbox ("job master": a thread under the system clock; under the virtual clock the
/// driver runs its mails and timers, so trigger times are virtual-time events and a run is
/// deterministic). Every task takes part; source tasks get the triggers; a task that reached
/// end of input hands the coordinator its final state and ends once a checkpoint holding it
/// completed. Restarts (`restart-strategy:`): when a task fails, every task is cancelled and,
/// if the strategy allows, after its backoff (on the job's clock) tasks and channels are built
/// again and restored from the latest completed checkpoint (or the initial restore); the state
/// stays RUNNING meanwhile, FAILED (first cause of the last attempt kept) when the strategy
/// says no more.
class JobExecution {
 public:
  explicit JobExecution(JobGraph graph, JobCheckpointOptions options = {});
  ~JobExecution();
  JobExecution(const JobExecution&) = delete;
  JobExecution& operator=(const JobExecution&) = delete;

  /// Starts one thread per task. Never throws: when a thread cannot be created the job ends
  /// FAILED with that cause (the tasks already started are cancelled).
  void Start();
  /// Blocks until every task thread ended; returns the final state.
  JobState Wait();
  /// Waits at most `timeout`; returns true when the job has ended.
  bool WaitFor(std::chrono::milliseconds timeout);
  /// Asks every task to stop; the job ends CANCELED unless it already ended.
  void Cancel();
  /// Records the job's event-time flow into `trace` (borrowed; must outlive this object). Call
  /// before `Start`.
  void SetTrace(WatermarkTrace* trace);
  /// Every task keeps a `TaskWatermarkSnapshot` from just before end of input reached it (for
  /// `tidemark run --explain`). Call before `Start`; read `WatermarkSnapshots` after `Wait`.
  void EnableWatermarkSnapshots();
  std::vector<TaskWatermarkSnapshot> WatermarkSnapshots() const;
  /// While the job runs (`tidemark explain` of a running job): every running task's snapshot of
  /// where its event time stands now (`live`), taken on the task's thread; a task that already
  /// ended gives its end-of-input snapshot. Waits at most `timeout` for the tasks' answers; a task
  /// that did not answer by then (busy with a long firing, restarting) gives one with `taken`
  /// false. Any thread; blocks the caller up to `timeout`.
  std::vector<TaskWatermarkSnapshot> LiveWatermarkSnapshots(
      std::chrono::milliseconds timeout) const;

  JobState state() const;
  std::string failure_cause() const;
  const JobGraph& graph() const { return graph_; }
  std::vector<SubtaskMetrics> Metrics() const;
  /// Names of the tasks (chains), e.g. "source -> assign#0".
  std::vector<std::string> TaskNames() const;
  /// The watermark-alignment coordinator (sources whose strategy sets `alignment` register with
  /// it; their announcements reach each subtask as a Mail). Thread-safe; lives as long as this.
  const SourceCoordinator& source_coordinator() const { return *source_coordinator_; }

  /// Whether the job takes checkpoints (its graph has `checkpointing:`).
  bool checkpointing() const { return coordinator_ != nullptr; }
  /// The coordinator's figures (all zero without checkpointing). Thread-safe.
  CheckpointCoordinator::Stats checkpoint_stats() const;
  /// The longest alignment of any task per completed checkpoint, ns, oldest first (empty
  /// without checkpointing). Thread-safe.
  std::vector<int64_t> checkpoint_alignment_history_ns() const;
  /// Restarts under the restart strategy so far. Thread-safe.
  int64_t restarts() const;
  /// The failure cause of each attempt that was restarted, oldest first, the last 10 (Flink's
  /// exception history). Thread-safe.
  std::vector<std::string> restart_causes() const;
  /// Where completed checkpoints are (empty without checkpointing).
  std::filesystem::path checkpoint_directory() const;
  /// Takes a savepoint into `dir/savepoint-<id>` (Flink's `triggerSavepoint`). With `stop`, the
  /// tasks stop right after the savepoint completed (no window fires for it) and the job ends
  /// FINISHED. With `stop` and `drain` (Flink's stop-with-savepoint --drain): the sources stop
  /// reading and end their input, so MAX_WATERMARK goes out (even past idle splits) and every
  /// window and event-time timer fires; once every task finished, the final checkpoint is the
  /// savepoint (its state: source positions, whatever state remains after the windows fired),
  /// and the job ends FINISHED. `drain` without `stop` is refused; a savepoint asked for while
  /// draining too. `done` runs once, on the job's checkpoint thread (or inline when refused):
  /// failed when the job ends or restarts before the savepoint completed. Thread-safe.
  void TriggerSavepoint(std::filesystem::path dir, bool stop, bool drain,
                        std::function<void(const SavepointOutcome&)> done);
  /// Runs `listener(id)` on the job's checkpoint thread each time checkpoint `id` completed,
  /// after every task was told (tests cancel or fail a job at an exact checkpoint with it).
  /// Call before `Start`.
  /// `pipeline.cpu-affinity: auto`: per task (TaskNames' order) of the current attempt, the CPU
  /// its thread is pinned to, read back on that thread with pthread_getaffinity_np after pinning;
  /// -1 for a task not pinned (`none`, one allowed CPU, the pin failed, or not started yet). The
  /// virtual clock's single driver thread is never pinned. Thread-safe.
  std::vector<int> PinnedCpus() const;

  void SetCheckpointCompleteListener(std::function<void(int64_t id)> listener) {
    checkpoint_listener_ = std::move(listener);
  }

 private:
  void Build();
  /// Builds tasks_ and channels_ from graph_ (again after a restart). Under mu_, so Metrics and
  /// Cancel see either no tasks or all of an attempt's.
  void BuildTasks() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Hooks the tasks into the coordinator (checkpointing jobs) and hands them the checkpoint or
  /// savepoint to restore from; a job that does not checkpoint is restored all the same.
  void EnableTaskCheckpoints();
  /// Runs the job master's mails (and, under the virtual clock, its due timers). True if any ran.
  bool RunMasterMails();
  /// The job master thread under the system clock.
  void RunMaster();
  /// Job master thread: stop-with-savepoint --drain into `dir`.
  void BeginDrain(const std::filesystem::path& dir,
                  std::function<void(const SavepointOutcome&)> done);
  /// Job master thread: every savepoint still pending fails with `reason`.
  void FailPendingSavepoints(const std::string& reason);
  /// Every task ended after a failure the strategy allows a restart for: rebuilds and restores.
  /// Job master thread (or the virtual driver). Under the system clock also starts the threads.
  void Restart();
  /// Under mu_: the job reached its final state.
  void EndJobLocked(JobState state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool StartTaskThreads();
  /// Under mu_: the CPU per task `pipeline.cpu-affinity` asks for (-1: not pinned).
  std::vector<int> TaskCpus() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Under mu_, before the task threads start: tells each task whose channel consumer is placed
  /// on its own CPU (`cpus`, from TaskCpus) so (StreamTask::SetSharesCpuWithConsumer).
  void MarkTasksSharingCpuWithConsumer(const std::vector<int>& cpus)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// On task `i`'s thread, before it runs: pins it to `cpu` (>= 0); a failure is logged once per
  /// job and the task runs unpinned.
  void PinTaskThread(size_t i, const StreamTask& task, int cpu);
  void FailJob(const std::string& reason);
  /// A runtime thread that moves the job on (the virtual clock's driver, or a task thread
  /// ending its task) failed: ends the job FAILED with `cause`, cancelling the tasks.
  void FailDriver(const std::string& cause);
  /// Registers `task`'s head with the SourceCoordinator if it is a source with alignment.
  void ConnectAlignment(StreamTask& task);
  void OnTaskEnded(StreamTask& task);
  /// Ends tasks_[i] (final figures, close) and accounts for it.
  void EndTask(size_t i);
  /// The thread body under the virtual clock: steps every task until all ended.
  void RunVirtualClock();

  JobGraph graph_;
  JobCheckpointOptions options_;
  std::unique_ptr<TimerThread> timer_thread_;
  std::unique_ptr<VirtualClock> virtual_clock_;
  // The job master: its mailbox, clock and the checkpoint coordinator on it.
  Wakeup master_wakeup_;
  TaskMailbox master_mailbox_{&master_wakeup_};
  std::unique_ptr<ProcessingTimeService> master_pts_;
  VirtualProcessingTimeService* master_virtual_pts_ = nullptr;
  std::unique_ptr<ProcessingTimeRelativeClock> restart_clock_;
  std::unique_ptr<RestartBackoffTimeStrategy> restart_strategy_;
  std::filesystem::path checkpoint_dir_;
  bool remove_checkpoint_dir_ = false;
  std::unique_ptr<CheckpointStorage> storage_;
  std::unique_ptr<CheckpointCoordinator> coordinator_;
  std::shared_ptr<const CompletedCheckpoint> restored_;
  /// The first checkpoint id this run assigns: a restart restores only checkpoints from here on
  /// (this run's own), never one an earlier run of the job left in the same directory.
  int64_t first_own_checkpoint_id_ = 1;
  std::thread master_thread_;
  std::atomic<bool> master_stop_{false};
  WatermarkTrace* trace_ = nullptr;
  std::function<void(int64_t)> checkpoint_listener_;
  std::vector<std::shared_ptr<FaultBudget>> fault_budgets_;  // one per `faults:` entry
  bool watermark_snapshots_ = false;
  // Tasks and channels of earlier attempts: kept until the end, since timers of the system clock
  // may still name their mailboxes.
  std::vector<std::unique_ptr<StreamTask>> retired_tasks_;
  std::vector<std::unique_ptr<Channel>> retired_channels_;
  std::vector<std::unique_ptr<SourceCoordinator>> retired_source_coordinators_;
  bool restart_pending_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_with_savepoint_ ABSL_GUARDED_BY(mu_) = false;  // a stop-with-savepoint ends FINISHED
  int64_t restart_backoff_ms_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t restarts_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> restart_causes_ ABSL_GUARDED_BY(mu_);
  // Savepoints in flight: id -> (stop, done).
  struct PendingSavepoint {
    std::filesystem::path path;
    bool stop = false;
    std::function<void(const SavepointOutcome&)> done;
  };
  std::map<int64_t, PendingSavepoint> savepoints_;  // job master thread only
  // Declared before the tasks, so it outlives them (their mails and timers refer to it).
  std::unique_ptr<SourceCoordinator> source_coordinator_ = std::make_unique<SourceCoordinator>();
  std::vector<std::unique_ptr<Channel>> channels_;
  /// (producer, consumer) task of each channel in channels_, in the same order.
  std::vector<std::pair<StreamTask*, StreamTask*>> channel_tasks_;
  std::vector<std::unique_ptr<StreamTask>> tasks_;
  std::vector<std::thread> threads_;

  /// PinnedCpus(); one per task of the current attempt.
  std::vector<int> pinned_cpus_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> pin_warned_{false};  ///< the pin failure was logged (once per job)

  mutable Mutex mu_;
  CondVar ended_cv_;  // state_ left kRunning
  JobState state_ ABSL_GUARDED_BY(mu_) = JobState::kCreated;
  std::string failure_ ABSL_GUARDED_BY(mu_);
  // False when failure_ came from a task whose failure no restart cures (NonRecoverableError).
  bool failure_recoverable_ ABSL_GUARDED_BY(mu_) = true;
  size_t tasks_running_ ABSL_GUARDED_BY(mu_) = 0;
  bool cancel_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool joined_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<bool> task_finished_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tidemark

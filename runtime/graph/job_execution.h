#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/eventtime/source_coordinator.h"
#include "runtime/graph/job_graph.h"
#include "runtime/io/channel.h"
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
class JobExecution {
 public:
  explicit JobExecution(JobGraph graph);
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

  JobState state() const;
  std::string failure_cause() const;
  const JobGraph& graph() const { return graph_; }
  std::vector<SubtaskMetrics> Metrics() const;
  /// Names of the tasks (chains), e.g. "source -> assign#0".
  std::vector<std::string> TaskNames() const;
  /// The watermark-alignment coordinator (sources whose strategy sets `alignment` register with
  /// it; their announcements reach each subtask as a Mail). Thread-safe; lives as long as this.
  const SourceCoordinator& source_coordinator() const { return *source_coordinator_; }

 private:
  void Build();
  /// Registers `task`'s head with the SourceCoordinator if it is a source with alignment.
  void ConnectAlignment(StreamTask& task);
  void OnTaskEnded(StreamTask& task);
  /// Ends tasks_[i] (final figures, close) and accounts for it.
  void EndTask(size_t i);
  /// The thread body under the virtual clock: steps every task until all ended.
  void RunVirtualClock();

  JobGraph graph_;
  std::unique_ptr<TimerThread> timer_thread_;
  std::unique_ptr<VirtualClock> virtual_clock_;
  // Declared before the tasks, so it outlives them (their mails and timers refer to it).
  std::unique_ptr<SourceCoordinator> source_coordinator_ = std::make_unique<SourceCoordinator>();
  std::vector<std::unique_ptr<Channel>> channels_;
  std::vector<std::unique_ptr<StreamTask>> tasks_;
  std::vector<std::thread> threads_;

  mutable std::mutex mu_;
  std::condition_variable ended_cv_;
  JobState state_ = JobState::kCreated;
  std::string failure_;
  size_t tasks_running_ = 0;
  bool cancel_requested_ = false;
  bool joined_ = false;
  std::vector<bool> task_finished_;
};

}  // namespace tidemark

#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/checkpoint/checkpoint_barrier_handler.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/core/errors.h"
#include "runtime/core/mutex.h"
#include "runtime/core/non_recoverable_error.h"
#include "runtime/core/thread_entry.h"
#include "runtime/io/channel.h"
#include "runtime/io/wakeup.h"
#include "runtime/mailbox/task_mailbox.h"
#include "runtime/task/record_writer.h"
#include "runtime/task/source_operator_base.h"
#include "runtime/task/status_watermark_valve.h"
#include "runtime/task/stream_operator.h"
#include "runtime/task/time_accounting.h"
#include "runtime/task/watermark_trace.h"
#include "runtime/time/processing_time_service.h"

namespace tidemark {

class VirtualProcessingTimeService;
class CheckpointCoordinator;

/// Where one operator inside a task sends its output: chained operators (direct calls) and
/// record writers (channels to other tasks), for the main output and each side output.
/// Watermarks and statuses go to every target, side outputs included (as in Flink).
/// Mailbox thread only.
class TaskOperatorOutput : public Output {
 public:
  struct Target {
    StreamOperator* op = nullptr;  ///< chained operator, or
    int input = 0;
    const std::string* op_name = nullptr;  ///< the chained operator's id, for failure causes
    RecordWriter* writer = nullptr;        ///< a network output
  };

  /// Set once by the owning task before it runs: the flag `StreamTask::Cancel` raises. Every
  /// 1024th record emitted checks it and throws `Cancelled`, so an operator emitting for a long
  /// time inside one call (a watermark firing many windows) still stops when cancelled.
  void SetCancelFlag(const std::atomic<bool>* cancel_requested) {
    cancel_requested_ = cancel_requested;
  }
  /// Set once by the owning task before it runs when the job is traced: each change of this
  /// operator's output watermark or status is recorded, at `pts`'s time.
  void SetTrace(TraceContext trace, ProcessingTimeService* pts) {
    trace_ = trace;
    trace_pts_ = pts;
  }

  void AddMainTarget(Target t) { main_.push_back(t); }
  void AddSideTarget(const std::string& tag, Target t);

  void Collect(StreamRecord& record) override;
  /// One cancel check, one counter update and one call per batch: a single chained target gets
  /// the batch (`ProcessBatch`), a single writer `EmitBatch`; several targets get record by record.
  void CollectBatch(RecordBatch& batch) override;
  void CollectSide(std::string_view tag, StreamRecord& record) override;
  void EmitWatermark(Watermark watermark) override;
  void EmitWatermarkStatus(WatermarkStatus status) override;

  /// Records emitted on the main output. Relaxed, any thread.
  int64_t records_out() const { return records_out_.load(std::memory_order_relaxed); }
  /// Records emitted on each side output that has a consumer, as (tag, count) in the order the
  /// side outputs were wired (records to a tag nobody reads are not counted). Any thread once the
  /// task runs (the tags are fixed before).
  std::vector<std::pair<std::string, int64_t>> side_records_out() const;
  /// The last watermark this operator emitted (kMinTimestamp: none yet). Any thread.
  Timestamp output_watermark() const { return output_watermark_.load(std::memory_order_acquire); }

 private:
  void Deliver(std::vector<Target>& targets, StreamRecord& record);
  /// Every 1024th call: throws `Cancelled` when the task was asked to cancel.
  void CheckCancelled();

  std::vector<Target> main_;
  std::vector<std::pair<std::string, std::vector<Target>>> side_;
  // Records emitted per entry of `side_` (same index); a deque keeps the atomics in place.
  std::deque<std::atomic<int64_t>> side_records_out_;
  std::atomic<int64_t> records_out_{0};  // written by the mailbox thread only; read for metrics
  std::atomic<Timestamp> output_watermark_{kMinTimestamp};
  const std::atomic<bool>* cancel_requested_ = nullptr;
  uint32_t records_since_check_ = 0;  // main and side output records, mailbox thread only
  TraceContext trace_;
  ProcessingTimeService* trace_pts_ = nullptr;
  std::optional<WatermarkStatus> traced_status_;  // the last status traced
};

/// Thrown out of an operator call inside a task: names the operator that failed and the cause.
/// `recoverable()` is false when the cause was a `NonRecoverableError`: the job then fails
/// without a restart.
class OperatorFailure : public Error {
 public:
  OperatorFailure(const std::string& op, const std::string& cause, bool recoverable = true)
      : Error("operator '" + op + "' failed: " + cause), recoverable_(recoverable) {}
  bool recoverable() const { return recoverable_; }

 private:
  bool recoverable_;
};

/// Runs one operator call: any exception but `Cancelled` becomes an `OperatorFailure` naming
/// operator `name` (one already naming its operator passes through); a `NonRecoverableError`
/// becomes a non-recoverable one; a `CheckpointUploadError` stays one (the checkpoint is
/// declined, the task runs on), its message naming the operator.
template <typename Fn>
void CallOperator(const std::string& name, Fn&& fn) {
  try {
    fn();
  } catch (const OperatorFailure&) {
    throw;
  } catch (const Cancelled&) {
    throw;
  } catch (const CheckpointUploadError& e) {
    throw CheckpointUploadError("operator '" + name + "': " + e.what());
  } catch (const NonRecoverableError& e) {
    throw OperatorFailure(name, e.what(), /*recoverable=*/false);
  } catch (const std::exception& e) {
    throw OperatorFailure(name, FailureCause(e));  // std::bad_alloc: names the memory limit
  }
}

/// One input of a task's head operator: the channels from every upstream subtask feeding that
/// input, merged by a StatusWatermarkValve.
struct TaskInput {
  /// Hands the valve's output to the head operator's input.
  class HeadOutput : public ValveOutput {
   public:
    HeadOutput(StreamOperator* head, int input) : head_(head), input_(input) {}
    void EmitWatermark(Watermark w) override {
      if (trace_) {
        trace_.trace->Record(trace_.where, trace_pts_->GetCurrentProcessingTime(),
                             "input-watermark",
                             {WatermarkTrace::Number("input", input_),
                              WatermarkTrace::Number("watermark", w.timestamp)});
      }
      // Published before the chain sees it: a reader that finds an operator's output watermark
      // (acquire) also finds the input watermark that caused it.
      last_watermark_.store(w.timestamp, std::memory_order_release);
      head_->ProcessWatermark(w, input_);
    }
    void EmitWatermarkStatus(WatermarkStatus s) override {
      if (trace_) {
        trace_.trace->Record(
            trace_.where, trace_pts_->GetCurrentProcessingTime(), "input-status",
            {WatermarkTrace::Number("input", input_), WatermarkTrace::Text("status", ToString(s))});
      }
      head_->ProcessWatermarkStatus(s, input_);
    }
    /// Records every watermark and status handed to the head (the valve emits only changes).
    void SetTrace(TraceContext trace, ProcessingTimeService* pts) {
      trace_ = trace;
      trace_pts_ = pts;
    }
    /// The valve's last output watermark (kMinTimestamp: none yet). Any thread.
    Timestamp last_watermark() const { return last_watermark_.load(std::memory_order_acquire); }

   private:
    StreamOperator* head_;
    int input_;
    std::atomic<Timestamp> last_watermark_{kMinTimestamp};
    TraceContext trace_;
    ProcessingTimeService* trace_pts_ = nullptr;
  };

  int input_index = 0;
  std::vector<Channel*> channels;
  std::unique_ptr<StatusWatermarkValve> valve;
  std::unique_ptr<HeadOutput> valve_output;
  std::vector<bool> finished;
  size_t num_finished = 0;
  std::vector<std::string> upstream;  ///< per channel: "task#subtask" (may be empty)
};

/// A task's event-time state at one moment, for `tidemark run --explain`: taken once, just before
/// end of input reaches the task (a source task: before it emits its final MAX; another task:
/// before the first end of input or MAX arrives on any of its channels), i.e. where event time
/// stood for the rest of the run. Value type.
struct TaskWatermarkSnapshot {
  struct Channel {
    std::string upstream;  ///< "task#subtask" of the upstream subtask
    Timestamp watermark = kMinTimestamp;
    bool idle = false;
    bool finished = false;
  };
  struct Input {
    int input_index = 0;
    Timestamp watermark = kMinTimestamp;  ///< the valve's output
    bool idle = false;
    std::vector<Channel> channels;
  };
  struct Operator {
    std::string name;
    Timestamp output_watermark = kMinTimestamp;
    MetricsWriter::Gauges gauges;  ///< the operator's `CollectMetrics` at that moment
  };
  bool taken = false;
  /// Taken on request while the task runs (`RequestLiveWatermarkSnapshot`), not at end of input.
  bool live = false;
  std::string task;
  int subtask = 0;
  Timestamp time = kMinTimestamp;  ///< processing time of the snapshot
  std::vector<Input> inputs;
  std::vector<Operator> operators;  ///< in chain order
};

/// One subtask: a single-threaded mailbox loop. Mirrors Flink's `StreamTask` with its
/// `MailboxProcessor`: each turn runs pending mails (timers, control), fires due virtual-clock
/// timers, then does the default action — poll the source, or take a bounded batch of elements
/// from the input channels and hand records to the operator chain and watermarks / statuses to
/// the input's StatusWatermarkValve. Under the system clock each task has its own thread and,
/// with nothing to do, sleeps on one Wakeup that mail and channel pushes signal; under the
/// virtual clock the job's driver steps every task (`Begin` / `Turn` / `End`) on one thread.
///
/// Built fully by the ExecutionGraph before `Run`; afterwards only `Cancel` may be called from
/// other threads. Owns its operators (the chain, in topological order), outputs and writers.
class StreamTask {
 public:
  StreamTask(std::string name, int subtask_index);
  ~StreamTask();

  // ---- setup (before Run, from the setup thread) ----
  Wakeup& wakeup() { return wakeup_; }
  TaskMailbox& mailbox() { return mailbox_; }
  void SetProcessingTimeService(std::unique_ptr<ProcessingTimeService> pts,
                                VirtualProcessingTimeService* virtual_pts);
  ProcessingTimeService& processing_time() { return *pts_; }
  /// Adds an operator; the first one added is the head. Returns its index in the chain.
  int AddOperator(std::unique_ptr<StreamOperator> op, std::string name);
  StreamOperator& op(int i) { return *ops_[static_cast<size_t>(i)].op; }
  const std::string& op_name(int i) const { return ops_[static_cast<size_t>(i)].name; }
  TaskOperatorOutput& output_of(int i) { return *ops_[static_cast<size_t>(i)].output; }
  RecordWriter* AddWriter(std::unique_ptr<RecordWriter> writer);
  /// `upstream` names each channel's upstream subtask ("task#subtask"), for explanations.
  TaskInput& AddInput(int input_index, std::vector<Channel*> channels,
                      std::vector<std::string> upstream = {});
  /// Takes a `TaskWatermarkSnapshot` before end of input reaches the task. Before Run.
  void EnableWatermarkSnapshot() { snapshot_enabled_ = true; }
  /// The snapshot (`taken` false: not enabled, or the task never reached end of input).
  /// Thread-safe.
  TaskWatermarkSnapshot watermark_snapshot() const;
  /// Asks the running task for a snapshot of where its event time stands now (`live` set): a
  /// Mail, so `done` runs later on the task's thread with it. False (and `done` never called) when
  /// the task's mailbox no longer takes mail (it ended). Thread-safe.
  bool RequestLiveWatermarkSnapshot(std::function<void(TaskWatermarkSnapshot)> done);
  void SetAutoWatermarkIntervalMs(int64_t ms) { auto_watermark_interval_ms_ = ms; }
  /// `pipeline.finished-input: max` (Flink): a finished input channel keeps the MAX watermark its
  /// upstream sent last, as an ordinary watermark (so it wins over idle channels), instead of
  /// leaving the minimum (design.md's default). Call before `AddInput`.
  void SetFinishedInputCountsAsMax(bool max) { finished_input_max_ = max; }
  /// `pipeline.state-backend` and its RocksDB options, handed to every operator's context.
  void SetStateBackend(std::string backend, RocksDbSpec rocksdb) {
    state_backend_ = std::move(backend);
    rocksdb_ = std::move(rocksdb);
  }
  /// Records this task's event-time flow into `trace` (borrowed; outlives the task). Before Run.
  void SetTrace(WatermarkTrace* trace) { trace_ = trace; }
  /// pipeline.max-parallelism (key groups), passed to every operator's `OperatorContext`.
  void SetMaxParallelism(int n) { max_parallelism_ = n; }
  /// Parallelism of the chain's operators (OperatorContext::parallelism); default 1.
  void SetParallelism(int parallelism) { parallelism_ = parallelism; }
  /// Before Run: `pipeline.cpu-affinity: auto` placed a task this one sends to on this task's
  /// CPU. Then, under the system clock, a turn of a task with inputs (not a source head) that has
  /// run for kYieldToConsumerAfter (50 us) with batches pushed since the thread last waited ends
  /// early: it flushes its partial batches and the thread yields its CPU (sched_yield), so the
  /// consumer those pushes woke runs now instead of when the kernel ends this task's run (its
  /// slice, checked at the next tick: up to 4 ms at HZ=250). Issue 44: on 2 CPUs with op1 and
  /// op2 -> sink on one, a burst kept op1 busy for ~1 ms while op2, woken, waited.
  void SetSharesCpuWithConsumer(bool shares) { shares_cpu_with_consumer_ = shares; }

  // ---- checkpoints (runtime/checkpoint/; all off unless EnableCheckpoints was called) ----
  /// Before Run: this task takes part in checkpoints. `mode` is the job's checkpointing.mode
  /// (aligned or not), `storage` gets its operators' state files, `coordinator` its
  /// acknowledgements (both borrowed, outlive the task); `restored` (may be null) is the
  /// checkpoint to restore from: after `Open`, every operator's `InitializeState` reads its own
  /// state from it (same operator id and subtask).
  void EnableCheckpoints(CheckpointBarrierHandler::Mode mode, CheckpointStorage* storage,
                         CheckpointCoordinator* coordinator, const CompletedCheckpoint* restored);
  /// Before Run, in a job that does not checkpoint: `restored` (may be null; borrowed, outlives
  /// the task) is the savepoint or checkpoint to restore from, read as EnableCheckpoints's.
  void SetRestored(const CompletedCheckpoint* restored) { restored_ = restored; }
  /// Before Run: `checkpointing.restore-watermarks`
  /// (StateInitializationContext::restore_watermarks).
  void SetRestoreWatermarks(bool restore) { restore_watermarks_ = restore; }
  /// Thread-safe (a mail): a source task snapshots its chain and emits `barrier` on every output
  /// before any later record (Flink's `triggerCheckpointAsync`).
  void TriggerCheckpoint(const CheckpointBarrier& barrier);
  /// Thread-safe (a mail): checkpoint `id` completed / was aborted; every operator is told, in
  /// chain order, and an aborted alignment unblocks.
  void NotifyCheckpointComplete(int64_t id);
  void NotifyCheckpointAborted(int64_t id);
  /// Thread-safe (a mail): a source task stops reading (`SourceOperatorBase::Stop(kDrain)`) and
  /// ends its input: MAX_WATERMARK, even past idle splits, then end of input (Flink's
  /// stop-with-savepoint --drain). No effect on a task whose head is not a source.
  void Drain();
  /// Under checkpoints: the task reached end of input and waits for the checkpoint that holds
  /// its final state to complete before it ends. Task thread.
  bool awaiting_final_checkpoint() const { return awaiting_final_checkpoint_; }
  /// "operator#subtask" of the head: how the coordinator names this task.
  std::string checkpoint_task_name() const {
    return ops_.front().name + "#" + std::to_string(subtask_index_);
  }

  // ---- running ----
  /// The thread body (system clock): `Begin`, then turns until the task ends, sleeping on its
  /// Wakeup when a turn found nothing to do, then `End`. Never throws: a failure is recorded
  /// (`failed()`, `failure()`). Always closes every operator.
  void Run();

  /// What one turn of the mailbox loop did.
  struct TurnResult {
    /// The turn changed something: ran a mail or timer, took input, emitted, pushed an element
    /// into a channel, or ended. False: the task is quiescent until another task gives it input
    /// or mail, or processing time reaches its next timer.
    bool progressed = false;
    /// The task reached its end (end of input handed on, or failed, or cancelled): call `End`.
    bool ended = false;
    /// Why the turn stopped (system clock: how long to wait before the next one).
    enum class Wait { kNone, kIdle, kBackpressure } wait = Wait::kNone;
  };
  /// Steps of `Run` for a driver that runs tasks itself (the virtual clock's, on one thread):
  /// `Begin` opens the operators (false: failed or cancelled; call `End`); `Turn` runs one turn
  /// without ever sleeping; `End` publishes the final figures and closes every operator.
  /// None throws. Called from one thread, the same for all three.
  bool Begin();
  TurnResult Turn();
  /// The virtual clock's driver calls it on every live task when the clock moved to a new
  /// instant: the task's next turn reads its inputs from the first channel of the first input
  /// again (then round-robin, one element per channel, as always), so the order in which it
  /// takes elements that arrived at one instant follows the fixed task order (design.md) and
  /// not where the previous instant's reading stopped.
  void StartInstant() {
    next_input_ = 0;
    next_channel_ = 0;
  }
  void End();
  /// Under the virtual clock: the time of this task's earliest pending processing-time timer
  /// (kMaxTimestamp: none), i.e. its next event. Task thread only.
  Timestamp NextTimerTime() const;
  /// Thread-safe: asks the task to stop at its next turn.
  void Cancel();
  /// The task thread's last resort (see RunThreadEntry): records `cause` as the failure when
  /// something escaped `Run` (it should not). Task thread only, after `Run`.
  void FailFromOutside(const std::string& cause);

  bool failed() const { return failed_; }
  bool cancelled() const { return cancelled_; }
  const std::string& failure() const { return failure_; }
  /// False when the failure is one no restart cures (a `NonRecoverableError`, e.g. restored state
  /// the operator cannot read): the job fails without consulting its restart strategy.
  bool failure_recoverable() const { return failure_recoverable_; }
  const std::string& name() const { return name_; }
  int subtask_index() const { return subtask_index_; }

  /// The figures last published by the task (every ~200 ms of wall time while running, and at
  /// its end): per operator in chain order, its `CollectMetrics` gauges. Thread-safe.
  std::vector<MetricsWriter::Gauges> PublishedGauges() const;
  /// The operators' notes published with those gauges (MetricsWriter::Note), per operator in
  /// chain order. Thread-safe.
  std::vector<MetricsWriter::Notes> PublishedNotes() const;
  /// The task's own figures, published with the operators' (Flink's task-level MetricNames):
  /// `busyTimeMsPerSecond`, `idleTimeMsPerSecond`, `backPressuredTimeMsPerSecond` (a turn is
  /// busy; the wait after it idle or back-pressured; summing to 1000 over a window of at least
  /// one second of the task's processing time) and `numRecordsInPerSecond`. Thread-safe.
  MetricsWriter::Gauges PublishedTaskGauges() const;
  /// The task's input watermark, live: the minimum its valves emitted (kMinTimestamp for sources
  /// or before any). Read it after the operators' output watermarks for a consistent picture
  /// (an output never ahead of its input). Thread-safe.
  Timestamp input_watermark() const;

  /// Records handed to the head operator (or emitted by a source head). Relaxed, any thread.
  int64_t records_in() const { return records_in_.load(std::memory_order_relaxed); }
  /// Number of chained operators and, per operator, its name and output figures. The chain is
  /// fixed before `Run`, so these may be read from any thread while the task runs.
  size_t num_operators() const { return ops_.size(); }
  const std::string& operator_name(size_t i) const { return ops_[i].name; }
  const TaskOperatorOutput& operator_output(size_t i) const { return *ops_[i].output; }

 private:
  struct ChainedOperator {
    std::unique_ptr<StreamOperator> op;
    std::string name;
    std::unique_ptr<TaskOperatorOutput> output;
  };

  void OpenOperators();
  /// One turn; throws what operators throw (`Turn` records it).
  TurnResult TurnOrThrow();
  /// Records a failure or cancellation thrown by a turn or by opening.
  void RecordFailure(const std::function<void()>& step);
  bool RunMails();  // true when any mail or due virtual timer ran
  int64_t ElementsPushed() const;
  [[nodiscard]] InputStatus ProcessInput();
  void HandleElement(TaskInput& in, size_t channel, std::unique_ptr<StreamElement> element);
  void EndOfInput();
  // Checkpoints (stream_task_checkpoint.cc).
  /// Snapshots every chained operator in chain order, forwards the barrier, acknowledges.
  void PerformCheckpoint(const CheckpointBarrier& barrier);
  void InitializeOperatorState();
  /// One operator's snapshot: its id, its bytes and their redistributable blocks.
  struct OperatorSnapshot {
    std::string operator_id;
    std::string bytes;
    std::vector<StateBlock> blocks;
    std::vector<SharedStateFile> shared;  ///< an incremental checkpoint's shared files
  };
  /// Every chained operator's state, in chain order, of those that wrote any.
  /// `incremental`: operators may take incremental checkpoints against this checkpoint root
  /// (`checkpointing.incremental`, a checkpoint and not a savepoint); null: canonical state.
  std::vector<OperatorSnapshot> SnapshotChain(int64_t id, int64_t timestamp_ms,
                                              const std::filesystem::path* incremental = nullptr);
  /// After end of input was handed on: gives the coordinator the chain's final state; the task
  /// then ends only once a checkpoint including it completed (Flink's FLIP-147).
  void ReportFinished();
  /// The global channel number of `channel` of `in` (for the barrier handler).
  size_t GlobalChannel(const TaskInput& in, size_t channel) const;
  bool ChannelBlocked(const TaskInput& in, size_t channel) const {
    return barrier_handler_ != nullptr && barrier_handler_->IsBlocked(GlobalChannel(in, channel));
  }
  void HandleCheckpointElement(TaskInput& in, size_t channel, const StreamElement& element);
  void FlushAll();
  bool DrainWriters();

  std::string name_;
  int subtask_index_;
  Wakeup wakeup_;
  TaskMailbox mailbox_;
  std::unique_ptr<ProcessingTimeService> pts_;
  VirtualProcessingTimeService* virtual_pts_ = nullptr;
  std::vector<ChainedOperator> ops_;
  std::vector<std::unique_ptr<RecordWriter>> writers_;
  std::vector<TaskInput> inputs_;
  int64_t auto_watermark_interval_ms_ = 200;
  bool finished_input_max_ = false;
  std::string state_backend_ = "heap";
  RocksDbSpec rocksdb_;
  bool snapshot_enabled_ = false;
  void TakeWatermarkSnapshot();                    // once; task thread
  TaskWatermarkSnapshot BuildWatermarkSnapshot();  // where event time stands now; task thread
  TaskWatermarkSnapshot snapshot_ ABSL_GUARDED_BY(metrics_mu_);
  WatermarkTrace* trace_ = nullptr;
  int max_parallelism_ = 128;
  int parallelism_ = 1;
  size_t next_input_ = 0;
  std::vector<StreamRecord*> batch_pointers_;  // HandleElement's RecordBatch over a channel batch
  // A channel batch's wire records decoded, reused batch after batch: rows this thread owns, so
  // the operators read and modify memory in this core's cache, never the producer's.
  std::vector<StreamRecord> decoded_;
  size_t next_channel_ = 0;
  SourceOperatorBase* source_ = nullptr;  // the head, when it is a source (set by Begin)
  int idle_yields_ = 0;                   // consecutive idle turns that yielded instead of sleeping
  bool ending_ = false;                   // end of input handed on; draining the writers
  // SetSharesCpuWithConsumer; the last turn ended early so that Run yields; when the thread last
  // resumed (after a wait or a yield) and how many elements it had pushed then.
  bool shares_cpu_with_consumer_ = false;
  bool yield_to_consumer_ = false;
  std::chrono::steady_clock::time_point running_since_{};
  int64_t pushed_when_resumed_ = 0;

  std::atomic<bool> cancel_requested_{false};
  bool failed_ = false;
  bool cancelled_ = false;
  std::string failure_;
  bool failure_recoverable_ = true;
  std::atomic<int64_t> records_in_{0};
  void PublishMetrics();
  /// Shares a CPU with a consumer: notes that the thread resumes now (after a wait or a yield).
  void Resumed();
  /// Shares a CPU with a consumer, system clock: batches went out since the thread resumed and
  /// it has run for kYieldToConsumerAfter since.
  bool ShouldYieldToConsumer();
  MetricsWriter::Gauges TaskGauges();  // samples the time accounting; task thread
  int64_t AccountingNow() const { return pts_ ? pts_->GetCurrentProcessingTime() : 0; }
  static constexpr size_t kBusyTime = 0, kIdleTime = 1,
                          kBackPressuredTime = 2;  // TimeAccounting states
  std::chrono::steady_clock::time_point next_publish_{};
  mutable Mutex metrics_mu_;
  // Written by the mailbox thread only.
  std::vector<MetricsWriter::Gauges> published_gauges_ ABSL_GUARDED_BY(metrics_mu_);
  std::vector<MetricsWriter::Notes> published_notes_ ABSL_GUARDED_BY(metrics_mu_);
  std::chrono::steady_clock::time_point last_flush_{};  // source tasks: last timed batch flush
  // Task time accounting (task thread; published under metrics_mu_).
  TimeAccounting time_accounting_;
  int64_t rate_window_start_ms_ = kMinTimestamp;
  int64_t rate_window_records_ = 0;
  int64_t records_in_per_second_ = 0;
  MetricsWriter::Gauges published_task_gauges_ ABSL_GUARDED_BY(metrics_mu_);

  // Checkpoints: set by EnableCheckpoints (restored_ also by SetRestored), then mailbox thread
  // only.
  bool checkpoints_enabled_ = false;
  CheckpointBarrierHandler::Mode checkpoint_mode_ = CheckpointBarrierHandler::Mode::kExactlyOnce;
  CheckpointStorage* checkpoint_storage_ = nullptr;
  CheckpointCoordinator* coordinator_ = nullptr;
  const CompletedCheckpoint* restored_ = nullptr;
  std::unique_ptr<CheckpointBarrierHandler> barrier_handler_;  // tasks with input channels
  std::vector<size_t> input_channel_offsets_;  // per input: its first global channel
  bool input_finished_ = false;                // end of input handed on: takes no part in barriers
  bool restore_watermarks_ = false;
  // Alignment of the checkpoint being aligned: its id and when its first barrier came.
  int64_t aligning_id_ = 0;
  Timestamp alignment_start_ms_ = 0;
  std::chrono::steady_clock::time_point alignment_start_{};
  bool drain_requested_ = false;  // Drain(): the source ends its input at the next turn
  bool awaiting_final_checkpoint_ = false;
  int64_t final_checkpoint_id_ = 0;  // the first checkpoint holding the final state
};

}  // namespace tidemark

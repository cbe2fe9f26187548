#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "runtime/checkpoint/checkpoint_barrier.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/core/mutex.h"
#include "runtime/time/processing_time_service.h"

namespace tidemark {

/// Runs a job's checkpoints (Flink's `CheckpointCoordinator`): every `interval` of processing
/// time it triggers checkpoint n on the source tasks (which snapshot and emit barrier n), collects
/// one acknowledgement per task (its operators' state files), and when all are in writes the
/// metadata last, by rename (`CheckpointStorage::Finalize`), then tells every task it completed.
/// A checkpoint still pending after `timeout`, or declined by a task, is aborted and every task
/// is told (their aligning inputs unblock); more than `tolerable-failed-checkpoints` consecutive
/// failures fail the job. At most `max-concurrent-checkpoints` are pending at once, and a new one
/// starts no sooner than `min-pause` after the previous one ended.
///
/// Time and threads: triggering and timeouts run on one task's `ProcessingTimeService` (timers
/// fire on that task's mailbox thread; manual or virtual clocks make it deterministic); `Start`,
/// `Stop` and `TriggerCheckpoint` on that thread. `Acknowledge` and `Decline` may be called from
/// any task thread (a mutex guards the pending checkpoints); completion, with its metadata
/// write and `notify_complete`, is posted to the pts thread (`Hooks::post`). Hooks must not
/// block (they post mails) and must not call back into the coordinator.
class CheckpointCoordinator {
 public:
  struct Hooks {
    /// Posts "trigger checkpoint `barrier`" to every source task.
    std::function<void(const CheckpointBarrier& barrier)> trigger_sources;
    /// Posts "checkpoint `id` completed" to every task (after the metadata rename).
    std::function<void(int64_t id)> notify_complete;
    /// Posts "checkpoint `id` aborted" to every task.
    std::function<void(int64_t id, const std::string& reason)> notify_aborted;
    /// Too many consecutive checkpoint failures: the job fails with `reason`.
    std::function<void(const std::string& reason)> fail_job;
    /// Runs `action` on the pts thread (a mail to the coordinator's task). Null: run it inline
    /// (single-threaded tests).
    std::function<void(std::function<void()> action)> post;
  };

  /// One ended checkpoint or savepoint (Flink's AbstractCheckpointStats in the history).
  struct HistoryEntry {
    int64_t id = 0;
    bool completed = false;  ///< false: failed or aborted (`failure` says why)
    bool savepoint = false;
    Timestamp trigger_ms = 0;  ///< processing time of the trigger
    int64_t duration_ms = 0;   ///< trigger to completion or abort
    uint64_t size_bytes = 0;   ///< state bytes (completed only)
    int64_t alignment_ms = 0;  ///< longest alignment of any task (completed only)
    std::string failure;       ///< why it failed (failed only)
    /// Trigger to completion on the steady clock, ns (completed only): wall time even under a
    /// virtual clock, where `duration_ms` counts virtual time (for `tidemark bench`).
    int64_t duration_ns = 0;
  };
  /// Entries `Stats::history` keeps, newest last (Flink's `web.checkpoints.history`: 10).
  static constexpr size_t kHistory = 10;

  /// Figures for `status` and the bench. Value type.
  struct Stats {
    int64_t triggered = 0;
    int64_t completed = 0;
    int64_t failed = 0;
    int64_t latest_completed_id = 0;
    /// Its directory: `chk-<id>` under the checkpoint directory, or a savepoint's own.
    std::filesystem::path latest_path;
    int64_t latest_duration_ms = 0;  ///< trigger to metadata rename of the latest completed
    uint64_t latest_size_bytes = 0;  ///< state bytes of the latest completed
    /// The longest alignment of any task in the latest completed (processing-time clock, ms).
    int64_t latest_alignment_ms = 0;
    /// The last `kHistory` ended checkpoints and savepoints, oldest first.
    std::vector<HistoryEntry> history;
  };
  /// The longest alignment of any task per completed checkpoint (steady clock, ns), oldest
  /// first, the last `kAlignmentHistory` checkpoints (Flink's checkpoint stats history). Any
  /// thread.
  std::vector<int64_t> alignment_history_ns() const;
  static constexpr size_t kAlignmentHistory = 10000;

  /// `tasks` names every task that acknowledges ("operator#subtask" of its head, for messages).
  /// `storage` is borrowed and outlives the coordinator; `pts` too.
  CheckpointCoordinator(const CheckpointingSpec& spec, std::vector<std::string> tasks,
                        CheckpointStorage* storage, ProcessingTimeService& pts, Hooks hooks);

  /// Schedules the first trigger one interval from now. pts thread.
  void Start();
  /// No further triggers; pending checkpoints stay pending. pts thread.
  void Stop();
  /// Triggers a checkpoint now if the limits allow (max concurrent, min-pause for periodic
  /// ones); returns its id. pts thread.
  std::optional<int64_t> TriggerCheckpoint(SnapshotType type = SnapshotType::kCheckpoint,
                                           bool periodic = false);
  /// `task` snapshot checkpoint `id` into `states`. Any thread. Unknown, late or duplicate
  /// acknowledgements are ignored (their files belong to an aborted checkpoint).
  /// `alignment_ms` / `alignment_ns`: how long `task` aligned this checkpoint, from its first
  /// barrier to its last (Flink's `alignmentDurationNanos`; 0 for a task with one input channel
  /// or none), on the task's processing-time clock (ms: exact under a manual or virtual clock)
  /// and on the steady clock (ns: for the bench).
  void Acknowledge(int64_t id, const std::string& task, std::vector<StateFileHandle> states,
                   int64_t alignment_ms = 0, int64_t alignment_ns = 0);
  /// `task` could not snapshot checkpoint `id`: it is aborted (posted to the pts thread). Any
  /// thread. `task_failed`: the task fails with this cause (an operator's synchronous snapshot
  /// threw, Flink's "Could not perform checkpoint"); the abort is counted in the statistics but
  /// never toward `tolerable-failed-checkpoints`, as Flink's CheckpointFailureManager ignores
  /// TASK_FAILURE: the job fails or restarts for the task's own cause.
  void Decline(int64_t id, const std::string& task, const std::string& reason,
               bool task_failed = false);

  /// One operator subtask's state as a task that finished left it (kept in memory and written
  /// into every later checkpoint, Flink's FinishedOperatorSubtaskState).
  struct FinishedState {
    std::string operator_id;
    int subtask = 0;
    std::string bytes;
    std::vector<StateBlock> blocks;
  };
  /// `task` reached end of input and finished its operators; `states` is their final state
  /// (Flink's checkpoints after tasks finish, FLIP-147). From now on the task is not waited for:
  /// every pending checkpoint it had not acknowledged, and every later one, takes `states`
  /// instead. Returns the first checkpoint id that includes them: the task may end once that
  /// checkpoint (or a later one) completed, so its last output is committed. When every task
  /// finished, a final checkpoint is triggered at once. Any thread.
  int64_t TaskFinished(const std::string& task, std::vector<FinishedState> states);
  /// The id `TaskFinished(task, ...)` would return now (for the final snapshot's context).
  int64_t NextCheckpointIdFor(const std::string& task) const;
  /// After a restore (Flink's CheckpointIDCounter#setCount): the next checkpoint gets id
  /// `next_id` if that is higher than the current counter, so ids keep increasing across a
  /// restore and a newer checkpoint never takes an older one's number. Before `Start`.
  void AdvanceCheckpointIdTo(int64_t next_id);
  /// Stop-with-savepoint --drain (Flink's terminal savepoint after the sources drained): no
  /// further periodic triggers, and the final checkpoint, triggered once every task finished,
  /// is a savepoint; every task that finishes from now on waits for it (so the job ends only once
  /// it completed). Its id is `NextCheckpointIdFor("")` right after this call (nothing else
  /// triggers meanwhile). pts thread.
  void BeginDrain();
  bool draining() const;
  /// Before a restart: aborts every pending checkpoint (their tasks are gone) and forgets which
  /// tasks finished. Ids keep increasing. pts thread.
  void Reset(const std::string& reason);

  Stats stats() const;
  /// Ids pending now, ascending. Any thread.
  std::vector<int64_t> pending_ids() const;

 private:
  struct Pending {
    CheckpointBarrier barrier;
    int64_t deadline_ms = 0;
    std::set<std::string> waiting;  ///< tasks yet to acknowledge
    std::vector<StateFileHandle> states;
    int64_t max_alignment_ms = 0;
    int64_t max_alignment_ns = 0;
    std::chrono::steady_clock::time_point triggered_steady;  ///< for HistoryEntry::duration_ns
  };

  void OnTick(Timestamp now);
  void ScheduleTick(Timestamp at);
  /// Under `mu_`: aborts `id` and counts the failure.
  /// `tolerable`: whether the failure counts toward `tolerable-failed-checkpoints`.
  void AbortLocked(int64_t id, const std::string& reason, bool tolerable = true)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Under `mu_`: appends to `stats_.history`, dropping the oldest beyond `kHistory`.
  void AddHistoryLocked(HistoryEntry entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Under `mu_`: writes the metadata of pending checkpoint `it` and completes it.
  void CompleteLocked(std::map<int64_t, Pending>::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// pts thread: completes `id` if every task acknowledged it and it is still pending.
  void CompleteIfAcknowledged(int64_t id);
  /// Under `mu_`: takes the finished tasks' states into pending checkpoint `it`; true when it
  /// then waits for no task.
  bool AddFinishedLocked(Pending& p, const std::string& task) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Under `mu_`: completes `id` on the pts thread (posted) when it waits for no task.
  void CompleteWhenReadyLocked(int64_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  CheckpointingSpec spec_;
  std::vector<std::string> tasks_;
  CheckpointStorage* storage_;
  ProcessingTimeService& pts_;
  Hooks hooks_;

  mutable Mutex mu_;
  std::map<int64_t, Pending> pending_ ABSL_GUARDED_BY(mu_);
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  int64_t last_end_ms_ = kMinTimestamp;  // end of the last completed or aborted checkpoint
  int consecutive_failures_ = 0;
  Stats stats_;
  std::map<std::string, std::vector<FinishedState>> finished_ ABSL_GUARDED_BY(mu_);
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<int64_t> alignment_history_ns_ ABSL_GUARDED_BY(mu_);
  // pts thread only
  bool running_ = false;
  Timestamp next_trigger_ms_ = 0;
  std::optional<ProcessingTimeService::TimerId> tick_;
  Timestamp tick_at_ = kMaxTimestamp;
};

}  // namespace tidemark

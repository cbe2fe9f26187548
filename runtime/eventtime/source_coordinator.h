#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/mutex.h"
#include "runtime/core/timestamp.h"
#include "runtime/eventtime/watermark_strategy.h"

namespace tidemark {

/// The minimum over the latest value reported per key. Mirrors the `WatermarkAggregator` inside
/// Flink's `SourceCoordinator`: a new report for a key *replaces* that key's previous value (so
/// the aggregate can go down as well as up), and MAX is an ordinary value (an idle or finished
/// subtask reports MAX and so never holds the minimum back).
///
/// Not thread-safe (the owning `SourceCoordinator` locks around it). Cost: O(log n) per report.
class WatermarkAggregator {
 public:
  /// Records `watermark` as the latest value of `key` and returns the new aggregate.
  Timestamp Aggregate(int key, Timestamp watermark);
  /// Forgets `key`; returns false if it was unknown.
  bool Remove(int key);
  /// The minimum over every key's latest value; nullopt while no key has reported.
  std::optional<Timestamp> aggregated() const;
  size_t size() const { return latest_.size(); }

 private:
  std::map<int, Timestamp> latest_;         // key -> latest reported value
  std::multimap<Timestamp, int> by_value_;  // the same pairs ordered by value, for the minimum
};

/// `aggregate + max_drift`, saturating at MAX (design.md "Decided": `min + max-drift` never wraps).
/// A negative drift is treated as 0.
Timestamp MaxAllowedWatermark(Timestamp aggregate, int64_t max_drift_ms);

/// The watermark-alignment coordinator of a job (the alignment half of Flink's `SourceCoordinator`,
/// with the groups shared across sources as Flink's coordinator store does). Source subtasks
/// whose strategy has `alignment` register here; each reports its latest combined watermark every
/// `update-interval` (MAX while idle or after end of input, nothing before its first watermark).
/// On every report the coordinator recomputes that group's minimum over the latest report of each
/// subtask and announces `maxAllowed = min + max-drift` (saturating at MAX; each subtask with its
/// own source's drift) to every subtask registered in the group.
///
/// A subtask that never reported (for example one without splits) takes no part in the minimum;
/// a group in which nobody has reported announces nothing, so its subtasks keep reading.
///
/// Timing and determinism: announcements are driven by the reports, and the reports by each
/// source task's own processing-time timer (`update-interval`), so under `pipeline.clock: virtual`
/// with one source subtask per group the whole exchange is a pure function of the job. With
/// several subtasks the order in which their reports arrive follows the task threads.
///
/// Threading: thread-safe. The aggregation runs under this object's lock on the reporting thread;
/// no state of it belongs to a task. `announce` callbacks are invoked under the lock and must only
/// hand the value over (the runtime posts a `Mail` with `TaskMailbox::Put`, which never blocks on
/// the task); they must not call back into the coordinator.
class SourceCoordinator {
 public:
  /// Receives `maxAllowed` for one subtask. Called from whichever thread reported.
  using AnnounceFn = std::function<void(Timestamp max_allowed_watermark)>;

  /// Registers one source subtask in `params.group` (its drift is `params.max_drift_ms`).
  /// Returns the id to report with. Throws InvalidArgument for an empty group.
  int RegisterSubtask(const WatermarkAlignmentParams& params, AnnounceFn announce);

  /// `watermark` is the subtask's latest combined watermark (MAX when idle or finished). Replaces
  /// its previous report, recomputes the group and announces to every subtask of the group.
  /// Unknown ids are ignored.
  void ReportWatermark(int subtask_id, Timestamp watermark);

  /// Removes a subtask from its group (it stops taking part and receives no announcements).
  void UnregisterSubtask(int subtask_id);

  /// The group's current minimum (nullopt: nobody reported or unknown group). For metrics/tests.
  std::optional<Timestamp> GroupMinimum(const std::string& group) const;
  /// The last `maxAllowed` announced to `subtask_id` (nullopt: none yet). For metrics/tests.
  std::optional<Timestamp> LastAnnounced(int subtask_id) const;

 private:
  struct Participant {
    std::string group;
    int64_t max_drift_ms = 0;
    AnnounceFn announce;
    std::optional<Timestamp> last_announced;
  };
  struct Group {
    WatermarkAggregator aggregator;
    std::vector<int> members;
  };

  void AnnounceLocked(Group& group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  int next_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<int, Participant> participants_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Group> groups_ ABSL_GUARDED_BY(mu_);
};

/// What a source operator offers the runtime for watermark alignment (the operator side of the
/// Flink `SourceOperator` <-> `SourceCoordinator` event exchange). `JobExecution` looks for it on
/// a source task's head operator and, when `alignment_params()` is set, registers the subtask with
/// the job's `SourceCoordinator`.
/// Threading: `SetWatermarkReporter` before the task runs; `HandleAlignmentEvent` on the task's
/// mailbox thread (delivered as a Mail).
class WatermarkAlignmentParticipant {
 public:
  /// Called on the mailbox thread with the subtask's latest watermark (MAX while idle/finished).
  using ReportFn = std::function<void(Timestamp watermark)>;

  virtual ~WatermarkAlignmentParticipant() = default;
  /// The alignment parameters of the source's strategy; nullopt when it is not aligned.
  virtual std::optional<WatermarkAlignmentParams> alignment_params() const = 0;
  virtual void SetWatermarkReporter(ReportFn report) = 0;
  /// The coordinator's announcement (Flink's `WatermarkAlignmentEvent`).
  virtual void HandleAlignmentEvent(Timestamp max_allowed_watermark) = 0;
};

}  // namespace tidemark

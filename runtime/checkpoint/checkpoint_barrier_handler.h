#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "runtime/checkpoint/checkpoint_barrier.h"

namespace tidemark {

/// How a task with input channels reacts to checkpoint barriers. Mirrors Flink's
/// `CheckpointBarrierHandler` with its two implementations:
///
/// - `kExactlyOnce` (`SingleCheckpointBarrierHandler`, aligned): once barrier n came on a channel,
///   that channel is blocked — the task pops nothing more from it — until n came on every open
///   channel; then `on_aligned(n)` runs (the task snapshots its operators and forwards n) and all
///   channels unblock. A barrier of a newer checkpoint while n is aligning aborts n (it was
///   subsumed). Mails and timers keep running meanwhile; only popping stops.
/// - `kAtLeastOnce` (`CheckpointBarrierTracker`): nothing is ever blocked; `on_aligned(n)` runs
///   when n came on every open channel (records after the barrier may be in the snapshot too).
///
/// A channel that ended counts as having delivered every later barrier (Flink: EndOfPartition).
/// A checkpoint is aborted (`on_aborted(n)`, channels unblock) by `Abort` — the coordinator's
/// timeout, a `CancelCheckpointMarker` from upstream — and barriers of an aborted or completed
/// checkpoint that arrive later are ignored.
///
/// Channels are numbered 0..num_channels-1 over all inputs of the task. Threading: the task's
/// mailbox thread only; the callbacks run inside the call that caused them.
class CheckpointBarrierHandler {
 public:
  enum class Mode { kExactlyOnce, kAtLeastOnce };
  struct Callbacks {
    std::function<void(const CheckpointBarrier&)> on_aligned;
    std::function<void(int64_t checkpoint_id)> on_aborted;
  };

  CheckpointBarrierHandler(Mode mode, size_t num_channels, Callbacks callbacks);

  /// Barrier `barrier` arrived on `channel`.
  void ProcessBarrier(const CheckpointBarrier& barrier, size_t channel);
  /// Checkpoint `checkpoint_id` is aborted (timeout, cancellation marker, failed snapshot
  /// elsewhere). Unblocks its channels; later barriers of it are ignored.
  void Abort(int64_t checkpoint_id);
  /// `channel` delivered end of input: it no longer holds any alignment back.
  void ProcessEndOfInput(size_t channel);

  /// Whether the task must not pop from `channel` now (only ever true in kExactlyOnce).
  bool IsBlocked(size_t channel) const { return blocked_[channel]; }
  /// The checkpoint being aligned (kExactlyOnce), 0 when none.
  int64_t pending_checkpoint_id() const { return pending_id_; }
  size_t num_blocked() const { return num_blocked_; }

 private:
  size_t OpenChannels() const { return blocked_.size() - num_finished_; }
  void CompleteAlignment();
  void UnblockAll();

  Mode mode_;
  Callbacks callbacks_;
  std::vector<bool> blocked_;
  std::vector<bool> finished_;
  size_t num_blocked_ = 0;
  size_t num_finished_ = 0;
  // kExactlyOnce
  int64_t pending_id_ = 0;
  CheckpointBarrier pending_;
  // Highest checkpoint id completed or aborted here: barriers up to it are stale.
  int64_t last_closed_id_ = 0;
  // kAtLeastOnce: per pending checkpoint, its barrier and the channels that delivered it.
  struct Tracked {
    CheckpointBarrier barrier;
    std::vector<bool> channels;
  };
  std::map<int64_t, Tracked> seen_;
  /// kAtLeastOnce: completes the newest tracked checkpoint every open channel delivered.
  void CompleteTracked();
};

}  // namespace tidemark

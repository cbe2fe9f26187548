#include "runtime/checkpoint/checkpoint_barrier_handler.h"

#include <algorithm>
#include <utility>

namespace tidemark {

CheckpointBarrierHandler::CheckpointBarrierHandler(Mode mode, size_t num_channels,
                                                   Callbacks callbacks)
    : mode_(mode),
      callbacks_(std::move(callbacks)),
      blocked_(num_channels, false),
      finished_(num_channels, false) {}

void CheckpointBarrierHandler::UnblockAll() {
  std::fill(blocked_.begin(), blocked_.end(), false);
  num_blocked_ = 0;
}

void CheckpointBarrierHandler::CompleteAlignment() {
  const CheckpointBarrier barrier = pending_;
  last_closed_id_ = std::max(last_closed_id_, barrier.id);
  pending_id_ = 0;
  UnblockAll();
  if (callbacks_.on_aligned) {
    callbacks_.on_aligned(barrier);
  }
}

void CheckpointBarrierHandler::ProcessBarrier(const CheckpointBarrier& barrier, size_t channel) {
  if (barrier.id <= last_closed_id_ || finished_[channel]) {
    return;  // stale: completed, aborted or subsumed already
  }
  if (mode_ == Mode::kAtLeastOnce) {
    Tracked& tracked = seen_[barrier.id];
    if (tracked.channels.empty()) {
      tracked.barrier = barrier;
      tracked.channels.assign(blocked_.size(), false);
    }
    tracked.channels[channel] = true;
    CompleteTracked();
    return;
  }
  if (pending_id_ != 0 && barrier.id > pending_id_) {
    // A newer checkpoint subsumes the one aligning (Flink aborts it with
    // CHECKPOINT_DECLINED_SUBSUMED).
    const int64_t subsumed = pending_id_;
    last_closed_id_ = std::max(last_closed_id_, subsumed);
    pending_id_ = 0;
    UnblockAll();
    if (callbacks_.on_aborted) {
      callbacks_.on_aborted(subsumed);
    }
  }
  if (pending_id_ == 0) {
    pending_id_ = barrier.id;
    pending_ = barrier;
  }
  if (!blocked_[channel]) {
    blocked_[channel] = true;
    ++num_blocked_;
  }
  if (num_blocked_ == OpenChannels()) {
    CompleteAlignment();
  }
}

void CheckpointBarrierHandler::Abort(int64_t checkpoint_id) {
  if (checkpoint_id <= last_closed_id_ && checkpoint_id != pending_id_) {
    return;
  }
  last_closed_id_ = std::max(last_closed_id_, checkpoint_id);
  if (mode_ == Mode::kAtLeastOnce) {
    seen_.erase(seen_.begin(), seen_.upper_bound(checkpoint_id));
  } else if (pending_id_ != 0 && pending_id_ <= checkpoint_id) {
    pending_id_ = 0;
    UnblockAll();
  }
  if (callbacks_.on_aborted) {
    callbacks_.on_aborted(checkpoint_id);
  }
}

void CheckpointBarrierHandler::ProcessEndOfInput(size_t channel) {
  if (finished_[channel]) {
    return;
  }
  finished_[channel] = true;
  ++num_finished_;
  if (blocked_[channel]) {  // cannot happen (nothing is popped from a blocked channel); be safe
    blocked_[channel] = false;
    --num_blocked_;
  }
  if (mode_ == Mode::kExactlyOnce && pending_id_ != 0 && num_blocked_ == OpenChannels()) {
    CompleteAlignment();
  }
  if (mode_ == Mode::kAtLeastOnce) {
    CompleteTracked();
  }
}

void CheckpointBarrierHandler::CompleteTracked() {
  for (auto it = seen_.rbegin(); it != seen_.rend(); ++it) {
    bool all = true;
    for (size_t c = 0; c < blocked_.size() && all; ++c) {
      all = it->second.channels[c] || finished_[c];
    }
    if (all) {
      // Older checkpoints still counting can never complete now: barriers come in order.
      const CheckpointBarrier barrier = it->second.barrier;
      seen_.erase(seen_.begin(), seen_.upper_bound(barrier.id));
      last_closed_id_ = barrier.id;
      if (callbacks_.on_aligned) {
        callbacks_.on_aligned(barrier);
      }
      return;
    }
  }
}

}  // namespace tidemark

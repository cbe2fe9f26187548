#include "runtime/checkpoint/checkpoint_coordinator.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "runtime/core/logging.h"
#include "runtime/core/timestamp.h"

namespace tidemark {

CheckpointCoordinator::CheckpointCoordinator(const CheckpointingSpec& spec,
                                             std::vector<std::string> tasks,
                                             CheckpointStorage* storage, ProcessingTimeService& pts,
                                             Hooks hooks)
    : spec_(spec),
      tasks_(std::move(tasks)),
      storage_(storage),
      pts_(pts),
      hooks_(std::move(hooks)) {}

void CheckpointCoordinator::Start() {
  running_ = true;
  next_trigger_ms_ = SaturatingAdd(pts_.GetCurrentProcessingTime(), spec_.interval_ms);
  ScheduleTick(next_trigger_ms_);
}

void CheckpointCoordinator::Stop() {
  running_ = false;
  if (tick_) {
    pts_.CancelTimer(*tick_);
    tick_.reset();
    tick_at_ = kMaxTimestamp;
  }
}

void CheckpointCoordinator::ScheduleTick(Timestamp at) {
  if (!running_) {
    return;
  }
  if (tick_ && tick_at_ <= at) {
    return;  // an earlier tick reschedules
  }
  if (tick_) {
    pts_.CancelTimer(*tick_);
  }
  tick_at_ = at;
  tick_ = pts_.RegisterTimer(at, [this](Timestamp t) {
    tick_.reset();
    tick_at_ = kMaxTimestamp;
    OnTick(t);
  });
}

void CheckpointCoordinator::OnTick(Timestamp now) {
  Timestamp next_deadline = kMaxTimestamp;
  {
    MutexLock lock(mu_);
    std::vector<int64_t> expired;
    for (const auto& [id, p] : pending_) {
      if (p.deadline_ms <= now) {
        expired.push_back(id);
      }
    }
    for (int64_t id : expired) {
      AbortLocked(id, fmt::format("checkpoint {} expired before completing (timeout {}ms)", id,
                                  spec_.timeout_ms));
    }
  }
  if (running_ && now >= next_trigger_ms_) {
    if (TriggerCheckpoint(SnapshotType::kCheckpoint, /*periodic=*/true)) {
      next_trigger_ms_ = SaturatingAdd(now, spec_.interval_ms);
    } else {
      // Not allowed now (too many pending, or min-pause): try again when one could be.
      MutexLock lock(mu_);
      Timestamp retry =
          SaturatingAdd(now, std::max<int64_t>(1, std::min<int64_t>(spec_.interval_ms, 10)));
      if (pending_.empty() && last_end_ms_ != kMinTimestamp) {
        retry = std::max(retry, SaturatingAdd(last_end_ms_, spec_.min_pause_ms));
      }
      next_trigger_ms_ = retry;
    }
  }
  {
    MutexLock lock(mu_);
    for (const auto& [id, p] : pending_) {
      next_deadline = std::min(next_deadline, p.deadline_ms);
    }
  }
  ScheduleTick(std::min(next_trigger_ms_, next_deadline));
}

std::optional<int64_t> CheckpointCoordinator::TriggerCheckpoint(SnapshotType type, bool periodic) {
  const Timestamp now = pts_.GetCurrentProcessingTime();
  CheckpointBarrier barrier;
  {
    MutexLock lock(mu_);
    if (periodic) {
      if (pending_.size() >= static_cast<size_t>(spec_.max_concurrent_checkpoints)) {
        return std::nullopt;
      }
      if (last_end_ms_ != kMinTimestamp && now < SaturatingAdd(last_end_ms_, spec_.min_pause_ms)) {
        return std::nullopt;
      }
    }
    barrier = CheckpointBarrier{next_id_++, now, type};
    Pending p;
    p.barrier = barrier;
    p.triggered_steady = std::chrono::steady_clock::now();
    p.deadline_ms = SaturatingAdd(now, spec_.timeout_ms);
    p.waiting.insert(tasks_.begin(), tasks_.end());
    std::string failed;
    for (const auto& [task, states] : finished_) {
      try {
        AddFinishedLocked(p, task);
      } catch (const std::exception& e) {
        // The checkpoint storage refused a finished task's final state (a full disk, say):
        // a failed checkpoint, counted toward tolerable-failed-checkpoints, as a task's own
        // failed state write is.
        failed = fmt::format("checkpoint {}: cannot write the final state of {}: {}", barrier.id,
                             task, e.what());
        break;
      }
    }
    const bool ready = p.waiting.empty();
    pending_.emplace(barrier.id, std::move(p));
    ++stats_.triggered;
    if (!failed.empty()) {
      AbortLocked(barrier.id, failed);
      return barrier.id;
    }
    if (ready) {
      CompleteWhenReadyLocked(barrier.id);
    }
  }
  if (hooks_.trigger_sources) {
    hooks_.trigger_sources(barrier);
  }
  ScheduleTick(SaturatingAdd(now, spec_.timeout_ms));
  return barrier.id;
}

void CheckpointCoordinator::Acknowledge(int64_t id, const std::string& task,
                                        std::vector<StateFileHandle> states, int64_t alignment_ms,
                                        int64_t alignment_ns) {
  MutexLock lock(mu_);
  auto it = pending_.find(id);
  if (it == pending_.end() || it->second.waiting.erase(task) == 0) {
    return;
  }
  it->second.max_alignment_ms = std::max(it->second.max_alignment_ms, alignment_ms);
  it->second.max_alignment_ns = std::max(it->second.max_alignment_ns, alignment_ns);
  for (StateFileHandle& h : states) {
    it->second.states.push_back(std::move(h));
  }
  if (!it->second.waiting.empty()) {
    return;
  }
  CompleteWhenReadyLocked(id);
}

bool CheckpointCoordinator::AddFinishedLocked(Pending& p, const std::string& task) {
  if (p.waiting.count(task) == 0) {
    return p.waiting.empty();
  }
  // Written before the task stops being waited for: a write that throws leaves the checkpoint
  // waiting for it, so it can never complete without the task's final state (the caller aborts
  // it).
  for (const FinishedState& f : finished_.at(task)) {
    if (!f.bytes.empty()) {
      p.states.push_back(
          storage_->WriteState(p.barrier.id, f.operator_id, f.subtask, f.bytes, f.blocks));
    }
  }
  p.waiting.erase(task);
  return p.waiting.empty();
}

void CheckpointCoordinator::CompleteWhenReadyLocked(int64_t id) {
  if (hooks_.post) {
    hooks_.post([this, id] { CompleteIfAcknowledged(id); });
  } else if (auto it = pending_.find(id); it != pending_.end()) {
    CompleteLocked(it);
  }
}

int64_t CheckpointCoordinator::TaskFinished(const std::string& task,
                                            std::vector<FinishedState> states) {
  bool all_finished = false;
  bool draining = false;
  int64_t first = 0;
  std::vector<std::pair<int64_t, std::string>> failed;
  {
    MutexLock lock(mu_);
    finished_[task] = std::move(states);
    std::vector<int64_t> ready;
    for (auto& [id, p] : pending_) {
      if (p.waiting.count(task) == 0) {
        continue;  // acknowledged before finishing: its state there is from before the end
      }
      if (first == 0) {
        first = id;
      }
      try {
        if (AddFinishedLocked(p, task)) {
          ready.push_back(id);
        }
      } catch (const std::exception& e) {
        // Without the task's final state the checkpoint cannot complete: a failed checkpoint.
        failed.emplace_back(id, fmt::format("checkpoint {}: cannot write the final state of {}: {}",
                                            id, task, e.what()));
      }
    }
    for (int64_t id : ready) {
      CompleteWhenReadyLocked(id);
    }
    if (first == 0 || draining_) {
      // Draining: the task waits for the final savepoint, the next id (nothing else triggers).
      first = next_id_;
    }
    all_finished = finished_.size() >= tasks_.size();
    draining = draining_;
  }
  for (auto& f : failed) {
    // Aborting reads processing time: on the pts thread only (as Decline).
    auto abort = [this, id = f.first, why = std::move(f.second)] {
      MutexLock lock(mu_);
      AbortLocked(id, why);
    };
    if (hooks_.post) {
      hooks_.post(abort);
    } else {
      abort();
    }
  }
  if (all_finished) {
    // The final checkpoint (Flink's checkpoint after all tasks finished): it waits for no task.
    const SnapshotType type = draining ? SnapshotType::kSavepoint : SnapshotType::kCheckpoint;
    auto trigger = [this, type] {
      TriggerCheckpoint(type, /*periodic=*/false);
    };
    if (hooks_.post) {
      hooks_.post(trigger);
    } else {
      trigger();
    }
  }
  return first;
}

void CheckpointCoordinator::AdvanceCheckpointIdTo(int64_t next_id) {
  MutexLock lock(mu_);
  next_id_ = std::max(next_id_, next_id);
}

int64_t CheckpointCoordinator::NextCheckpointIdFor(const std::string& task) const {
  MutexLock lock(mu_);
  for (const auto& [id, p] : pending_) {
    if (p.waiting.count(task) > 0) {
      return id;
    }
  }
  return next_id_;
}

void CheckpointCoordinator::BeginDrain() {
  Stop();
  MutexLock lock(mu_);
  draining_ = true;
}

bool CheckpointCoordinator::draining() const {
  MutexLock lock(mu_);
  return draining_;
}

void CheckpointCoordinator::Reset(const std::string& reason) {
  MutexLock lock(mu_);
  draining_ = false;
  while (!pending_.empty()) {
    const int64_t id = pending_.begin()->first;
    pending_.erase(pending_.begin());
    storage_->Discard(id);
    GetLogger("checkpoint")->info("checkpoint {} discarded: {}", id, reason);
  }
  finished_.clear();
  consecutive_failures_ = 0;
}

void CheckpointCoordinator::CompleteIfAcknowledged(int64_t id) {
  MutexLock lock(mu_);
  auto it = pending_.find(id);
  if (it != pending_.end() && it->second.waiting.empty()) {
    CompleteLocked(it);
  }
}

void CheckpointCoordinator::CompleteLocked(std::map<int64_t, Pending>::iterator it) {
  const int64_t id = it->first;
  std::filesystem::path latest_path;
  try {
    // The directory first: a savepoint's is forgotten by the storage once it is final.
    latest_path = storage_->CheckpointDir(id);
    storage_->Finalize(id, it->second.barrier.timestamp_ms, it->second.states,
                       /*drained=*/draining_ && finished_.size() >= tasks_.size());
  } catch (const std::exception& e) {
    // An I/O failure at the metadata write is a failed checkpoint (Flink: IO_EXCEPTION).
    AbortLocked(id, fmt::format("checkpoint {} could not be completed: {}", id, e.what()));
    return;
  }
  Pending p = std::move(it->second);
  pending_.erase(it);
  const Timestamp now = pts_.GetCurrentProcessingTime();  // a plain clock read
  last_end_ms_ = now;
  consecutive_failures_ = 0;
  ++stats_.completed;
  stats_.latest_completed_id = p.barrier.id;
  stats_.latest_path = std::move(latest_path);
  stats_.latest_duration_ms = now - p.barrier.timestamp_ms;
  stats_.latest_alignment_ms = p.max_alignment_ms;
  if (alignment_history_ns_.size() >= kAlignmentHistory) {
    alignment_history_ns_.erase(alignment_history_ns_.begin());
  }
  alignment_history_ns_.push_back(p.max_alignment_ns);
  stats_.latest_size_bytes = 0;
  for (const StateFileHandle& h : p.states) {
    stats_.latest_size_bytes += h.size;
  }
  AddHistoryLocked(HistoryEntry{p.barrier.id, true, p.barrier.type == SnapshotType::kSavepoint,
                                p.barrier.timestamp_ms, stats_.latest_duration_ms,
                                stats_.latest_size_bytes, p.max_alignment_ms, "",
                                std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now() - p.triggered_steady)
                                    .count()});
  // Flink subsumes older pending checkpoints once a newer one completed.
  while (!pending_.empty() && pending_.begin()->first < p.barrier.id) {
    const int64_t old = pending_.begin()->first;
    pending_.erase(pending_.begin());
    storage_->Discard(old);
    if (hooks_.notify_aborted) {
      hooks_.notify_aborted(old, fmt::format("checkpoint {} subsumed by {}", old, p.barrier.id));
    }
  }
  if (hooks_.notify_complete) {
    hooks_.notify_complete(p.barrier.id);
  }
}

void CheckpointCoordinator::Decline(int64_t id, const std::string& task, const std::string& reason,
                                    bool task_failed) {
  std::string why = fmt::format("checkpoint {} declined by {}: {}", id, task, reason);
  auto abort = [this, id, why = std::move(why), task_failed] {
    MutexLock lock(mu_);
    AbortLocked(id, why, /*tolerable=*/!task_failed);  // ignores one no longer pending
  };
  // Aborting reads processing time: on the pts thread only.
  if (hooks_.post) {
    hooks_.post(abort);
  } else {
    abort();
  }
}

void CheckpointCoordinator::AbortLocked(int64_t id, const std::string& reason, bool tolerable) {
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    return;
  }
  // A savepoint is the user's request, not the job's fault-tolerance: its failure is reported to
  // whoever asked and never counts toward tolerable-failed-checkpoints (Flink's
  // CheckpointFailureManager ignores savepoints), so the job runs on untouched.
  const bool savepoint = it->second.barrier.type == SnapshotType::kSavepoint;
  const Timestamp trigger_ms = it->second.barrier.timestamp_ms;
  pending_.erase(it);
  storage_->Discard(id);
  last_end_ms_ = pts_.GetCurrentProcessingTime();
  ++stats_.failed;
  AddHistoryLocked(
      HistoryEntry{id, false, savepoint, trigger_ms, last_end_ms_ - trigger_ms, 0, 0, reason, 0});
  if (!savepoint && tolerable) {
    ++consecutive_failures_;
  }
  GetLogger("checkpoint")->warn("{}", reason);
  if (hooks_.notify_aborted) {
    hooks_.notify_aborted(id, reason);
  }
  if (!savepoint && tolerable && consecutive_failures_ > spec_.tolerable_failed_checkpoints &&
      hooks_.fail_job) {
    hooks_.fail_job(fmt::format("exceeded checkpoint tolerable failure threshold ({}): {}",
                                spec_.tolerable_failed_checkpoints, reason));
  }
}

void CheckpointCoordinator::AddHistoryLocked(HistoryEntry entry) {
  if (stats_.history.size() >= kHistory) {
    stats_.history.erase(stats_.history.begin());
  }
  stats_.history.push_back(std::move(entry));
}

CheckpointCoordinator::Stats CheckpointCoordinator::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

std::vector<int64_t> CheckpointCoordinator::alignment_history_ns() const {
  MutexLock lock(mu_);
  return alignment_history_ns_;
}

std::vector<int64_t> CheckpointCoordinator::pending_ids() const {
  MutexLock lock(mu_);
  std::vector<int64_t> ids;
  for (const auto& [id, p] : pending_) {
    ids.push_back(id);
  }
  return ids;
}

}  // namespace tidemark

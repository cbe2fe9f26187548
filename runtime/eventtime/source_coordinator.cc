#include "runtime/eventtime/source_coordinator.h"

#include "runtime/core/errors.h"

namespace tidemark {

Timestamp WatermarkAggregator::Aggregate(int key, Timestamp watermark) {
  Remove(key);
  latest_.emplace(key, watermark);
  by_value_.emplace(watermark, key);
  return by_value_.begin()->first;
}

bool WatermarkAggregator::Remove(int key) {
  auto it = latest_.find(key);
  if (it == latest_.end()) {
    return false;
  }
  auto [lo, hi] = by_value_.equal_range(it->second);
  for (auto v = lo; v != hi; ++v) {
    if (v->second == key) {
      by_value_.erase(v);
      break;
    }
  }
  latest_.erase(it);
  return true;
}

std::optional<Timestamp> WatermarkAggregator::aggregated() const {
  if (by_value_.empty()) {
    return std::nullopt;
  }
  return by_value_.begin()->first;
}

Timestamp MaxAllowedWatermark(Timestamp aggregate, int64_t max_drift_ms) {
  return SaturatingAdd(aggregate, max_drift_ms > 0 ? max_drift_ms : 0);
}

int SourceCoordinator::RegisterSubtask(const WatermarkAlignmentParams& params,
                                       AnnounceFn announce) {
  if (params.group.empty()) {
    throw InvalidArgument("watermark alignment needs a non-empty group");
  }
  MutexLock lock(mu_);
  const int id = next_id_++;
  participants_.emplace(id,
                        Participant{params.group, params.max_drift_ms, std::move(announce), {}});
  groups_[params.group].members.push_back(id);
  return id;
}

void SourceCoordinator::ReportWatermark(int subtask_id, Timestamp watermark) {
  MutexLock lock(mu_);
  auto it = participants_.find(subtask_id);
  if (it == participants_.end()) {
    return;
  }
  Group& group = groups_[it->second.group];
  group.aggregator.Aggregate(subtask_id, watermark);
  AnnounceLocked(group);
}

void SourceCoordinator::UnregisterSubtask(int subtask_id) {
  MutexLock lock(mu_);
  auto it = participants_.find(subtask_id);
  if (it == participants_.end()) {
    return;
  }
  Group& group = groups_[it->second.group];
  group.aggregator.Remove(subtask_id);
  std::erase(group.members, subtask_id);
  participants_.erase(it);
  AnnounceLocked(group);
}

void SourceCoordinator::AnnounceLocked(Group& group) {
  const std::optional<Timestamp> min = group.aggregator.aggregated();
  if (!min) {
    return;  // nobody reported: nothing to align to
  }
  for (int id : group.members) {
    Participant& p = participants_.at(id);
    const Timestamp max_allowed = MaxAllowedWatermark(*min, p.max_drift_ms);
    p.last_announced = max_allowed;
    if (p.announce) {
      p.announce(max_allowed);
    }
  }
}

std::optional<Timestamp> SourceCoordinator::GroupMinimum(const std::string& group) const {
  MutexLock lock(mu_);
  auto it = groups_.find(group);
  if (it == groups_.end()) {
    return std::nullopt;
  }
  return it->second.aggregator.aggregated();
}

std::optional<Timestamp> SourceCoordinator::LastAnnounced(int subtask_id) const {
  MutexLock lock(mu_);
  auto it = participants_.find(subtask_id);
  if (it == participants_.end()) {
    return std::nullopt;
  }
  return it->second.last_announced;
}

}  // namespace tidemark

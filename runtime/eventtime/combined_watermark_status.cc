#include "runtime/eventtime/combined_watermark_status.h"

#include <algorithm>

namespace tidemark {

bool PartialWatermark::SetWatermark(Timestamp watermark) {
  state_ = State::kActive;
  if (watermark > watermark_) {
    watermark_ = watermark;
    return true;
  }
  return false;
}

PartialWatermark* CombinedWatermarkStatus::Add() {
  had_inputs_ = true;
  partials_.emplace_back();
  return &partials_.back();
}

bool CombinedWatermarkStatus::Remove(PartialWatermark* partial) {
  for (auto it = partials_.begin(); it != partials_.end(); ++it) {
    if (&*it == partial) {
      partials_.erase(it);
      return true;
    }
  }
  return false;
}

bool CombinedWatermarkStatus::HasActiveInput() const {
  return std::any_of(partials_.begin(), partials_.end(),
                     [](const PartialWatermark& p) { return p.IsActive(); });
}

bool CombinedWatermarkStatus::UpdateCombinedWatermark() {
  if (partials_.empty()) {
    // Nothing to combine; MAX must never come out of an empty set. Once inputs existed and all
    // are gone, nothing holds event time back any more: report idle.
    if (had_inputs_) {
      idle_ = true;
    }
    return false;
  }
  Timestamp min_non_idle = kMaxTimestamp;
  Timestamp max_all = kMinTimestamp;
  bool all_idle = true;
  for (const PartialWatermark& p : partials_) {
    max_all = std::max(max_all, p.watermark());
    if (!p.IsIdle()) {
      all_idle = false;
      min_non_idle = std::min(min_non_idle, p.watermark());
    }
  }
  idle_ = all_idle;
  const Timestamp candidate = all_idle ? max_all : min_non_idle;
  if (candidate > combined_watermark_) {
    combined_watermark_ = candidate;
    return true;
  }
  return false;
}

}  // namespace tidemark

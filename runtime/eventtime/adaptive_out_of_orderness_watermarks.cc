#include "runtime/eventtime/adaptive_out_of_orderness_watermarks.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/core/errors.h"

namespace tidemark {
namespace {

// Saturating `a - b` for b >= 0 (never wraps past MIN).
Timestamp SaturatingSub(Timestamp a, int64_t b) {
  Timestamp out = 0;
  if (__builtin_sub_overflow(a, b, &out)) {
    return kMinTimestamp;
  }
  return out;
}

}  // namespace

void AdaptiveOutOfOrdernessWatermarks::Validate(const AdaptiveOutOfOrdernessParams& p) {
  if (!(p.percentile > 0.0 && p.percentile <= 100.0)) {
    throw InvalidArgument(fmt::format("percentile must be in (0, 100], got {}", p.percentile));
  }
  if (p.window_ms <= 0) {
    throw InvalidArgument(fmt::format("window must be greater than 0 ms, got {} ms", p.window_ms));
  }
  if (p.min_ms < 0) {
    throw InvalidArgument(fmt::format("min must not be negative, got {} ms", p.min_ms));
  }
  if (p.max_ms < p.min_ms) {
    throw InvalidArgument(
        fmt::format("max ({} ms) must not be less than min ({} ms)", p.max_ms, p.min_ms));
  }
  if (p.initial_ms < p.min_ms || p.initial_ms > p.max_ms) {
    throw InvalidArgument(fmt::format("initial ({} ms) must lie within [min, max] = [{}, {}] ms",
                                      p.initial_ms, p.min_ms, p.max_ms));
  }
}

AdaptiveOutOfOrdernessWatermarks::AdaptiveOutOfOrdernessWatermarks(
    const AdaptiveOutOfOrdernessParams& params)
    : params_(params), bound_ms_(params.initial_ms) {
  Validate(params_);
}

size_t AdaptiveOutOfOrdernessWatermarks::TargetRank(size_t n) const {
  if (n == 0) {
    return 0;
  }
  // A small epsilon so that 99 % of 100 is rank 99, not 100 after rounding up 99.00000000000001.
  const double r = std::ceil(params_.percentile / 100.0 * static_cast<double>(n) - 1e-9);
  return std::clamp<size_t>(static_cast<size_t>(std::max(r, 1.0)), 1, n);
}

void AdaptiveOutOfOrdernessWatermarks::Rebalance() {
  const size_t want = TargetRank(low_.size() + high_.size());
  while (low_.size() > want) {
    auto last = std::prev(low_.end());
    high_.insert(*last);
    low_.erase(last);
  }
  while (low_.size() < want && !high_.empty()) {
    low_.insert(*high_.begin());
    high_.erase(high_.begin());
  }
}

void AdaptiveOutOfOrdernessWatermarks::Insert(int64_t lateness) {
  if (!low_.empty() && lateness <= *low_.rbegin()) {
    low_.insert(lateness);
  } else {
    high_.insert(lateness);
  }
  Rebalance();
}

void AdaptiveOutOfOrdernessWatermarks::Erase(int64_t lateness) {
  // The value is in `low_` if it is <= low's largest element (equal values may sit in either
  // set; taking one from `low_` keeps the split valid).
  if (!low_.empty() && lateness <= *low_.rbegin()) {
    low_.erase(low_.find(lateness));
  } else {
    high_.erase(high_.find(lateness));
  }
  Rebalance();
}

void AdaptiveOutOfOrdernessWatermarks::OnEvent(const StreamRecord& /*record*/,
                                               Timestamp event_timestamp,
                                               WatermarkOutput& /*output*/) {
  if (!seen_any_) {
    seen_any_ = true;
    first_max_ = event_timestamp;
    max_timestamp_ = event_timestamp;
  }
  max_timestamp_ = std::max(max_timestamp_, event_timestamp);
  // max_timestamp_ >= event_timestamp, and both are real timestamps (> MIN), so no overflow
  // unless the span exceeds int64; saturate in that (absurd) case.
  int64_t lateness = 0;
  if (__builtin_sub_overflow(max_timestamp_, event_timestamp, &lateness)) {
    lateness = std::numeric_limits<int64_t>::max();
  }
  arrivals_.push_back(Observation{max_timestamp_, lateness});
  Insert(lateness);
  // Evict what fell out of the event-time window: max_at_arrival <= max_ts - window.
  while (!arrivals_.empty() &&
         arrivals_.front().max_at_arrival <= SaturatingSub(max_timestamp_, params_.window_ms)) {
    Erase(arrivals_.front().lateness_ms);
    arrivals_.pop_front();
  }
}

int64_t AdaptiveOutOfOrdernessWatermarks::ComputeBoundMs() const {
  if (!seen_any_ || SaturatingSub(max_timestamp_, params_.window_ms) < first_max_ || low_.empty()) {
    return params_.initial_ms;
  }
  return std::clamp(*low_.rbegin(), params_.min_ms, params_.max_ms);
}

void AdaptiveOutOfOrdernessWatermarks::OnPeriodicEmit(WatermarkOutput& output) {
  bound_ms_ = ComputeBoundMs();
  if (!seen_any_) {
    return;  // nothing seen: no watermark (it stays MIN)
  }
  // max_ts - bound - 1, saturating at MIN (a bound near int64 max on an early timestamp).
  const Timestamp candidate = SaturatingSub(SaturatingSub(max_timestamp_, bound_ms_), 1);
  last_watermark_ = std::max(last_watermark_, candidate);
  output.EmitWatermark(Watermark{last_watermark_});
}

}  // namespace tidemark

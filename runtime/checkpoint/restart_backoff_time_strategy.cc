#include "runtime/checkpoint/restart_backoff_time_strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace tidemark {

FixedDelayRestartBackoffTimeStrategy::FixedDelayRestartBackoffTimeStrategy(int64_t max_attempts,
                                                                           int64_t backoff_ms)
    : max_attempts_(std::max<int64_t>(0, max_attempts)),
      backoff_ms_(std::max<int64_t>(0, backoff_ms)) {}

void FixedDelayRestartBackoffTimeStrategy::NotifyFailure(const std::string& /*cause*/) {
  ++current_attempt_;
}

bool FixedDelayRestartBackoffTimeStrategy::CanRestart() const {
  return current_attempt_ <= max_attempts_;
}

std::string FixedDelayRestartBackoffTimeStrategy::ToString() const {
  return fmt::format(
      "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts={}, backoffTimeMS={})",
      max_attempts_, backoff_ms_);
}

ExponentialDelayRestartBackoffTimeStrategy::ExponentialDelayRestartBackoffTimeStrategy(
    const RelativeClock& clock, int64_t initial_backoff_ms, int64_t max_backoff_ms,
    double backoff_multiplier, int64_t reset_backoff_threshold_ms, double jitter_factor,
    uint64_t seed)
    : clock_(clock),
      initial_backoff_ms_(std::max<int64_t>(1, initial_backoff_ms)),
      max_backoff_ms_(std::max(initial_backoff_ms_, max_backoff_ms)),
      backoff_multiplier_(std::max(1.0, backoff_multiplier)),
      reset_backoff_threshold_ms_(std::max<int64_t>(0, reset_backoff_threshold_ms)),
      jitter_factor_(std::clamp(jitter_factor, 0.0, 1.0)),
      current_backoff_ms_(initial_backoff_ms_),
      random_(seed) {}

void ExponentialDelayRestartBackoffTimeStrategy::NotifyFailure(const std::string& /*cause*/) {
  const int64_t now = clock_.GetRelativeTimeMillis();
  if (!last_failure_ms_ ||
      now - *last_failure_ms_ >= reset_backoff_threshold_ms_ + current_backoff_ms_) {
    current_backoff_ms_ = initial_backoff_ms_;
  } else if (current_backoff_ms_ < max_backoff_ms_) {
    // In double, so that a multiplier like 1.5 grows 1 ms backoffs too, and no overflow.
    const double next = std::floor(static_cast<double>(current_backoff_ms_) * backoff_multiplier_);
    current_backoff_ms_ = next >= static_cast<double>(max_backoff_ms_)
                              ? max_backoff_ms_
                              : std::max(initial_backoff_ms_, static_cast<int64_t>(next));
  }
  last_failure_ms_ = now;
}

int64_t ExponentialDelayRestartBackoffTimeStrategy::GetBackoffTimeMs() {
  int64_t jitter = 0;
  const auto offset =
      static_cast<int64_t>(static_cast<double>(current_backoff_ms_) * jitter_factor_);
  if (offset > 0) {
    jitter = std::uniform_int_distribution<int64_t>(-offset, offset)(random_);
  }
  return std::clamp(current_backoff_ms_ + jitter, initial_backoff_ms_, max_backoff_ms_);
}

std::string ExponentialDelayRestartBackoffTimeStrategy::ToString() const {
  return fmt::format(
      "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS={}, maxBackoffMS={}, "
      "backoffMultiplier={}, resetBackoffThresholdMS={}, jitterFactor={}, currentBackoffMS={})",
      initial_backoff_ms_, max_backoff_ms_, backoff_multiplier_, reset_backoff_threshold_ms_,
      jitter_factor_, current_backoff_ms_);
}

FailureRateRestartBackoffTimeStrategy::FailureRateRestartBackoffTimeStrategy(
    const RelativeClock& clock, int64_t max_failures_per_interval, int64_t failures_interval_ms,
    int64_t backoff_ms)
    : clock_(clock),
      max_failures_per_interval_(
          static_cast<size_t>(std::max<int64_t>(1, max_failures_per_interval))),
      failures_interval_ms_(std::max<int64_t>(1, failures_interval_ms)),
      backoff_ms_(std::max<int64_t>(0, backoff_ms)) {}

void FailureRateRestartBackoffTimeStrategy::NotifyFailure(const std::string& /*cause*/) {
  if (failure_timestamps_ms_.size() >= max_failures_per_interval_) {
    failure_timestamps_ms_.pop_front();
  }
  failure_timestamps_ms_.push_back(clock_.GetRelativeTimeMillis());
}

bool FailureRateRestartBackoffTimeStrategy::CanRestart() const {
  if (failure_timestamps_ms_.size() < max_failures_per_interval_) {
    return true;
  }
  return clock_.GetRelativeTimeMillis() - failure_timestamps_ms_.front() > failures_interval_ms_;
}

std::string FailureRateRestartBackoffTimeStrategy::ToString() const {
  return fmt::format(
      "FailureRateRestartBackoffTimeStrategy(failuresIntervalMS={}, backoffTimeMS={}, "
      "maxFailuresPerInterval={})",
      failures_interval_ms_, backoff_ms_, max_failures_per_interval_);
}

std::unique_ptr<RestartBackoffTimeStrategy> CreateRestartBackoffTimeStrategy(
    const RestartStrategySpec& spec, const RelativeClock& clock, uint64_t seed) {
  if (spec.type == "fixed-delay") {
    return std::make_unique<FixedDelayRestartBackoffTimeStrategy>(spec.attempts, spec.delay_ms);
  }
  if (spec.type == "exponential-delay") {
    return std::make_unique<ExponentialDelayRestartBackoffTimeStrategy>(
        clock, spec.initial_backoff_ms, spec.max_backoff_ms, spec.backoff_multiplier,
        spec.reset_backoff_threshold_ms, spec.jitter_factor, seed);
  }
  if (spec.type == "failure-rate") {
    return std::make_unique<FailureRateRestartBackoffTimeStrategy>(
        clock, spec.max_failures_per_interval, spec.failure_rate_interval_ms, spec.delay_ms);
  }
  return std::make_unique<NoRestartBackoffTimeStrategy>();
}

}  // namespace tidemark

#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "config/job_spec.h"
#include "runtime/eventtime/relative_clock.h"

namespace tidemark {

/// Decides whether a failed job restarts and after how long. Mirrors Flink's
/// `RestartBackoffTimeStrategy`: on every failure the job manager calls `NotifyFailure`, then asks
/// `CanRestart`; when it may, it waits `GetBackoffTimeMs` before restarting every task from the
/// latest completed checkpoint.
///
/// Time: the strategies read `clock` (a `ManualRelativeClock` in tests, the process's monotonic
/// clock otherwise); only differences of its milliseconds are used. Ownership: borrow the clock,
/// which must outlive them. Threading: one thread (the job's supervisor); not thread-safe.
class RestartBackoffTimeStrategy {
 public:
  virtual ~RestartBackoffTimeStrategy() = default;
  /// Records one failure (its cause only for the log).
  virtual void NotifyFailure(const std::string& cause) = 0;
  /// Whether the job may restart after the failures notified so far.
  virtual bool CanRestart() const = 0;
  /// How long to wait before the restart, in ms. Meaningful only when `CanRestart()`.
  virtual int64_t GetBackoffTimeMs() = 0;
  /// For `status` and logs, e.g. "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=3,
  /// backoffTimeMS=1000)".
  virtual std::string ToString() const = 0;
};

/// `restart-strategy: {type: none}` (Flink's `NoRestartBackoffTimeStrategy`): never restarts.
class NoRestartBackoffTimeStrategy final : public RestartBackoffTimeStrategy {
 public:
  void NotifyFailure(const std::string& /*cause*/) override {}
  bool CanRestart() const override { return false; }
  int64_t GetBackoffTimeMs() override { return 0; }
  std::string ToString() const override { return "NoRestartBackoffTimeStrategy"; }
};

/// `fixed-delay` (Flink's `FixedDelayRestartBackoffTimeStrategy`): at most `attempts` restarts in
/// the job's life, each `delay` after its failure. The (attempts + 1)-th failure fails the job.
class FixedDelayRestartBackoffTimeStrategy final : public RestartBackoffTimeStrategy {
 public:
  FixedDelayRestartBackoffTimeStrategy(int64_t max_attempts, int64_t backoff_ms);
  void NotifyFailure(const std::string& cause) override;
  bool CanRestart() const override;
  int64_t GetBackoffTimeMs() override { return backoff_ms_; }
  std::string ToString() const override;

 private:
  int64_t max_attempts_;
  int64_t backoff_ms_;
  int64_t current_attempt_ = 0;
};

/// `exponential-delay` (Flink's `ExponentialDelayRestartBackoffTimeStrategy`): always restarts.
/// The first failure waits `initial-backoff`; each following one multiplies the backoff by
/// `backoff-multiplier`, capped at `max-backoff`. When the job ran for at least
/// `reset-backoff-threshold` + the current backoff since the previous failure, the backoff starts
/// again at `initial-backoff`. Each wait is the backoff plus a uniform jitter in
/// [-backoff * jitter-factor, +backoff * jitter-factor] (truncated to whole ms), clamped to
/// [initial-backoff, max-backoff]. `seed` makes the jitter reproducible (tests); production passes
/// a random one.
class ExponentialDelayRestartBackoffTimeStrategy final : public RestartBackoffTimeStrategy {
 public:
  ExponentialDelayRestartBackoffTimeStrategy(const RelativeClock& clock, int64_t initial_backoff_ms,
                                             int64_t max_backoff_ms, double backoff_multiplier,
                                             int64_t reset_backoff_threshold_ms,
                                             double jitter_factor, uint64_t seed);
  void NotifyFailure(const std::string& cause) override;
  bool CanRestart() const override { return true; }
  int64_t GetBackoffTimeMs() override;
  std::string ToString() const override;

  /// The backoff before jitter (for tests and `status`).
  int64_t current_backoff_ms() const { return current_backoff_ms_; }

 private:
  const RelativeClock& clock_;
  int64_t initial_backoff_ms_;
  int64_t max_backoff_ms_;
  double backoff_multiplier_;
  int64_t reset_backoff_threshold_ms_;
  double jitter_factor_;
  int64_t current_backoff_ms_;
  std::optional<int64_t> last_failure_ms_;
  std::mt19937_64 random_;
};

/// `failure-rate` (Flink's `FailureRateRestartBackoffTimeStrategy`): restarts after `delay` as
/// long as fewer than `max-failures-per-interval` failures fall within any `failure-rate-interval`;
/// the failure that makes it that many within the interval fails the job.
class FailureRateRestartBackoffTimeStrategy final : public RestartBackoffTimeStrategy {
 public:
  FailureRateRestartBackoffTimeStrategy(const RelativeClock& clock,
                                        int64_t max_failures_per_interval,
                                        int64_t failures_interval_ms, int64_t backoff_ms);
  void NotifyFailure(const std::string& cause) override;
  bool CanRestart() const override;
  int64_t GetBackoffTimeMs() override { return backoff_ms_; }
  std::string ToString() const override;

 private:
  const RelativeClock& clock_;
  size_t max_failures_per_interval_;
  int64_t failures_interval_ms_;
  int64_t backoff_ms_;
  std::deque<int64_t> failure_timestamps_ms_;  ///< the last max_failures_per_interval failures
};

/// The strategy a validated `RestartStrategySpec` describes (see `EffectiveRestartStrategy`).
std::unique_ptr<RestartBackoffTimeStrategy> CreateRestartBackoffTimeStrategy(
    const RestartStrategySpec& spec, const RelativeClock& clock, uint64_t seed);

}  // namespace tidemark

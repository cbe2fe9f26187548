#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace tidemark {

/// Where a task's (or a split's) time goes, as Flink's TaskIOMetricGroup / TimerGauge account it:
/// the time is split between exclusive states and reported as milliseconds per second over the
/// last window, so that the states of one sample add up to exactly 1000.
///
/// For a task (`StreamTask`): state 0 = busy (processing), 1 = idle (no input; a source with
/// nothing to read), 2 = back-pressured (output queued on a full channel) -> Flink's
/// `busyTimeMsPerSecond`, `idleTimeMsPerSecond`, `backPressuredTimeMsPerSecond`. For a source
/// split: 0 = active, 1 = idle, 2 = paused (watermark alignment) -> Flink's split
/// `activeTimeMsPerSecond`, `idleTimeMsPerSecond`, `pausedTimeMsPerSecond`.
///
/// Time is whatever clock the caller reads (ms), normally the task's ProcessingTimeService, so a
/// manual or virtual clock makes it deterministic; a clock going backwards counts as no time.
/// Not thread-safe: one thread (the task's mailbox thread) calls everything.
class TimeAccounting {
 public:
  static constexpr size_t kStates = 3;
  using PerSecond = std::array<int64_t, kStates>;

  /// `window_ms`: a sample covers at least this much time; earlier calls to `Sample` return the
  /// previous window's figures (Flink's metric views also update on a fixed interval).
  explicit TimeAccounting(int64_t window_ms = 1000) : window_ms_(window_ms) {}

  /// From `now_ms` on, time counts to `state` (< kStates). The first call starts the clock; the
  /// time before it counts to nothing.
  void Enter(size_t state, int64_t now_ms);
  size_t state() const { return state_; }

  /// ms per second of each state over the last complete window (at least `window_ms`), summing to
  /// 1000 once one window has passed; all zero before. The first state takes the rounding.
  PerSecond Sample(int64_t now_ms);

  /// ms spent in each state since the first `Enter`, up to the last `Enter` or `Sample`.
  const std::array<int64_t, kStates>& accumulated() const { return total_; }

 private:
  void Advance(int64_t now_ms);

  const int64_t window_ms_;
  bool started_ = false;
  size_t state_ = 0;
  int64_t last_ms_ = 0;
  std::array<int64_t, kStates> total_{};
  std::array<int64_t, kStates> window_start_total_{};
  int64_t window_start_ms_ = 0;
  PerSecond last_{};
};

}  // namespace tidemark

#pragma once

#include <cstdint>

#include "runtime/eventtime/relative_clock.h"

namespace tidemark {

/// A relative clock that can be stopped: while paused, its time stands still, and after resuming it
/// continues from where it stopped (paused spans are subtracted). Mirrors Flink's
/// `PausableRelativeClock`. A source gives each split one of these as the input-activity clock of
/// its `WatermarksWithIdleness`, and pauses it during backpressure and while the split is paused
/// for watermark alignment, so that a split that is not allowed to emit never becomes idle.
///
/// Pauses nest: `Pause` twice needs `Unpause` twice (backpressure and alignment pause
/// independently). `Unpause` without a matching `Pause` is a bug (TM_DCHECK) and is ignored.
/// Ownership: borrows `base`, which must outlive this clock. Threading: mailbox thread only.
class PausableRelativeClock final : public RelativeClock {
 public:
  explicit PausableRelativeClock(const RelativeClock& base) : base_(base) {}
  // Not copyable: `PausableRelativeClock(other_pausable_clock)` would silently pick the copy
  // constructor (sharing `other`'s base) instead of layering on `other`, so pauses of `other`
  // would not reach the new clock. Layer explicitly through a `const RelativeClock&`.
  PausableRelativeClock(const PausableRelativeClock&) = delete;
  PausableRelativeClock& operator=(const PausableRelativeClock&) = delete;

  int64_t GetRelativeTimeNanos() const override;

  void Pause();
  void Unpause();
  bool IsPaused() const { return pause_count_ > 0; }

 private:
  const RelativeClock& base_;
  int pause_count_ = 0;
  int64_t pause_start_nanos_ = 0;   ///< base time when the outermost pause began
  int64_t paused_total_nanos_ = 0;  ///< sum of completed paused spans
};

}  // namespace tidemark

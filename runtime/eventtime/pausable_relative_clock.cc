#include "runtime/eventtime/pausable_relative_clock.h"

#include "runtime/core/errors.h"

namespace tidemark {

int64_t PausableRelativeClock::GetRelativeTimeNanos() const {
  if (pause_count_ > 0) {
    return pause_start_nanos_ - paused_total_nanos_;
  }
  return base_.GetRelativeTimeNanos() - paused_total_nanos_;
}

void PausableRelativeClock::Pause() {
  if (pause_count_++ == 0) {
    pause_start_nanos_ = base_.GetRelativeTimeNanos();
  }
}

void PausableRelativeClock::Unpause() {
  TM_DCHECK(pause_count_ > 0, "Unpause without Pause");
  if (pause_count_ == 0) {
    return;
  }
  if (--pause_count_ == 0) {
    paused_total_nanos_ += base_.GetRelativeTimeNanos() - pause_start_nanos_;
  }
}

}  // namespace tidemark

#include "runtime/eventtime/watermarks_with_idleness.h"

#include <utility>

#include "runtime/core/errors.h"

namespace tidemark {

IdlenessTimer::IdlenessTimer(const RelativeClock& clock, std::chrono::milliseconds timeout)
    : clock_(clock), timeout_(timeout) {
  if (timeout.count() <= 0) {
    throw InvalidArgument(
        fmt::format("idleness timeout must be greater than 0 ms, got {} ms", timeout.count()));
  }
  max_idle_nanos_ = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
}

bool IdlenessTimer::CheckIfIdle() {
  if (counter_ != last_counter_) {
    // Activity since the last check: not idle, and no countdown until the next quiet check.
    last_counter_ = counter_;
    start_of_inactivity_nanos_ = 0;
    return false;
  }
  if (start_of_inactivity_nanos_ == 0) {
    start_of_inactivity_nanos_ = clock_.GetRelativeTimeNanos();
    return false;
  }
  return clock_.GetRelativeTimeNanos() - start_of_inactivity_nanos_ > max_idle_nanos_;
}

WatermarksWithIdleness::WatermarksWithIdleness(std::unique_ptr<WatermarkGenerator> inner,
                                               std::chrono::milliseconds timeout,
                                               const RelativeClock& clock)
    : inner_(std::move(inner)), timer_(clock, timeout) {
  TM_CHECK(inner_ != nullptr, "WatermarksWithIdleness needs a generator to wrap");
}

void WatermarksWithIdleness::OnEvent(const StreamRecord& record, Timestamp event_timestamp,
                                     WatermarkOutput& output) {
  inner_->OnEvent(record, event_timestamp, output);
  timer_.Activity();
  idle_now_ = false;
}

void WatermarksWithIdleness::OnPeriodicEmit(WatermarkOutput& output) {
  if (timer_.CheckIfIdle()) {
    if (!idle_now_) {
      output.MarkIdle();
      idle_now_ = true;
    }
  } else {
    inner_->OnPeriodicEmit(output);
  }
}

}  // namespace tidemark

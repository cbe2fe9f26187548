#include "runtime/eventtime/bounded_out_of_orderness_watermarks.h"

#include <algorithm>

#include "runtime/core/errors.h"

namespace tidemark {

BoundedOutOfOrdernessWatermarks::BoundedOutOfOrdernessWatermarks(
    std::chrono::milliseconds max_out_of_orderness)
    : out_of_orderness_ms_(max_out_of_orderness.count()) {
  if (out_of_orderness_ms_ < 0) {
    throw InvalidArgument(
        fmt::format("max out-of-orderness must not be negative, got {} ms", out_of_orderness_ms_));
  }
  // MIN + B + 1 never overflows for B >= 0 (B <= MAX), and MIN + B + 1 - B - 1 == MIN exactly.
  max_timestamp_ = kMinTimestamp + out_of_orderness_ms_ + 1;
}

void BoundedOutOfOrdernessWatermarks::OnEvent(const StreamRecord& /*record*/,
                                              Timestamp event_timestamp,
                                              WatermarkOutput& /*output*/) {
  max_timestamp_ = std::max(max_timestamp_, event_timestamp);
}

void BoundedOutOfOrdernessWatermarks::OnPeriodicEmit(WatermarkOutput& output) {
  output.EmitWatermark(Watermark{CurrentWatermark()});
}

SqlIntervalWatermarks::SqlIntervalWatermarks(std::chrono::milliseconds interval)
    : interval_ms_(interval.count()) {
  if (interval_ms_ < 0) {
    throw InvalidArgument(
        fmt::format("the watermark interval must not be negative, got {} ms", interval_ms_));
  }
}

void SqlIntervalWatermarks::OnEvent(const StreamRecord& /*record*/, Timestamp event_timestamp,
                                    WatermarkOutput& /*output*/) {
  // Saturating ts - d: a timestamp within d of MIN gives MIN, not a wrapped value.
  current_ = event_timestamp < kMinTimestamp + interval_ms_ ? kMinTimestamp
                                                            : event_timestamp - interval_ms_;
}

void SqlIntervalWatermarks::OnPeriodicEmit(WatermarkOutput& output) {
  output.EmitWatermark(Watermark{current_});
}

}  // namespace tidemark

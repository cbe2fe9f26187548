#pragma once

#include "runtime/eventtime/watermark_generator.h"

namespace tidemark {

/// A generator that never emits a watermark. Mirrors Flink's `NoWatermarksGenerator`
/// (`WatermarkStrategy.noWatermarks()`), which is also what batch execution uses. Event time then
/// only advances with the final `kMaxTimestamp` at end of input. Stateless; mailbox thread only.
class NoWatermarksGenerator final : public WatermarkGenerator {
 public:
  void OnEvent(const StreamRecord& /*record*/, Timestamp /*event_timestamp*/,
               WatermarkOutput& /*output*/) override {}
  void OnPeriodicEmit(WatermarkOutput& /*output*/) override {}
  bool InspectsRecordOnEvent() const override { return false; }
};

}  // namespace tidemark

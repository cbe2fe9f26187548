#pragma once

// Test support for tests/unit/runtime/eventtime: a WatermarkOutput that records every call.

#include <string>
#include <vector>

#include "runtime/core/timestamp.h"
#include "runtime/eventtime/watermark_output.h"

namespace tidemark::testing {

/// Records calls as strings: "wm:<ts>", "idle", "active". Single-threaded.
class RecordingWatermarkOutput : public WatermarkOutput {
 public:
  void EmitWatermark(Watermark watermark) override {
    calls.push_back("wm:" + (watermark.timestamp == kMinTimestamp ? std::string("MIN")
                             : watermark.timestamp == kMaxTimestamp
                                 ? std::string("MAX")
                                 : std::to_string(watermark.timestamp)));
  }
  void MarkIdle() override { calls.emplace_back("idle"); }
  void MarkActive() override { calls.emplace_back("active"); }

  /// Returns and forgets the calls so far.
  std::vector<std::string> Take() {
    std::vector<std::string> out;
    out.swap(calls);
    return out;
  }

  std::vector<std::string> calls;
};

}  // namespace tidemark::testing

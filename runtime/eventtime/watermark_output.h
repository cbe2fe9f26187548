#pragma once

#include "runtime/core/watermark.h"

namespace tidemark {

/// Where a `WatermarkGenerator` sends watermarks and idleness. Mirrors Flink's `WatermarkOutput`.
/// Implementations decide de-duplication (e.g. only strictly increasing watermarks leave a source).
/// Threading: the owning task's mailbox thread only.
class WatermarkOutput {
 public:
  virtual ~WatermarkOutput() = default;
  virtual void EmitWatermark(Watermark watermark) = 0;
  /// The stream will carry no watermarks for now; downstream leaves it out of its minimum.
  virtual void MarkIdle() = 0;
  /// The stream carries watermarks again (without emitting one).
  virtual void MarkActive() = 0;
};

}  // namespace tidemark

#pragma once

#include <string>

#include "runtime/core/timestamp.h"

namespace tidemark {

/// A promise that no record with timestamp <= `timestamp` follows on this stream.
/// Mirrors Flink's `org.apache.flink.streaming.api.watermark.Watermark`. Value type, freely copied.
struct Watermark {
  Timestamp timestamp = kMinTimestamp;

  friend bool operator==(const Watermark&, const Watermark&) = default;
};

/// Whether a stream currently carries watermarks. An IDLE input is left out of the minimum taken
/// by `StatusWatermarkValve` and `WatermarkOutputMultiplexer`. Mirrors Flink's `WatermarkStatus`.
enum class WatermarkStatus { kActive, kIdle };

inline const char* ToString(WatermarkStatus s) {
  return s == WatermarkStatus::kIdle ? "IDLE" : "ACTIVE";
}

}  // namespace tidemark

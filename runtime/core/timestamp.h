#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace tidemark {

/// Event time and processing time: signed milliseconds since the Unix epoch.
/// Mirrors Flink's use of `long` timestamps. `kMinTimestamp` (Long.MIN_VALUE) means "no watermark
/// yet", `kMaxTimestamp` (Long.MAX_VALUE) means "end of input": every event-time timer fires.
using Timestamp = int64_t;

inline constexpr Timestamp kMinTimestamp = std::numeric_limits<int64_t>::min();
inline constexpr Timestamp kMaxTimestamp = std::numeric_limits<int64_t>::max();

/// Formats a timestamp the way the experiment prints it: `MIN`, `MAX`, or seconds with milliseconds
/// and trailing zeros removed (`9149` -> `9.149s`, `5000` -> `5s`, `-1500` -> `-1.5s`).
std::string FormatSeconds(Timestamp ts);

/// Saturating `a + b` for event-time arithmetic (never wraps past MIN / MAX).
constexpr Timestamp SaturatingAdd(Timestamp a, int64_t b) {
  Timestamp out = 0;
  if (__builtin_add_overflow(a, b, &out)) {
    return b > 0 ? kMaxTimestamp : kMinTimestamp;
  }
  return out;
}

}  // namespace tidemark

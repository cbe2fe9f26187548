#pragma once

#include <utility>

#include "runtime/core/row.h"
#include "runtime/core/timestamp.h"

namespace tidemark {

/// The event time (ms) an int64 cell holds, or null when the cell is not an int64 or holds
/// Long.MIN_VALUE, the "no timestamp" marker. The per-record fast path of millisecond timestamp and
/// watermark fields; every other value goes through the general conversion
/// (ValueToEventTimeMillis), which applies the same marker rule.
inline const int64_t* EventTimeMillisOrNull(const Value& cell) {
  const int64_t* ms = std::get_if<int64_t>(&cell);
  return ms != nullptr && *ms != kMinTimestamp ? ms : nullptr;
}

/// One record on a stream: its row and, once assigned, its event timestamp (ms).
/// Mirrors Flink's `StreamRecord`. Moved, not copied, along a chain; operators may modify it in place.
struct StreamRecord {
  Row row;
  Timestamp timestamp = kMinTimestamp;
  bool has_timestamp = false;

  StreamRecord() = default;
  explicit StreamRecord(Row r) : row(std::move(r)) {}
  StreamRecord(Row r, Timestamp ts) : row(std::move(r)), timestamp(ts), has_timestamp(true) {}

  void SetTimestamp(Timestamp ts) {
    timestamp = ts;
    has_timestamp = true;
  }
  void EraseTimestamp() {
    timestamp = kMinTimestamp;
    has_timestamp = false;
  }
};

}  // namespace tidemark

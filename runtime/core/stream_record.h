#pragma once

#include <utility>

#include "runtime/core/row.h"
#include "runtime/core/timestamp.h"

namespace tidemark {

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

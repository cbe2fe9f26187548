#pragma once

#include <utility>

#include "runtime/core/row.h"
#include "runtime/core/timestamp.h"

namespace tidemark {

/// Whether `slot` is an int64 or timestamp slot of `row` (a bounds and type check for paths that
/// read a slot compiled against a schema from rows that tests may build by hand).
inline bool IsInt64Slot(const Row& row, int slot) {
  if (slot < 0 || static_cast<size_t>(slot) >= row.size()) {
    return false;
  }
  const FieldType t = row.type(static_cast<size_t>(slot));
  return t == FieldType::kInt64 || t == FieldType::kTimestamp;
}

/// The int64 that slot `slot` of `row` holds: false when the slot is out of range, not an int64
/// or timestamp slot, or NULL.
inline bool Int64Cell(const Row& row, int slot, int64_t* out) {
  if (!IsInt64Slot(row, slot) || row.IsNull(static_cast<size_t>(slot))) {
    return false;
  }
  *out = row.GetInt64(static_cast<size_t>(slot));
  return true;
}

/// The event time (ms) that int64 / timestamp cell `slot` of `row` holds: false when the cell is
/// NULL or holds Long.MIN_VALUE, the "no timestamp" marker. The per-record fast path of
/// millisecond timestamp and watermark fields; every other type goes through the general
/// conversion (ValueToEventTimeMillis), which applies the same marker rule.
/// Precondition: the slot is an int64 or timestamp slot of the row's layout.
inline bool EventTimeMillis(const Row& row, size_t slot, int64_t* ms) {
  if (row.IsNull(slot)) {
    return false;
  }
  *ms = row.GetInt64(slot);
  return *ms != kMinTimestamp;
}

/// One record on a stream: its row and, once assigned, its event timestamp (ms).
/// Mirrors Flink's `StreamRecord`. Moved, not copied, along a chain; operators may modify it in
/// place.
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

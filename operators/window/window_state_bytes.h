#pragma once

#include <cstdint>

#include "operators/window/window_aggregates.h"
#include "runtime/core/key.h"
#include "runtime/core/row.h"
#include "runtime/core/stream_record.h"

namespace tidemark {

/// The byte model of a window operator's state, shared by its `stateBytes` gauge and by
/// `tidemark analyze`'s estimate (seed 002 §4.3), so that the two figures count the same thing:
/// the payload held per pane, not allocator or hash-table overhead.
///
/// - a value: `sizeof(Value)`, plus a string's characters;
/// - a buffered element (ListState): `sizeof(StreamRecord)` plus its row's values;
/// - an incremental pane (one key's accumulators of one window or slice): the key's values plus
///   one `AggregateAccumulator` per aggregate.
inline int64_t ValueStateBytes(const Value& value) {
  int64_t bytes = static_cast<int64_t>(sizeof(Value));
  if (const auto* s = std::get_if<std::string>(&value)) {
    bytes += static_cast<int64_t>(s->size());
  }
  return bytes;
}

inline int64_t RowStateBytes(const Row& row) {
  int64_t bytes = static_cast<int64_t>(row.size() * sizeof(Value));
  for (size_t i = 0; i < row.size(); ++i) {
    if (row.type(i) == FieldType::kString && !row.IsNull(i)) {
      bytes += static_cast<int64_t>(row.GetString(i).size());
    }
  }
  return bytes;
}

inline int64_t RowStateBytes(const Key& key) {
  int64_t bytes = 0;
  for (const Value& v : key) {
    bytes += ValueStateBytes(v);
  }
  return bytes;
}

inline int64_t ElementStateBytes(const StreamRecord& record) {
  return static_cast<int64_t>(sizeof(StreamRecord)) + RowStateBytes(record.row);
}

inline int64_t PaneStateBytes(int64_t key_bytes, size_t num_aggregates) {
  return key_bytes + static_cast<int64_t>(num_aggregates * sizeof(AggregateAccumulator));
}

}  // namespace tidemark

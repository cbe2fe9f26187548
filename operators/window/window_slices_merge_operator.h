#pragma once

// The RocksDB merge operator of the window operator's "window-slices" column family (RocksDB
// state backend, sliced path; see window_operator_rocksdb.cc).

#include <memory>

#include "operators/window/window_aggregates.h"

namespace rocksdb {
class MergeOperator;
}  // namespace rocksdb

namespace tidemark {

/// A merge operator over values in the layout of `WindowOperator::EncodeSlicedKey` (the drop
/// time of the key's last slice, the slice count, the slice starts, the next firing, the timer
/// time, each slice's `num_accs` accumulators in their general form). Merging two values gives
/// the union of their slices by start, the accumulators of slices with equal starts merged as
/// `SliceAggregates::Merge` (the firing's merge of slices, so the result is bit for bit what one
/// state holding every record gives: the sliced path's aggregates merge exactly), the later drop
/// time and the earlier next firing and timer (`kMinTimestamp`: none). Full and partial merges
/// are the same fold, in operand order.
///
/// The window operator writes an evicted key's partial state (its slices from the records since
/// the key was last in memory) as a merge operand, without reading the key first. Thread-safe (it
/// runs on RocksDB's flush and compaction threads too): it keeps a copy of `aggregates` and a
/// string pool per call. A value that does not decode fails the merge (RocksDB reports it as a
/// corruption to the read). Mirrors no Flink class (Flink's RocksDB window state reads a key on
/// every record).
std::shared_ptr<rocksdb::MergeOperator> NewWindowSlicesMergeOperator(
    const SliceAggregates& aggregates, size_t num_accs);

}  // namespace tidemark

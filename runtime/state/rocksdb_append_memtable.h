#pragma once

#include <memory>

namespace rocksdb {
class MemTableRepFactory;
}  // namespace rocksdb

namespace tidemark {

/// A RocksDB memtable for column families written in long runs of appends with no reads between
/// (`RocksDbKeyedStore::Options::append_only_column_families`): like RocksDB's `VectorRep`, an
/// insert appends and the memtable is sorted once, by the first iterator over it (the flush
/// thread's, as a rule), but each entry is kept beside the first 8 bytes of its user key
/// (big-endian, zero-padded) and the sort compares those, decoding the entries only when two
/// share them. RocksDB's `VectorRep` sorts pointers with the memtable's comparator: a virtual call,
/// a thread-local perf counter and two cache misses per comparison, ~half of the flush thread's
/// time in the spilled tumbling job.
///
/// Requires the column family's comparator to be RocksDB's default (bytewise user keys; internal
/// keys ordered by user key, then sequence number and type descending), which is what the sort
/// reproduces; reads (`Seek`) use the memtable's own comparator. Memory: 16 bytes an entry
/// beside the entry itself in the memtable's arena (reported by `ApproximateMemoryUsage`), and a
/// copy of them for an iterator over a memtable still being written (a read of the mutable
/// memtable; the store flushes before its reads, so rarely). Threading: one writer at a time
/// (concurrent memtable writes off); iterators and `ApproximateMemoryUsage` from any thread.
std::shared_ptr<rocksdb::MemTableRepFactory> NewAppendOnlyMemTableFactory();

}  // namespace tidemark

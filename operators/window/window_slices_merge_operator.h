#pragma once

// The RocksDB merge operator of the window operator's "window-slices" column family (RocksDB
// state backend, sliced path; see window_operator_rocksdb.cc).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

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

// ---- The compact layout (column family "window-slices-compact") ----
//
// For aggregates whose words hold no strings (`!SliceAggregates::has_strings()`, e.g. count, sum,
// min, max of numbers) a key's value is its slices' narrow words themselves, as varints, without
// the general layout's fixed-width header and general accumulators (a count's key: ~6 bytes
// instead of 69): a format byte (kCompactSlicesFormat), the slice count, the first start
// (zigzag), the next firing and the timer time (0: none, else 1 + the zigzag of their distance
// from the first start), then per slice its distance from the previous start (the first: none)
// and its `words` words. The drop time is not stored: it is the operator's drop time of the last
// start. The column family's name carries the layout, so a native checkpoint written with the
// general layout ("window-slices") restores and goes on in it.

/// The sliced path's column families: the general layout's and the compact one's.
extern const char* const kSlicesColumnFamily;
extern const char* const kCompactSlicesColumnFamily;

/// The format byte every compact value starts with.
inline constexpr uint8_t kCompactSlicesFormat = 1;

/// Appends the compact value of `n` (>= 1) slices with ascending starts `starts`, their words
/// (`words` per slice, slice after slice) and the key's next firing and timer time
/// (`kMinTimestamp`: none) to `out`.
void AppendCompactSlices(const Timestamp* starts, size_t n, Timestamp next_fire, Timestamp timer,
                         const uint64_t* words, size_t words_per_slice, std::string* out);

/// Reads a compact value slice by slice. Errors: a value that does not decode (truncated, an
/// unknown format byte, no slices) makes `ok()` false; nothing throws or allocates.
class CompactSlicesReader {
 public:
  CompactSlicesReader(std::string_view bytes, size_t words_per_slice);
  bool ok() const { return ok_; }
  size_t slices() const { return slices_; }
  Timestamp next_fire() const { return next_fire_; }
  Timestamp timer() const { return timer_; }
  /// The next slice's start and words (`words_per_slice` of them into `words`); false after the
  /// last one or on an error (then `ok()` is false).
  bool Next(Timestamp* start, uint64_t* words);
  /// As `Next`, the words skipped.
  bool Skip(Timestamp* start) { return Next(start, nullptr); }
  /// True when every slice was read and nothing follows.
  bool AtEnd() const { return ok_ && read_ == slices_ && at_ == bytes_.size(); }

 private:
  bool ReadVarint(uint64_t* v);
  std::string_view bytes_;
  size_t words_;
  size_t at_ = 0;
  bool ok_ = true;
  size_t slices_ = 0;
  size_t read_ = 0;
  Timestamp start_ = 0;
  Timestamp next_fire_ = kMinTimestamp;
  Timestamp timer_ = kMinTimestamp;
};

/// The merge operator of "window-slices-compact": the same merge as `NewWindowSlicesMergeOperator`
/// (slices united by start, equal ones' words merged by `SliceAggregates::Merge` in operand order,
/// the earlier next firing and timer) on compact values, with per-thread scratch buffers (no
/// allocation per merge once warm). Requires `!aggregates.has_strings()`. Thread-safe.
std::shared_ptr<rocksdb::MergeOperator> NewCompactWindowSlicesMergeOperator(
    const SliceAggregates& aggregates);

}  // namespace tidemark

#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/core/key.h"
#include "runtime/core/row.h"
#include "runtime/state/rocksdb_keyed_store.h"
#include "runtime/task/stream_operator.h"
#include "runtime/time/internal_timer_service.h"

namespace tidemark {

/// Joins two keyed streams on event time: a left element at `l` and a right element at `r` of
/// the same key match iff `l + lower <= r <= l + upper` (bounds made inclusive at construction).
/// Mirrors Flink's `IntervalJoinOperator`.
///
/// - Input 0 is the left stream, input 1 the right. Each element is buffered per key and
///   timestamp and joined with the other side's buffered elements in range; each result is
///   stamped `max(l, r)`.
/// - Event time is the minimum of the two inputs' watermarks (forwarded only when it advances).
///   An element with `timestamp < current watermark` is late: not buffered nor joined, but sent
///   to the side's late output tag when one is set (else dropped and counted).
/// - Buffered elements are removed by an event-time timer at `ts + relative upper bound` when
///   that bound is > 0, else at `ts` (left: upper; right: -lower).
/// - A record without timestamp throws `NoTimestamp`.
///
/// State backend: with `pipeline.state-backend: rocksdb` (and both input layouts known) the
/// buffered rows live in a `RocksDbKeyedStore` of this subtask (column family
/// "interval-join-buffers", one entry a key with both sides' rows, keys prefixed by key group)
/// under a bounded in-memory cache of hot keys (half of `rocksdb.memory.fixed-per-slot`, ~512
/// bytes a key), as Flink's `RocksDBKeyedStateBackend` holds the join's `MapState`s; timers stay
/// on the heap. Snapshots are the same bytes on both backends.
///
/// Threading: mailbox thread only. Ownership: owns its buffers, timer service and RocksDB
/// instance (from `Open`, removed at `Close`). Errors: a RocksDB failure throws `Error` naming
/// its directory.
class IntervalJoinOperator : public StreamOperator, public Triggerable<int>, public KeyContext {
 public:
  /// Produces the result rows for one matching pair (`left_ts`, `right_ts` in ms).
  using JoinFunction = std::function<void(const Row& left, const Row& right, Timestamp left_ts,
                                          Timestamp right_ts, std::vector<Row>& out)>;

  struct Options {
    int64_t lower_bound_ms = 0;
    bool lower_inclusive = true;
    int64_t upper_bound_ms = 0;
    bool upper_inclusive = true;
    std::vector<int> left_key_slots;   ///< empty: one key for all records
    std::vector<int> right_key_slots;  ///< same length and meaning as `left_key_slots`
    std::string left_late_output_tag;  ///< empty: drop late left elements
    std::string right_late_output_tag;
    /// The inputs' row layouts: what buffered rows are restored into from a snapshot. Null
    /// (operators built by hand): a snapshot with buffered rows fails to restore.
    const RowLayout* left_layout = nullptr;
    const RowLayout* right_layout = nullptr;
  };

  /// `join` may be empty: the result row is the left row's fields followed by the right row's.
  /// Throws `InvalidArgument` unless lower <= upper after making the bounds inclusive.
  IntervalJoinOperator(Options options, JoinFunction join);
  ~IntervalJoinOperator() override;

  void Open(const OperatorContext& context) override;
  void ProcessElement(StreamRecord& record, int input) override;
  void ProcessWatermark(Watermark watermark, int input) override;
  void Close() override;
  int NumInputs() const override { return 2; }
  /// Section "interval-join" (version 1): the inputs' and the combined watermark, the late
  /// count, then per key group (`WriteKeyGroups`) each key's buffered left and right rows by
  /// timestamp and its cleanup timers. Restore keeps the key groups this subtask owns.
  void SnapshotState(StateSnapshotContext& context) override;
  void InitializeState(StateInitializationContext& context) override;

  void OnEventTime(const InternalTimer<int>& timer) override;
  /// numLateRecordsDropped (late elements of a side without a late output tag), and the note
  /// firstLateRecordDropped (its timestamp and the watermark then) once there is one.
  void CollectMetrics(MetricsWriter& out) const override;
  void OnProcessingTime(const InternalTimer<int>& /*timer*/) override {}

  void SetCurrentKey(const Key& key) override { current_key_ = key; }
  const Key& GetCurrentKey() const override { return current_key_; }

  /// Inclusive bounds in effect.
  int64_t lower_bound() const { return lower_; }
  int64_t upper_bound() const { return upper_; }
  /// Timestamps still buffered for `key` on input `input` (0 left, 1 right), ascending. On the
  /// RocksDB backend only a key in the in-memory cache shows its timestamps.
  std::vector<Timestamp> BufferedTimestamps(const Key& key, int input) const;
  int64_t num_late_records_dropped() const { return num_late_records_dropped_; }
  /// True when the buffers are on RocksDB (between Open and Close); times the in-memory key
  /// cache was written out, keys read back.
  bool uses_rocksdb() const { return rocks_ != nullptr; }
  int64_t rocksdb_spills() const { return rocks_spills_; }
  int64_t rocksdb_keys_read() const { return rocks_keys_read_; }
  /// RocksDB backend: the most keys the in-memory cache held at once (seen before each write-out,
  /// at each snapshot and after a restore): at most the cache's budget + 1, snapshots and
  /// restores included. And the most spilled keys a snapshot held in memory at once (one key
  /// group's, rocksdb_snapshot_stream.h).
  int64_t rocksdb_peak_cached_keys() const { return rocks_peak_cached_keys_; }
  int64_t rocksdb_snapshot_peak_group_keys() const { return rocks_snapshot_peak_group_keys_; }
  /// RocksDB backend: how many keys the in-memory cache may hold (0 on the heap backend).
  size_t rocksdb_cache_keys() const { return rocks_cache_keys_; }

 private:
  using Buffer = std::map<Timestamp, std::vector<Row>>;
  struct KeyState {
    Buffer left;
    Buffer right;
  };

  Options options_;
  JoinFunction join_;
  int64_t lower_;
  int64_t upper_;
  Key current_key_;
  std::unique_ptr<InternalTimerService<int>> timer_service_;
  std::unordered_map<Key, KeyState, KeyHash> state_;
  Timestamp input_watermarks_[2] = {kMinTimestamp, kMinTimestamp};
  Timestamp combined_watermark_ = kMinTimestamp;
  std::vector<Row> results_;
  int64_t num_late_records_dropped_ = 0;
  // The first late element dropped: its timestamp and the watermark then (not snapshotted).
  std::optional<std::pair<Timestamp, Timestamp>> first_late_dropped_;
  // The default join's output layout, for the last pair of input layouts seen.
  const RowLayout* joined_left_ = nullptr;
  const RowLayout* joined_right_ = nullptr;
  const RowLayout* joined_ = nullptr;

  void ConcatRows(const Row& left, const Row& right, std::vector<Row>& out);

  // RocksDB state backend (the end of interval_join_operator.cc): `state_` is a cache of hot
  // keys over `rocks_`; a key's buffers are in exactly one of them. Read back (and deleted from
  // RocksDB) before an element or timer of the key; the whole cache is written out in one batch
  // once it holds more than `rocks_cache_keys_` keys. A snapshot copies the spilled keys from
  // RocksDB one key group at a time, a restore puts the keys past the budget straight into
  // RocksDB (rocksdb_snapshot_stream.h): neither reads every key into memory.
  void OpenRocksDb();
  void FaultInCurrentKey();
  void MaybeSpill();
  void NotePeakCachedKeys();
  bool rocks_has_keys() const { return rocks_ && rocks_->num_puts(rocks_cf_) > 0; }
  std::unique_ptr<RocksDbKeyedStore> rocks_;  // null on the heap backend
  int rocks_cf_ = -1;
  size_t rocks_cache_keys_ = 0;
  int64_t rocks_spills_ = 0;
  int64_t rocks_keys_read_ = 0;
  int64_t rocks_peak_cached_keys_ = 0;
  int64_t rocks_snapshot_peak_group_keys_ = 0;
  std::string rocks_value_;  // scratch: a key's encoded buffers
};

}  // namespace tidemark

#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/core/key.h"
#include "runtime/core/row.h"
#include "runtime/state/rocksdb_keyed_store.h"
#include "runtime/task/stream_operator.h"
#include "runtime/time/internal_timer_service.h"

namespace tidemark {

class KeyedProcessOperator;

/// Which clock a timer belongs to (Flink's TimeDomain).
enum class TimeDomain { kEventTime, kProcessingTime };

/// What a keyed process function sees in `ProcessElement` and `OnTimer`: the current key and
/// timestamp, timers, keyed state of the current key, and the outputs. Mirrors Flink's
/// KeyedProcessFunction.Context / OnTimerContext with its TimerService and ValueState.
///
/// Keyed state is a set of named values per key (`State("seen")`), kept until cleared.
/// Timers are deduplicated per (time, key); an event-time timer fires when a watermark >= its
/// time arrives — never at registration, even if its time is already behind the watermark
/// (it then fires at the *next* watermark). Processing-time timers fire from the operator's
/// ProcessingTimeService. Threading: the task's mailbox thread; valid only during the call.
class ProcessContext {
 public:
  /// The element's timestamp, or the timer's time in `OnTimer`; kMinTimestamp if none.
  Timestamp timestamp() const { return timestamp_; }
  /// In `OnTimer`: the firing timer's domain.
  TimeDomain time_domain() const { return domain_; }
  const Key& current_key() const;
  /// The input of the element (0 or 1 for a two-input function); -1 in `OnTimer`.
  int input() const { return input_; }

  Timestamp CurrentWatermark() const;
  Timestamp CurrentProcessingTime() const;
  void RegisterEventTimeTimer(Timestamp time);
  void RegisterProcessingTimeTimer(Timestamp time);
  void DeleteEventTimeTimer(Timestamp time);
  void DeleteProcessingTimeTimer(Timestamp time);

  /// The current key's state named `name`, or nullptr when unset.
  const Value* State(std::string_view name) const;
  void SetState(std::string_view name, Value value);
  void ClearState(std::string_view name);

  /// Broadcast state (Flink's `getBroadcastState` of a KeyedBroadcastProcessFunction): named
  /// values per subtask, not per key, the same on every subtask because every subtask receives
  /// the whole broadcast input. Any element or timer may read it; only the broadcast input's
  /// elements may write it (`SetBroadcastState` elsewhere throws InvalidArgument), so the copies
  /// never diverge. Snapshotted only when `Options::broadcast_input` is set.
  const Value* BroadcastState(std::string_view name) const;
  void SetBroadcastState(std::string_view name, Value value);

  /// The layout of the operator's output schema (null when the operator was built without one):
  /// a row built in it (`Row(layout)` and the typed setters) is emitted without a conversion.
  const RowLayout* output_layout() const;
  /// Emits `row` (of the operator's output schema) stamped `timestamp`.
  void Collect(Row row, Timestamp timestamp);
  /// Emits `row` without a timestamp (Flink erases it for what a processing-time timer emits).
  void Collect(Row row);
  /// Emits on the side output `tag`.
  void CollectSide(std::string_view tag, Row row, Timestamp timestamp);

 private:
  friend class KeyedProcessOperator;
  explicit ProcessContext(KeyedProcessOperator& op) : op_(op) {}
  KeyedProcessOperator& op_;
  Timestamp timestamp_ = kMinTimestamp;
  TimeDomain domain_ = TimeDomain::kEventTime;
  int input_ = 0;
};

/// User logic over a keyed stream with timers and keyed state. Mirrors Flink's
/// KeyedProcessFunction. One instance per subtask, serving all keys; keep per-key data in the
/// context's state, not in members (members are fine for per-subtask data).
/// Threading: mailbox thread only.
class KeyedProcessFunction {
 public:
  virtual ~KeyedProcessFunction() = default;
  /// Called once before the first element.
  virtual void Open(const OperatorContext& /*context*/) {}
  virtual void ProcessElement(const StreamRecord& record, ProcessContext& ctx) = 0;
  virtual void OnTimer(Timestamp /*timestamp*/, ProcessContext& /*ctx*/) {}
};

/// User logic over two connected keyed streams (`connect` then `keyBy`). Mirrors Flink's
/// KeyedCoProcessFunction; the state and timers are shared by both inputs of a key.
class KeyedCoProcessFunction {
 public:
  virtual ~KeyedCoProcessFunction() = default;
  virtual void Open(const OperatorContext& /*context*/) {}
  virtual void ProcessElement1(const StreamRecord& record, ProcessContext& ctx) = 0;
  virtual void ProcessElement2(const StreamRecord& record, ProcessContext& ctx) = 0;
  virtual void OnTimer(Timestamp /*timestamp*/, ProcessContext& /*ctx*/) {}
};

/// Runs a `KeyedProcessFunction` (one input) or a `KeyedCoProcessFunction` (two inputs).
/// Mirrors Flink's KeyedProcessOperator / KeyedCoProcessOperator.
///
/// Watermarks of two inputs combine as Flink's `AbstractStreamOperator#processWatermark(mark,
/// index)` / `#processWatermarkStatus(status, index)` combine them through
/// `IndexedCombinedWatermarkStatus` / `CombinedWatermarkStatus` (SEMANTICS.md §3), recomputed on
/// every watermark and on every status change of an input:
/// - the operator's event time is the minimum over the inputs that are not idle; an idle input is
///   left out; when every input is idle it is the maximum over them; it only moves forward;
/// - the operator is IDLE iff every input is idle; a status change is emitted after the
///   watermark the same change released (the maximum, before IDLE).
/// With design.md's decided rules on top:
/// - an input marked `excluded_from_min` (a broadcast input under the default
///   `broadcast-watermarks: exclude`) takes no part: its watermarks and statuses are recorded but
///   move neither the event time nor the status; the operator reaches MAX (end of input) only once
///   that input has also reached MAX. With `include` the broadcast input is an input like the
///   other (Flink), so an idle broadcast input is left out of the minimum;
/// - a finished input (its watermark is MAX) leaves the minimum and the idleness decision, unless
///   `pipeline.finished-input: max` (Flink: it counts as an active input at MAX); MAX comes only
///   when every input has finished.
/// Timers <= the new watermark fire first, then the watermark is forwarded.
/// A record without timestamp is processed with timestamp kMinTimestamp.
///
/// State backend: with `pipeline.state-backend: rocksdb` the keyed values live in a
/// `RocksDbKeyedStore` of this subtask (column family "process-state", one entry a key, keys
/// prefixed by key group) under a bounded in-memory cache of hot keys (half of
/// `rocksdb.memory.fixed-per-slot`, ~256 bytes a key); timers and broadcast state stay on the
/// heap (Flink's `RocksDBKeyedStateBackend` with `timer-service.factory: HEAP`). Snapshots are
/// the same bytes on both backends. A RocksDB failure throws `Error` naming its directory.
/// Ownership: owns the function and its RocksDB instance (removed at Close). Threading: mailbox
/// thread only.
class KeyedProcessOperator : public StreamOperator,
                             public Triggerable<VoidNamespace>,
                             public KeyContext {
 public:
  struct Options {
    /// Key slots per input (input 1's only with two inputs); empty: one key for all records.
    std::vector<int> key_slots[2];
    bool excluded_from_min[2] = {false, false};
    /// The broadcast input's index (0 or 1) when one input is broadcast, else -1. It decides
    /// which input may write broadcast state and that the snapshot carries it.
    int broadcast_input = -1;
    /// The output schema's layout. A row the function emits in another layout (a `Row{...}`
    /// whose types were inferred from its values) is converted to it as `Row::Set` converts
    /// (a NULL fits any type, an int64 a double field); one that cannot be (another number of
    /// fields, a string for a number) fails the task with an `Error` naming both. Null: rows go
    /// on as emitted.
    const RowLayout* output_layout = nullptr;
  };

  KeyedProcessOperator(std::unique_ptr<KeyedProcessFunction> function, Options options);
  KeyedProcessOperator(std::unique_ptr<KeyedCoProcessFunction> function, Options options);
  ~KeyedProcessOperator() override;

  void Open(const OperatorContext& context) override;
  void ProcessElement(StreamRecord& record, int input) override;
  void ProcessWatermark(Watermark watermark, int input) override;
  void ProcessWatermarkStatus(WatermarkStatus status, int input) override;
  void Close() override;
  int NumInputs() const override { return co_function_ ? 2 : 1; }
  /// Section "keyed-process" (version 1): the inputs' and the combined watermark, idleness and
  /// status, then per key group (`WriteKeyGroups`) each key's named state values and its event-
  /// and processing-time timers (the dedup and inactivity built-ins keep everything there).
  /// Restore keeps the key groups this subtask owns. With a broadcast input, a section
  /// "broadcast-state" (version 1) follows with the broadcast state (every subtask's copy is the
  /// same, so after a rescale each new subtask takes it whole). State a function keeps in its own
  /// members is not snapshotted.
  void SnapshotState(StateSnapshotContext& context) override;
  void InitializeState(StateInitializationContext& context) override;

  void OnEventTime(const InternalTimer<VoidNamespace>& timer) override;
  void OnProcessingTime(const InternalTimer<VoidNamespace>& timer) override;
  void SetCurrentKey(const Key& key) override { current_key_ = key; }
  const Key& GetCurrentKey() const override { return current_key_; }

  /// Valid between Open and Close.
  const InternalTimerService<VoidNamespace>& timer_service() const { return *timer_service_; }

  /// True when the keyed state is on RocksDB (`pipeline.state-backend: rocksdb`, between Open
  /// and Close). RocksDB backend: times the in-memory key cache was written out, keys read back.
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
  friend class ProcessContext;
  void FireTimer(const InternalTimer<VoidNamespace>& timer, TimeDomain domain);
  // Converts `row` to `options_.output_layout` when it has another (see Options).
  void FitOutput(Row& row) const;
  // Two inputs: recomputes the combined watermark and status from the inputs' (class comment),
  // fires timers and forwards the watermark if it advanced, then the status if it changed.
  void UpdateCombinedWatermark();

  // RocksDB state backend (the end of keyed_process_operator.cc). `state_` is a cache of hot
  // keys over `rocks_`, column family "process-state": a key's named values are in exactly one
  // of them. Before the function sees a key (a record or a timer) its values are read back (and
  // deleted from RocksDB); after it, a cache holding more than `rocks_cache_keys_` keys is
  // written to RocksDB in one batch and emptied. A snapshot copies the spilled keys from
  // RocksDB one key group at a time and a restore puts the keys past the cache's budget straight
  // into RocksDB (rocksdb_snapshot_stream.h), so neither reads every key into memory. Timers stay
  // on the heap (Flink's `state.backend.rocksdb.timer-service.factory: HEAP`).
  void OpenRocksDb();
  // Reads the current key's values back from RocksDB when the cache does not hold the key; a
  // key RocksDB does not hold either gets an empty entry (resident, no values yet).
  void FaultInCurrentKey();
  void MaybeSpill();
  void NotePeakCachedKeys();
  bool rocks_has_keys() const { return rocks_ && rocks_->num_puts(rocks_cf_) > 0; }

  std::unique_ptr<KeyedProcessFunction> function_;
  std::unique_ptr<KeyedCoProcessFunction> co_function_;
  Options options_;
  Key current_key_;
  std::unique_ptr<InternalTimerService<VoidNamespace>> timer_service_;
  std::unordered_map<Key, std::map<std::string, Value, std::less<>>, KeyHash> state_;
  std::map<std::string, Value, std::less<>> broadcast_state_;
  ProcessContext ctx_;
  Timestamp input_watermarks_[2] = {kMinTimestamp, kMinTimestamp};
  Timestamp combined_watermark_ = kMinTimestamp;
  bool input_idle_[2] = {false, false};
  WatermarkStatus status_ = WatermarkStatus::kActive;
  std::unique_ptr<RocksDbKeyedStore> rocks_;  // see OpenRocksDb; null on the heap backend
  int rocks_cf_ = -1;
  size_t rocks_cache_keys_ = 0;
  int64_t rocks_spills_ = 0;
  int64_t rocks_keys_read_ = 0;
  int64_t rocks_peak_cached_keys_ = 0;
  int64_t rocks_snapshot_peak_group_keys_ = 0;
  std::string rocks_key_;    // scratch: a key's encoded form (StateWriter::WriteKey)
  std::string rocks_value_;  // scratch: a key's encoded values
};

}  // namespace tidemark

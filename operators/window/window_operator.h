#pragma once

#include <absl/container/flat_hash_set.h>
#include <absl/container/inlined_vector.h>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/job_spec.h"
#include "operators/window/merging_window_set.h"
#include "operators/window/trigger.h"
#include "operators/window/window.h"
#include "operators/window/window_aggregates.h"
#include "operators/window/window_assigner.h"
#include "operators/window/window_function.h"
#include "runtime/core/key.h"
#include "runtime/core/row.h"
#include "runtime/state/evicted_key_filter.h"
#include "runtime/state/keyed_state_backend.h"
#include "runtime/state/rocksdb_keyed_store.h"
#include "runtime/state/rocksdb_native_checkpoint.h"
#include "runtime/task/stream_operator.h"
#include "runtime/time/internal_timer_service.h"

namespace tidemark {

/// Accumulators of one key's slices or sessions: two inline (one window of a count and a sum:
/// no second cache miss per record or firing), more on the heap.
inline constexpr size_t kInlineAccumulators = 2;
using AccumulatorVector = absl::InlinedVector<AggregateAccumulator, kInlineAccumulators>;

/// Narrow accumulator words of one key's slices (`SliceAggregates`): two inline, enough for a
/// count, two counts, or a min / max.
inline constexpr size_t kInlineSliceWords = 2;
using SliceWords = absl::InlinedVector<uint64_t, kInlineSliceWords>;
/// A key's slice starts on the sliced path (see `SlicedKeyState`).
inline constexpr size_t kInlineSliceStarts = 2;
using SliceStarts = absl::InlinedVector<Timestamp, kInlineSliceStarts>;

/// One key's state on the window operator's sliced path (internal to `WindowOperator`; in a
/// header so that its keyed state backend can hold it inline). `starts` ascend; slice i owns
/// words [i * n, (i + 1) * n) of `accs` (n = `SliceAggregates::words()` of the aggregate list:
/// narrow typed accumulators, 8 bytes for a count). One slice of up to two words (a tumbling
/// count over in-order records) is stored inline, so a key's slot is 72 bytes with its int64
/// key; the fields a record touches come first, next to the key in the table's slot.
struct SlicedKeyState {
  // Two inline: the same 24 bytes as one (the heap form's pointer and capacity are 16), and a
  // key that gets the next window's first record before the current one fires keeps both
  // slices in its slot instead of on the heap.
  SliceStarts starts;
  Timestamp next_fire = kMinTimestamp;  // max timestamp of the next window to fire; MIN: none
  Timestamp timer = kMinTimestamp;      // the time of the key's live timer entry; MIN: none
  SliceWords accs;
};

/// `KeyedStateBackend::Touch`'s request for a key's slices held off its slot: behind a lagging
/// watermark a key holds several slices, past the slot's inline room, and reads those buffers
/// on each of its records. A record adds to the key's last slice or appends one after it, so the
/// lines requested are those of the last element and the one past it of each buffer (with 20
/// slices of a count, 160 bytes each, the first line is not the one a record reads).
[[gnu::always_inline]] inline void PrefetchOutOfLine(const SlicedKeyState& ks) {
  // A held key has a slice; a buffer on the heap has more capacity than the inline room.
  if (ks.starts.capacity() > kInlineSliceStarts && !ks.starts.empty()) {
    const Timestamp* last = ks.starts.data() + ks.starts.size() - 1;
    __builtin_prefetch(last);
    __builtin_prefetch(last + 1);
  }
  if (ks.accs.capacity() > kInlineSliceWords && !ks.accs.empty()) {
    const uint64_t* end = ks.accs.data() + ks.accs.size();
    __builtin_prefetch(end - 1);
    __builtin_prefetch(end);
  }
}

/// (window end, firings so far) of one key on the sliced path; kept (beside the key's state)
/// only with `emit_firing` and allowed lateness > 0.
using SlicedFirings = std::vector<std::pair<Timestamp, int64_t>>;

template <typename K>
struct SlicedStore;

class WindowTablesBase;
template <typename K, size_t N>
class WindowTables;

/// One in-flight session of one key on the window operator's flat session path (internal to
/// `WindowOperator`): the session window [start, end) and the window its contents are stored
/// under (its state window, as in `MergingWindowSet`).
struct FlatSession {
  Timestamp start = 0;
  Timestamp end = 0;
  Timestamp state_start = 0;
  Timestamp state_end = 0;
};

/// One key's in-flight sessions on the flat session path (internal to `WindowOperator`).
/// `sessions` ascend and never intersect (touching sessions have merged); session i owns
/// words [i * n, (i + 1) * n) of `accs` (n = `SliceAggregates::words()`: narrow typed
/// accumulators). Two words are stored inline (one session's count). `timer` is the time of the
/// key's one live timer entry (<= the earliest session's max timestamp; MIN: none).
struct SessionKeyState {
  absl::InlinedVector<FlatSession, 1> sessions;
  Timestamp timer = kMinTimestamp;
  SliceWords accs;
};

template <typename K>
struct SessionStore;

/// Result of compiling a `type: window` operator: the output schema, known before the job runs,
/// and a factory for one operator instance per subtask.
struct WindowOperatorPlan {
  Schema output_schema;
  std::function<std::unique_ptr<StreamOperator>()> factory;
};

/// The assigner a `WindowSpec` describes (tumbling / sliding / session / global, event or
/// processing time, offset). Throws `InvalidArgument` naming a bad size, slide or gap.
std::unique_ptr<WindowAssigner> MakeWindowAssigner(const WindowSpec& spec);

/// Keyed (or all-records) windowing. Mirrors Flink's `WindowOperator`.
///
/// Per element: the assigner gives its windows (merged into the key's in-flight sessions for a
/// merging assigner); a window whose cleanup time (`maxTimestamp + allowed_lateness`, saturating
/// to "never" on overflow; `maxTimestamp` for processing time) is <= the current watermark is
/// late and skipped. Otherwise the element is added to the window's `WindowState`, the trigger's
/// `OnElement` decides FIRE / PURGE, and the cleanup timer is (re-)registered. An element that
/// every window skipped and whose `timestamp + allowed_lateness <= watermark` goes to the late
/// side output tag when one is set, else is dropped and counted.
///
/// Watermarks: every event-time timer <= the watermark fires first (trigger timers emit results,
/// cleanup timers drop the window's contents, trigger state and session entry), then the
/// watermark is forwarded. Processing-time timers fire from the `ProcessingTimeService`.
///
/// Results: the window function's rows, each stamped `window.MaxTimestamp()` (MAX for the global
/// window). A firing with no contents (never filled, or purged) emits nothing.
///
/// Sliced path (same output, record for record): event-time tumbling (aligned) and sliding
/// windows with the default `EventTimeTrigger` and an `AggregatingWindowFunction` whose
/// aggregates merge exactly (`CanPreAggregate`) keep, per key, one accumulator per non-empty
/// slice of gcd(size, slide) ms instead of one state per window, and one timer entry per key at
/// the earlier of the next window end to fire (a window covering a non-empty slice) and the
/// cleanup time of the oldest slice (the cleanup time of the last window containing it).
/// A firing merges the window's slices. That state lives in a `KeyedStateBackend` (flat tables
/// per key group; a single int64 key has its own table type, every other key (strings, several
/// fields) is a `KeyRef` interned once in the backend's `KeyPool` and looked up in place from
/// the record's key fields, so no record builds or copies a `Key`) and its
/// timers in `KeyedTimerBuckets`: all keys with a timer at one time (a window end, for the
/// default trigger) fire together in key order, not one `InternalTimer` per key; they are not
/// in `timer_service()`. Firing times and order ((time, key) as in the general
/// path), lateness, late firings, late side output, `firing` numbers and cleanup are those of the
/// per-window path; a record timestamp beyond +-2^61 ms (or none) converts the operator to the
/// general path for good (its windows' states and timers are rebuilt from the slices first).
/// Per-window tables (a form of the sliced path, same output record for record): aligned
/// event-time tumbling windows with no allowed lateness, whose narrow
/// accumulators are at most four words without strings (counts, sums, min / max of fixed-width
/// values), keep one flat table per open window (key -> accumulator words inline, window_tables.h)
/// instead of per-key slices and timers: a record does one lookup in its window's table; the
/// watermark that passes a window's max timestamp fires its keys in key order (the order of the
/// per-key timers) and drops the table whole. No timer, slice list or per-key erase. Snapshots
/// are written in the sliced path's format (the tables are copied into a sliced store for it),
/// and a restored sliced store is taken into tables, so either path and either backend restores
/// the other's. The tables' key form follows the first record's key: one int64, one string of at
/// most 16 bytes (held in the slot itself: `ShortStringKey`, no pool entry) or any key
/// (`KeyRef`). A record whose key short-string tables cannot hold (a longer string, a NULL) widens
/// them to interned keys (each table's keys interned once, O(panes)) and the run goes on there.
/// A record the tables cannot take otherwise (a key of another shape than the tables', a
/// timestamp out of the sliced range, a key group this subtask does not own) moves their state
/// into the sliced store, and the operator goes on there for good. On the RocksDB backend the
/// tables are its in-memory cache while their bytes fit the cache's half of the budget
/// (`tables_budget_`) and RocksDB holds no key: records go to them as on the heap. Before a
/// batch that could take them past the budget, and for a native checkpoint, they move into the
/// sliced store for good (spilled as they move, `WindowTables::MoveToStore`), which goes on as
/// the write-back cache over RocksDB (see `OpenRocksDb`).
/// Flat session path (same output, record for record): event-time session windows with a fixed
/// gap, the default `EventTimeTrigger`, an `AggregatingWindowFunction` (any aggregates: the
/// accumulators are added and merged in the order the per-window states would be) and no
/// allowed lateness keep, per key, the in-flight sessions as plain data with their accumulators
/// inline in a `KeyedStateBackend`, merged as `MergingWindowSet` merges them (the merged session
/// keeps the state window of the earliest session merged). Timers are a `KeyedTimerHeap` of
/// (time, key) with one live entry per key, at or before its earliest session's max timestamp
/// (an entry that pops before the session ends is re-added at its end), so extending a session
/// costs no timer work; sessions fire in (time, key) order, as the per-window timers would.
/// Snapshots are written in the per-window path's format (panes, sessions, one timer per
/// session), so either path restores the other's; a record timestamp beyond +-2^61 ms converts
/// the operator to the per-window path for good, as on the sliced path. With
/// `pipeline.state-backend: rocksdb` the flat session store is a bounded cache of hot keys over
/// RocksDB (column family "session-windows"; see `OpenSessionRocksDb`); timers stay on the heap.
/// Every other configuration (other assigners or triggers, processing time, buffering
/// functions, lateness on sessions; avg / double sum / double min-max on tumbling and sliding
/// windows) uses per-window states.
///
/// Threading: mailbox thread only. Ownership: owns assigner, trigger and function; borrows the
/// `OperatorContext` pointers from `Open` to `Close`.
/// Cost per element, general path: a hash lookup and a map insert per window, O(log n) timer
/// registrations per window. Sliced path: a key-group hash and one flat-table lookup, one slice
/// lookup (O(1) for in-order records), no allocation in steady state (for any key type; a
/// key's values and accumulator buffer are reused after it is erased, and the result row after
/// it is emitted) and no timer work unless the key's next timer moves (then an append to its
/// time's key list); a firing costs O(non-empty slices of the window), plus sorting the keys due
/// at that time (for string keys by an 8-byte abbreviation past their common prefix).
class WindowOperator : public StreamOperator,
                       public Triggerable<Window>,
                       public KeyContext,
                       public WindowAssigner::Context {
 public:
  // The per-window tables (window_tables.h) work on the operator's state and counters.
  template <typename K, size_t N>
  friend class WindowTables;

  struct Options {
    /// Input slots forming the key, in key-by order; empty = one window set for all records.
    std::vector<int> key_slots;
    int64_t allowed_lateness_ms = 0;  ///< >= 0; only meaningful for event time
    std::string late_output_tag;      ///< empty: late records are dropped and counted
    /// Append a `firing` int64 column to every result row: 0 for the first firing of a (key,
    /// window), 1, 2, ... for later ones (update firings within allowed lateness, or early /
    /// repeated firings of count and continuous triggers), so a sink can upsert by
    /// (key, window_start, window_end). The count restarts after the window is cleaned up.
    bool emit_firing = false;
    /// Append provenance to late side-output records: `late_window_start`, `late_window_end`
    /// (the latest window the record was assigned to; for sessions its own `[ts, ts + gap)`)
    /// and `late_by_ms` = current watermark - record timestamp. (Their split travels in the
    /// record's own `split` field when the schema has one.)
    bool late_provenance = false;
    /// The input rows' layout: what buffered elements are restored into from a snapshot. Null
    /// (operators built by hand): a snapshot with buffered elements fails to restore
    /// (`StateCorrupt`).
    const RowLayout* input_layout = nullptr;
  };

  /// `trigger` may be null: the assigner's default trigger is used. Throws `InvalidArgument`
  /// for a negative lateness or a merging assigner with a trigger that cannot merge.
  WindowOperator(std::unique_ptr<WindowAssigner> assigner, std::unique_ptr<Trigger> trigger,
                 std::unique_ptr<WindowFunction> function, Options options);
  ~WindowOperator() override;

  /// Validates a job's window spec against the input schema (size/slide/gap, offset, trigger,
  /// aggregates and their fields, key fields) and returns the output schema
  /// (`key fields..., window_start, window_end, aggregates...[, watermark][, firing]`; `firing`
  /// when `allowed_lateness_ms > 0` or `emit_firing`) and an operator factory. The late side
  /// output (when `late_output` is set) carries the input fields plus the provenance columns
  /// of `Options::late_provenance` (see `LateOutputSchema`). Throws `InvalidArgument` with a
  /// message naming the offending setting.
  static WindowOperatorPlan Compile(const Schema& input, const WindowSpec& spec,
                                    const std::vector<std::string>& key_by);
  /// The late side output's schema for `input`: input fields, then `late_window_start`,
  /// `late_window_end` (timestamp) and `late_by_ms` (int64). Throws `InvalidArgument` when the
  /// input already has one of those names.
  static Schema LateOutputSchema(const Schema& input);

  // StreamOperator
  void Open(const OperatorContext& context) override;
  void ProcessElement(StreamRecord& record, int input) override;
  /// `ProcessElement` on each record; on the sliced and flat session paths with int64 keys, and
  /// on the sliced path with interned keys (strings, several fields), the keyed state of the
  /// record a few places on is prefetched, so the table lookups of a batch overlap instead of
  /// waiting on one cache miss after another (same output). An interned key's hash is computed
  /// once, for that prefetch, and reused by its record's lookup.
  void ProcessBatch(RecordBatch& records, int input) override;
  void ProcessWatermark(Watermark watermark, int input) override;
  void Close() override;
  /// Writes section "window-operator" (version 1): the path (sliced or per-window), the current
  /// watermark, the late / fired counters and the function's own state, then the keyed state per
  /// key group (`WriteKeyGroups`): per key its panes, in-flight sessions, firing counts, trigger
  /// state, event- and processing-time timers, and on the sliced path its slices, next firing,
  /// live timer and late firing counts. Timers of the sliced path are rebuilt from each key's live
  /// timer on restore.
  void SnapshotState(StateSnapshotContext& context) override;
  /// Restores what `SnapshotState` wrote, keeping only the key groups this subtask owns.
  /// Errors: `StateCorrupt` for bytes it cannot read or a snapshot of another configuration
  /// (sliced path versus not, number of aggregates).
  void InitializeState(StateInitializationContext& context) override;

  // Triggerable<Window>: timers of the operator's timer service.
  void OnEventTime(const InternalTimer<Window>& timer) override;
  void OnProcessingTime(const InternalTimer<Window>& timer) override;

  // KeyContext
  void SetCurrentKey(const Key& key) override { current_key_ = key; }
  const Key& GetCurrentKey() const override { return current_key_; }

  // WindowAssigner::Context
  Timestamp GetCurrentProcessingTime() override {
    return processing_time().GetCurrentProcessingTime();
  }

  /// Counters (Flink's numLateRecordsDropped and friends).
  int64_t num_late_records_dropped() const { return num_late_records_dropped_; }
  /// numLateRecordsDropped, numLateRecordsSideOutput, numWindowsFired, currentWatermark,
  /// stateBytes (the last sample) and stateBytesPeak (the largest), sampled at watermarks before
  /// timers fire, in the byte model of window_state_bytes.h.
  void CollectMetrics(MetricsWriter& out) const override;
  /// With `pipeline.state-backend: rocksdb`, why this operator's keyed state stays on the heap
  /// ("" when it is on RocksDB, or the backend is heap): names what keeps it there (the
  /// aggregate, the trigger, the assigner). Set in Open; subtask 0 logs it once per operator
  /// and process, and CollectMetrics reports it as the note `stateBackendFallback`.
  const std::string& heap_state_reason() const { return heap_state_reason_; }
  /// The state held now, in the byte model of window_state_bytes.h. O(panes).
  int64_t StateBytes() const;
  /// The sliced and flat session paths' keyed state as allocated memory: the backend's tables
  /// (`KeyedStateBackend::TableBytes`), the keys' heap buffers of slices / sessions /
  /// accumulators beyond their inline ones, and the timers' memory; the key pool of non-int64
  /// keys is not included. 0 on the per-window path. O(keys).
  int64_t StateMemoryBytes() const;
  /// Keys held in the sliced / flat session stores and on the per-window path.
  int64_t NumStateKeys() const;
  /// What the state-size gauges read, from one pass over the keys (`StateBytes` and
  /// `StateMemoryBytes` are its fields): `bytes` (StateBytes), `memory_bytes` (StateMemoryBytes),
  /// `slices` (NumSlices), `panes` (slices plus flat sessions) and `keys` (NumStateKeys).
  /// O(keys + panes of the per-window path).
  struct StateFigures {
    int64_t bytes = 0;
    int64_t memory_bytes = 0;
    int64_t slices = 0;
    int64_t panes = 0;
    int64_t keys = 0;
  };
  StateFigures MeasureState() const;
  int64_t state_bytes_peak() const { return state_bytes_peak_; }
  int64_t num_late_records_side_output() const { return num_late_records_side_output_; }
  /// Firings that emitted (non-empty contents).
  int64_t num_windows_fired() const { return num_windows_fired_; }

  /// Introspection for tests: the contents of `key`'s pane stored under `state_window` (for
  /// merging assigners, see `GetMergingWindowSet`), or nullptr when empty. On the sliced path the
  /// state is built from the window's slices (valid until the next call; a window already
  /// cleaned up may still show the slices later windows share).
  const WindowState* GetWindowState(const Key& key, const Window& state_window) const;
  /// True while the operator runs on the sliced path (see the class comment).
  bool uses_slices() const { return sliced_; }
  /// True while the operator keeps its sliced state in per-window tables, or will at its first
  /// record (see the class comment).
  bool uses_window_tables() const { return window_tables_; }
  /// The per-window tables' key form while there are tables: "int64" (one int64 field),
  /// "short-string" (one string of at most 16 bytes, held in the table slot) or "interned"
  /// (any key); "" before the first record and off the tables.
  std::string_view window_table_keys() const;
  /// True while the operator runs on the flat session path (see the class comment).
  bool uses_flat_sessions() const { return flat_sessions_; }
  /// True when the sliced or flat session path's keyed state is on RocksDB
  /// (`pipeline.state-backend: rocksdb`, set up at `Open`).
  bool uses_rocksdb() const { return rocks_ != nullptr; }
  /// RocksDB backend: times the in-memory key cache was written out, keys read back.
  int64_t rocksdb_spills() const { return rocks_spills_; }
  int64_t rocksdb_keys_read() const { return rocks_keys_read_; }
  /// Heap bytes of the filter of keys written to RocksDB (paid for out of the key cache's half
  /// of `memory.fixed-per-slot`); a window's part is freed when the window end fires.
  int64_t rocksdb_filter_bytes() const { return static_cast<int64_t>(rocks_written_.bytes()); }
  /// Keys looked up in RocksDB that it held no live copy of (a filter's false positive, or a
  /// key written and dead since): a key it never held is not looked up.
  int64_t rocksdb_lookups_missed() const { return rocks_lookups_missed_; }
  /// Sliced path: the number of (key, slice) accumulators held; 0 on the general path.
  size_t NumSlices() const;
  /// The in-flight sessions of `key`; nullptr when none (or the assigner does not merge). On the
  /// flat session path the set is built from the key's sessions (valid until the next call).
  const MergingWindowSet* GetMergingWindowSet(const Key& key) const;
  /// Valid between `Open` and `Close`.
  const InternalTimerService<Window>& timer_service() const { return *timer_service_; }
  const TriggerStateStore& trigger_state() const { return trigger_state_; }

 private:
  using Panes = std::map<Window, std::unique_ptr<WindowState>>;

  void ExtractKeyInto(const Row& row, Key& key) const;
  // Sets the `firing` column of a result row: the last field of an aggregating function's
  // output layout; a row of any other function is widened by it.
  void SetFiring(Row& row, int64_t firing) const;
  // The input slot of a single int64 key, or -1 (several key fields, another type).
  bool IsInt64Key(const Row& row) const {
    return options_.key_slots.size() == 1 && IsInt64Slot(row, options_.key_slots[0]) &&
           !row.IsNull(static_cast<size_t>(options_.key_slots[0]));
  }
  void InitSlicing();
  void SlicedProcessElement(StreamRecord& record);
  // `SlicedProcessElement` of a record of the interned-key store (`key_store_` set) whose key
  // hash (`KeyHash64` of its key fields) the caller computed.
  void SlicedAddInterned(StreamRecord& record, uint64_t key_hash);
  // ProcessBatch on the sliced path with one key field, while no key has needed the interned
  // store: the records with a non-NULL int64 key go to the int64 store, each key hashed once.
  void SlicedInt64Batch(RecordBatch& records, int input);
  // SlicedInt64Batch for a small table on the heap backend (`RecentKeyStates`, sliced_store.h).
  void SlicedInt64BatchRecent(RecordBatch& records, int input);
  // Tables of up to this many keys may use SlicedInt64BatchRecent (the slot touch's threshold).
  static constexpr size_t kRecentMaxKeys = 8192;
  // The int64 batch loops' short path for the common record, held key (see SlicedAddShort):
  // the slice [lo, hi) of the last record SlicedAdd saw when no window of it is complete or late
  // at the current watermark (else empty: lo > hi), and the max timestamp of its first window.
  struct ShortSlice {
    Timestamp lo = 1;
    Timestamp hi = 0;
    Timestamp first_max = 0;
  };
  // The ShortSlice now: valid until a record takes SlicedAdd or another path (the watermark does
  // not move within a batch).
  ShortSlice SlicedShortSlice() const;
  // Adds `record` (int64 key, timestamp in `slice`) to the key's state `ks` and returns true
  // when that is all SlicedAdd would do: `ks`'s last slice is `slice`, and its next firing is at
  // or before the slice's first window's (so it and the key's timer stay); else false, nothing
  // done.
  bool SlicedAddShort(SlicedKeyState& ks, const StreamRecord& record, const ShortSlice& slice);
  // Returns the key's state (nullptr: the record was late). `held`: the key's state when the
  // caller knows it (`RecentKeyStates`, or looked up for SlicedAddShort), else nullptr (looked
  // up here).
  template <typename K, typename Src>
  SlicedKeyState* SlicedAdd(SlicedStore<K>& store, const Src& src, StreamRecord& record,
                            SlicedKeyState* held = nullptr);
  void FireSlicedTimers(Timestamp watermark);
  template <typename K>
  void FireSlicedTimers(SlicedStore<K>& store, Timestamp watermark);
  // Fires the keys of `store.due` whose timer is at `time` (`ahead`: look-up scratch).
  template <typename K>
  void FireDueKeys(SlicedStore<K>& store, Timestamp time, std::array<SlicedKeyState*, 4>& ahead);
  // True when the key is done (no slice left): the caller erases it from `store.keys`.
  template <typename K>
  [[nodiscard]] bool OnSlicedTimer(SlicedStore<K>& store, const K& key, SlicedKeyState& ks,
                                   Timestamp time);
  template <typename K>
  void UpdateSlicedTimer(SlicedStore<K>& store, const K& key, SlicedKeyState& ks);
  template <typename K>
  void RebuildWindowsFromSlices(SlicedStore<K>& store);
  void MigrateToKeyStore();
  template <typename K, typename Src>
  void WriteSlicedKey(StateWriter& w, SlicedStore<K>& store, const Src& key);
  template <typename K, typename Src>
  void ReadSlicedKey(StateReader& r, SlicedStore<K>& store, const Src& src);
  // A sliced key's `n` slices (their starts ascending, each slice's narrow words), next firing
  // and live timer in the snapshot's form (WriteSlicedKey's and the per-window tables').
  void WriteSlices(StateWriter& w, const Timestamp* starts, const uint64_t* const* words, size_t n,
                   Timestamp next_fire, Timestamp timer);
  std::vector<const uint64_t*> scratch_slice_words_;  // WriteSlicedKey's slices
  KeyGroupRange OwnedKeyGroups() const;
  const SlicedKeyState* FindSlicedKey(const Key& key) const;
  // `short_key`: `key`'s ref when it is one short string (`KeyRef::IsShortString`), whose bytes
  // the result row then copies from its pool entry; else nullptr.
  void FireSlicedWindow(const Key& key, SlicedKeyState& ks, Timestamp start, SlicedFirings* firings,
                        const KeyRef* short_key = nullptr);
  template <typename K>
  SlicedFirings* FiringsOf(SlicedStore<K>& store, const K& key);
  void MergeSlices(const SlicedKeyState& ks, Timestamp start, Timestamp end) const;
  // The accumulators of `scratch_words_` (merged slices) into `scratch_accs_`; the words' strings
  // given back.
  void ExpandScratchWords() const;
  // The result row of the window [start, start + size_) of `key`: from `words` (counts and int64
  // sums, one_slice_windows_) or, when null, from `scratch_accs_`; numbered from `firings`
  // (nullptr: 0); emitted stamped its max timestamp. `short_string`: `key`'s one string when it
  // is one string read from a key's own bytes (a pool entry's or a table slot's), which the
  // result row then copies; else nullptr.
  void EmitSlicedResult(const Key& key, Timestamp start, const uint64_t* words,
                        SlicedFirings* firings, const std::string_view* short_string);
  // One window of the per-window tables: `key`'s accumulator words in the table of the window
  // starting at `start`. `short_string` as for EmitSlicedResult.
  void FireTableWindow(const Key& key, const uint64_t* words, Timestamp start,
                       const std::string_view* short_string);
  // Per-window tables (window_tables.h): made for the first record (keyed by the form of its
  // key: TableKeysOf), widened from short-string keys to interned ones when a record's key is
  // not one short string (WidenWindowTables), given up for the sliced store when a record does
  // not fit them (LeaveWindowTables), and taken from a restored sliced store
  // (AdoptStoreIntoTables: false, the store kept, when it holds what the tables cannot).
  enum class TableKeys : uint8_t {
    kInt64,        // a single non-NULL int64 (WindowTables<int64_t, N>)
    kShortString,  // a single non-NULL string of at most 16 bytes (ShortStringKey)
    kInterned,     // any key (KeyRef)
  };
  TableKeys TableKeysOf(const Row& row) const;
  void MakeWindowTables(TableKeys keys);
  void LeaveWindowTables();
  // Short-string tables that cannot take a record: into interned-key tables holding the same
  // state (on the RocksDB backend, left for the sliced store instead when those would be over
  // its budget). True when the operator is on (the widened) tables.
  bool WidenWindowTables();
  bool AdoptStoreIntoTables();
  // On the RocksDB backend, before `n` records go to the tables: leaves them (LeaveWindowTables)
  // when adding them could take the tables' memory past `tables_budget_`; true when it did.
  bool TablesOverBudget(size_t n);
  uint64_t* FindOrAddSlice(SlicedKeyState& ks, Timestamp start);
  // Drops the first `n` slices of `ks` (their strings given back).
  void DropSlices(SlicedKeyState& ks, size_t n);
  // A key's heap accumulator buffer outlives the key: kept when the key's state is erased and
  // given to the next new key, so keys that come and go (a window per key, then nothing) do not
  // allocate per window. Bounded by the most keys erased at once.
  void RecycleAccumulators(AccumulatorVector& accs);
  void ReuseAccumulators(AccumulatorVector& accs);
  void RecycleAccumulators(SliceWords& accs);
  void ReuseAccumulators(SliceWords& accs);
  void RecycleSliceStarts(SliceStarts& starts);
  void ReuseSliceStarts(SliceStarts& starts);
  // Emits `result_row_` stamped `timestamp` and takes the row back for the next firing.
  void EmitRecycled(Timestamp timestamp);
  // The row a sliced firing builds its result in: `result_row_`, or while a run of timer
  // firings is batched (`fired_batching_`), the next row of `fired_`.
  Row& FiringRow();
  // Emits the row `FiringRow` returned, stamped `timestamp`: at once (`EmitRecycled`), or while
  // batched appended to `fired_`, which goes downstream in one `Output::CollectBatch` when it
  // is full or the run ends (`FlushFired`).
  void EmitFiring(Timestamp timestamp);
  // Emits the batched firings (`fired_`'s first `fired_size_` records), in firing order.
  void FlushFired();
  void LeaveSlicedPath();
  // RocksDB state backend on the sliced path (window_operator_rocksdb.cc). RocksDB is the
  // source of truth for keys not in the sliced store, which is a write-back cache of hot keys
  // over `rocks_`: a cached key may also have an older copy in RocksDB, which the cache's
  // overrides. When the store holds more than `rocks_cache_keys_` keys (checked before each
  // batch and after each watermark's firings) whole key groups, from a rotating cursor, are
  // written out in one write batch and dropped until it holds three quarters of that. A batch
  // of int64 keys reads the keys it misses with one MultiGet first; a window end reads its
  // keys a chunk at a time the same way. Nothing is ever deleted: a key read back keeps its
  // copy (overwritten at its next eviction), and a key whose last slice is dropped leaves a
  // dead copy, which reads skip by its drop time (IsDeadCopy). Timers and firing counts stay
  // on the heap.
  // With `rocks_merge_` (every sliced aggregate merges exactly, so always on this path; the
  // reads above are the path without it) a key is not read back for its records: a key missing
  // from the store gets a fresh partial state, written out as a RocksDB merge operand
  // (window_slices_merge_operator.h) when evicted. A key's state is the merge of its RocksDB
  // value and its cached state. It is read (the merge applied) only when it fires (its timer,
  // or a record that fires a window at once), for a canonical snapshot, or when the path is
  // left. A key read is whole in the store (RocksWhole) and written out with a put again; the
  // value of a key its firing ends is deleted, so that its next window's partial states do not
  // merge with its dead slices (except at the last watermark: nothing is added after it).
  void OpenRocksDb();
  // The column families' options of the sliced path (both layouts' merge operators: a restored
  // native checkpoint may hold either; see window_slices_merge_operator.h) into `options`.
  void AddRocksWindowOptions(RocksDbKeyedStore::Options& options) const;
  void MaybeSpill();
  // While the per-window tables move into the store (WindowTables::MoveToStore), `tables_bytes`
  // of them still held: spills the store so that it and the tables stay within
  // `tables_budget_` (the cache's half of the budget).
  void SpillLeavingTables(size_t tables_bytes);
  // Evicts keys until the store holds `target` (0: every key, before a native checkpoint).
  template <typename K>
  void SpillStore(SlicedStore<K>& store, size_t target);
  // Reads `key`'s state back into `store` when RocksDB holds it; true when it did.
  template <typename K>
  bool FaultIn(SlicedStore<K>& store, const K& key, SlicedKeyState& ks);
  // Reads the keys of `keys` that the store misses from RocksDB with one MultiGet, into the
  // store; with `in_rocksdb_order` (`keys` sorted by SortInRocksDbOrder) with one iterator pass.
  template <typename K>
  void FaultInMissing(SlicedStore<K>& store, std::vector<K>& keys, bool in_rocksdb_order = false);
  // Sorts `keys` in RocksDB's order of their stored keys: key group, then canonical key bytes
  // (a window end's keys are fired in this order on the RocksDB backend, so they are read back
  // in one pass over RocksDB's files).
  template <typename K>
  void SortInRocksDbOrder(SlicedStore<K>& store, std::vector<K>& keys);
  // The int64 keys of `records` the store misses, read back before the batch runs (then
  // `rocks_batch_resolved_` tells SlicedAdd that a key still missing is a new key).
  void FaultInBatch(RecordBatch& records);
  // rocks_merge_, after the firing of `store.due` (whose keys the last FaultInMissing read from
  // `keys`): a key read that lives on is whole (RocksWhole); the RocksDB copy of a key the
  // firing ended is deleted (a later merge operand of the key must not find its slices), except
  // at the last watermark.
  template <typename K>
  void RocksDbAfterFiring(SlicedStore<K>& store, const std::vector<K>& keys);
  // After a window end's chunk fired: the tables of key groups `first_group`..`last_group`
  // (all of whose due keys fired) are sized down when the chunk left them far above their
  // share of the cache (see the definition).
  template <typename K>
  void ShrinkFiredGroups(SlicedStore<K>& store, int first_group, int last_group);
  // rocks_merge_: the cached keys whose state includes their RocksDB value (read back, and
  // still there): written out with a put that replaces it, never read again. Other cached keys
  // are partial (or have no value in RocksDB).
  template <typename K>
  auto& RocksWhole() {
    if constexpr (std::is_same_v<K, int64_t>) {
      return rocks_whole_int_;
    } else {
      return rocks_whole_ref_;
    }
  }
  // True when `bytes` (a key's value in RocksDB) is the copy of a key erased since.
  bool IsDeadCopy(std::string_view bytes) const;
  void EncodeSlicedKey(SlicedKeyState& ks);
  void DecodeSlicedKey(std::string_view bytes, SlicedKeyState& ks);
  // Merges the RocksDB value `bytes` into `ks` (rocks_merge_): slices united by start, equal
  // ones' accumulators merged, the earlier next firing and timer.
  void MergeStoredKey(std::string_view bytes, SlicedKeyState& ks);
  // Every spilled key back into the store (snapshots, leaving the sliced path, moving keys to
  // the interned store).
  void UnspillAll();
  template <typename K>
  void AppendRocksKey(const K& key);
  // False when RocksDB holds no live copy of the key whose canonical bytes are in `rocks_key_`
  // (`rocks_written_` rules it out), so reading it would find nothing.
  bool RocksDbMayHold();
  bool rocks_has_keys() const { return rocks_ && rocks_->num_puts(rocks_cf_) > 0; }
  // [rocks-incr] Native, incremental checkpoints of `rocks_` (window_operator_native_checkpoint.cc,
  // runtime/state/rocksdb_native_checkpoint.h). PrepareNativeSnapshot: true when this snapshot
  // will be native (`context.incremental` set, on RocksDB, no firing counts held), after it
  // flushed the key cache into RocksDB; false for a canonical one (then the uploads are
  // forgotten). WriteNativeSnapshot appends the handle inside the operator's section (version
  // 2); RestoreNativeSnapshot rebuilds `rocks_` from it and the heap timers from its keys.
  bool PrepareNativeSnapshot(const StateSnapshotContext& context);
  void WriteNativeSnapshot(StateSnapshotContext& context);
  void RestoreNativeSnapshot(StateReader& r, const StateInitializationContext& context);
  // Flat session path (window_operator_sessions.cc).
  void InitSessions();
  void SessionProcessElement(StreamRecord& record);
  template <typename K, typename Src>
  void SessionAdd(SessionStore<K>& store, const Src& src, StreamRecord& record);
  void FireSessionTimers(Timestamp watermark);
  void FireSession(const Key& key, const FlatSession& session, const uint64_t* words);
  template <typename K>
  void FireSessionTimers(SessionStore<K>& store, Timestamp watermark);
  void MigrateSessionsToKeyStore();
  void LeaveSessionPath();
  template <typename K>
  void RebuildWindowsFromSessions(SessionStore<K>& store);
  const SessionKeyState* FindSessionKey(const Key& key) const;
  bool AdoptRestoredSessions();
  void WriteSessionKey(StateWriter& w, const SessionKeyState& ks);
  // RocksDB state backend on the flat session path (window_operator_sessions_rocksdb.cc): the
  // session store is a write-back cache of hot keys over column family "session-windows" of
  // `rocks_` (the subtask's one instance; the sliced path's "window-slices" is never opened
  // beside it, the two paths being exclusive). When the store holds more than
  // `rocks_session_cache_keys_` keys (checked per record and after each watermark's firings),
  // whole key groups from a rotating cursor are written out with puts and dropped until it holds
  // three quarters of that. A key missing from the store is read back when a record or its timer
  // needs it, unless `rocks_session_written_` rules out a copy; its copy stays (the store's state
  // overrides it) until its next eviction overwrites it or its last session fires (deleted). Timers
  // stay on the heap: an evicted key keeps its timer entry. Snapshots are canonical (every key read
  // back first).
  void OpenSessionRocksDb();
  void MaybeSpillSessions();
  template <typename K>
  void SpillSessions(SessionStore<K>& store, size_t target);
  // `src`'s (a K or a KeyProbe) state read back from RocksDB into `store`; {nullptr, nullptr}
  // when RocksDB holds none.
  template <typename K, typename Src>
  std::pair<const K*, SessionKeyState*> SessionFaultIn(SessionStore<K>& store, const Src& src);
  // Stages a delete of the RocksDB copy of `key` (its last session fired; no-op when the filter
  // rules a copy out).
  template <typename K>
  void DropSessionCopy(SessionStore<K>& store, const K& key);
  // Before a batch: `MaybeSpillSessions`, then the int64 keys of `records` the store misses,
  // read back with one MultiGet.
  void SessionFaultInBatch(RecordBatch& records);
  void EncodeSessionKey(const SessionKeyState& ks);  // into rocks_value_
  void DecodeSessionKey(std::string_view bytes, SessionKeyState& ks);
  // Every spilled session key back into the store; the column family emptied.
  void UnspillSessions();
  // Window arithmetic of the sliced path (timestamps within +-2^61, so nothing overflows).
  Timestamp LastStart(Timestamp t) const;             // latest window start <= t
  Timestamp FirstStartContaining(Timestamp t) const;  // earliest window start > t - size
  Timestamp SliceDropTime(Timestamp slice_start) const;
  // What the sliced path computes per record from its timestamp t is the same for every t of one
  // slice [lo, hi): a slice lies within one slide (slide is a multiple of slice) and so does
  // t - size (so is size); records arrive mostly in order, so the divisions are done once per
  // slice, not per record.
  struct SliceCache {
    Timestamp lo = 1;  // empty: lo > hi
    Timestamp hi = 0;
    Timestamp last_start = 0;   // LastStart(t)
    Timestamp first_start = 0;  // FirstStartContaining(t)
    Timestamp drop = 0;         // SliceDropTime(lo)
  };
  // The window arithmetic of the slice holding `t`, recomputed when `t` leaves the last
  // record's slice.
  const SliceCache& SliceOf(Timestamp t);
  Timestamp CleanupTime(const Window& w) const;
  bool IsWindowLate(const Window& w) const;
  bool IsElementLate(const StreamRecord& record) const;
  void RegisterCleanupTimer(const Window& w);
  void DeleteCleanupTimer(const Window& w);
  WindowState* FindState(const Key& key, const Window& state_window);
  void AddToState(const Key& key, const Window& state_window, const StreamRecord& record);
  void ClearState(const Key& key, const Window& state_window);
  void MergeStates(const Key& key, const Window& target, const std::vector<Window>& sources);
  void EmitWindowContents(const Window& w, const WindowState& state);
  void OnTimer(const InternalTimer<Window>& timer, bool event_time);
  void HandleLateElement(StreamRecord& record, const std::vector<Window>& windows);

  std::unique_ptr<WindowAssigner> assigner_;
  std::unique_ptr<Trigger> trigger_;
  std::unique_ptr<WindowFunction> function_;
  Options options_;

  Key current_key_;
  std::unique_ptr<InternalTimerService<Window>> timer_service_;
  TriggerStateStore trigger_state_;
  std::unique_ptr<TriggerContext> trigger_context_;
  std::unordered_map<Key, Panes, KeyHash> panes_;
  std::unordered_map<Key, MergingWindowSet, KeyHash> merging_sets_;
  std::vector<Row> results_;  // scratch buffer for EmitWindowContents
  // Firings so far per (key, window), when options_.emit_firing.
  std::unordered_map<Key, std::map<Window, int64_t>, KeyHash> firings_;

  // Record timestamps and window parameters the sliced path accepts: within these bounds no
  // slice / window / cleanup computation comes near int64 overflow.
  static constexpr Timestamp kMaxSlicedTimestamp = Timestamp{1} << 61;
  // Whether the sliced and flat session paths can take `record` (a timestamp within the bounds);
  // any other record moves the operator to the general path.
  static bool InSlicedRange(const StreamRecord& record) {
    return record.has_timestamp && record.timestamp > -kMaxSlicedTimestamp &&
           record.timestamp < kMaxSlicedTimestamp;
  }
  static constexpr int64_t kMaxSlicedParameter = int64_t{1} << 58;

  // Sliced path (see the class comment); sliced_ is decided in the constructor and only ever
  // switches off (LeaveSlicedPath).
  bool sliced_ = false;
  std::string heap_state_reason_;  // see heap_state_reason(); window_operator.cc
  std::string HeapStateReason() const;
  const AggregatingWindowFunction* aggregating_ = nullptr;  // function_, when sliced_
  int64_t size_ = 0;
  int64_t slide_ = 0;
  int64_t offset_ = 0;
  int64_t slice_ = 0;               // gcd(size_, slide_)
  bool one_slice_windows_ = false;  // see InitSlicing
  // Per-window tables (see the class comment): eligible (decided in InitSlicing and Open, only
  // ever switches off) and, once made, the tables. While they are set the sliced stores
  // (`int_store_`, `key_store_`) are null but for a snapshot's copy.
  bool window_tables_ = false;
  std::unique_ptr<WindowTablesBase> tables_;
  // On the RocksDB backend the tables are its in-memory cache while RocksDB holds no key: their
  // bytes (WindowTables::PeakBytesAfter) stay within this, the cache's half of the budget
  // (`rocks_cache_keys_`' bytes); past it, or for a native checkpoint, they move into the sliced
  // store for good, which spills as it fills. 0 on the heap backend: no bound.
  size_t tables_budget_ = 0;
  SliceCache slice_cache_;
  size_t num_accs_ = 0;
  SliceAggregates slice_aggs_;  // the narrow accumulators of a slice
  size_t slice_words_ = 0;      // slice_aggs_.words()
  // The strings of slice_aggs_ (string min / max / first / last), scratch_words_' included.
  mutable AccumulatorStrings slice_strings_;
  mutable SliceWords scratch_words_;  // MergeSlices' merged words
  // The sliced path's keyed state, made at its first record: `int_store_` while every key is a
  // single non-NULL int64, `key_store_` otherwise (the int64 store moves into it on the first
  // other key). At most one of them is set.
  std::unique_ptr<SlicedStore<int64_t>> int_store_;
  std::unique_ptr<SlicedStore<KeyRef>> key_store_;
  mutable std::vector<AggregateAccumulator> scratch_accs_;
  std::vector<AccumulatorVector> spare_accs_;  // see RecycleAccumulators
  std::vector<SliceWords> spare_words_;        // see RecycleAccumulators
  std::vector<SliceStarts> spare_starts_;      // see RecycleAccumulators
  Row result_row_;                             // see EmitRecycled
  // Result rows of a run of sliced timer firings (a window end's keys), emitted as one batch
  // per kFiredBatch windows: one call down the chain and one checksum / write loop per batch
  // instead of per window. The records keep their rows' buffers between batches (a callee may
  // move a row out; it is then rebuilt).
  static constexpr size_t kFiredBatch = 256;
  bool fired_batching_ = false;
  size_t fired_size_ = 0;
  std::vector<StreamRecord> fired_;
  std::vector<StreamRecord*> fired_ptrs_;
  mutable std::unique_ptr<WindowState> introspected_;
  const RowLayout* late_layout_ = nullptr;  // input + provenance columns, made at the first one
  bool function_fills_firing_ = false;      // see SetFiring

  // Flat session path (see the class comment); decided in the constructor, only ever switches
  // off (LeaveSessionPath). Stores as for the sliced path: `int_sessions_` while every key is a
  // single non-NULL int64, `key_sessions_` otherwise; at most one is set.
  bool flat_sessions_ = false;
  int64_t gap_ = 0;
  size_t session_accs_ = 0;  // accumulators per session
  std::unique_ptr<SessionStore<int64_t>> int_sessions_;
  std::unique_ptr<SessionStore<KeyRef>> key_sessions_;
  mutable MergingWindowSet introspected_sessions_;

  std::unique_ptr<RocksDbKeyedStore> rocks_;  // see OpenRocksDb; null on the heap backend
  int rocks_cf_ = -1;
  size_t rocks_cache_keys_ = 0;
  int64_t rocks_spills_ = 0;              // spills of the store to RocksDB
  int64_t rocks_keys_read_ = 0;           // keys read back from RocksDB
  int64_t rocks_lookups_missed_ = 0;      // see rocksdb_lookups_missed
  std::string rocks_key_;                 // scratch: a key's canonical bytes
  std::string rocks_value_;               // scratch: a key's encoded state
  int rocks_evict_group_ = 0;             // the key group the next eviction starts at
  bool rocks_batch_resolved_ = false;     // see FaultInBatch
  bool rocks_merge_ = false;              // partial states and merge operands (see OpenRocksDb)
  bool rocks_compact_ = false;            // values in the compact layout (see OpenRocksDb)
  bool rocks_delete_dead_ = true;         // see RocksDbAfterFiring
  SlicedKeyState rocks_scratch_;          // scratch: a value decoded for MergeStoredKey
  std::vector<size_t> rocks_read_found_;  // FaultInMissing's keys found (indices)
  absl::flat_hash_set<int64_t> rocks_whole_int_;  // see RocksWhole
  absl::flat_hash_set<KeyRef, KeyTraits<KeyRef>::MapHash, KeyTraits<KeyRef>::MapEq>
      rocks_whole_ref_;
  // Every timer up to this time has fired: a copy whose slices all drop by then is dead.
  Timestamp rocks_dead_through_ = kMinTimestamp;
  std::vector<int64_t> rocks_batch_keys_;     // scratch: FaultInBatch's missing keys
  std::vector<std::string> rocks_read_keys_;  // scratch: prefixed keys of one MultiGet
  // The keys written to RocksDB by their copies' drop times: a missing key it rules out is new
  // (or only dead in RocksDB) and is not read (RocksDbMayHold).
  EvictedKeyFilter rocks_written_;
  // The flat session path's RocksDB state (see OpenSessionRocksDb).
  int rocks_session_cf_ = -1;
  size_t rocks_session_cache_keys_ = 0;
  int rocks_session_evict_group_ = 0;
  uint64_t rocks_session_records_ = 0;  // records since Open (see SessionProcessElement)
  // Every session timer up to this time has fired (and read its key back).
  Timestamp rocks_session_dead_through_ = kMinTimestamp;
  EvictedKeyFilter rocks_session_written_;
  // [rocks-incr] Native checkpoints of rocks_; declared after it, so destroyed first.
  std::unique_ptr<RocksDbNativeCheckpoint> rocks_native_;

  int64_t num_late_records_dropped_ = 0;
  // The first late record dropped (its timestamp, the watermark then), for the note
  // firstLateRecordDropped; not in snapshots (a restored job names its first drop since).
  std::optional<std::pair<Timestamp, Timestamp>> first_late_dropped_;
  int64_t num_late_records_side_output_ = 0;
  int64_t num_windows_fired_ = 0;

  // stateBytesPeak (window_operator_state_bytes.cc).
  void SampleStateBytes();
  int64_t state_bytes_peak_ = 0;
  int64_t state_memory_bytes_peak_ = 0;  // StateMemoryBytes at its largest sample
  int64_t state_keys_peak_ = 0;          // NumStateKeys at its largest sample
  int64_t state_bytes_sampled_ = 0;
  int64_t records_since_state_sample_ = 0;
  int64_t state_panes_at_sample_ = 0;
};

}  // namespace tidemark

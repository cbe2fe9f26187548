#pragma once

// Internal to WindowOperator (window_operator.cc, window_operator_slices.cc,
// window_operator_snapshot.cc, window_operator_state_bytes.cc): the per-window tables of the
// sliced path (see the class comment in window_operator.h), on the heap backend and, within
// its budget, as the RocksDB backend's in-memory cache.
//
// Why they give the sliced path's output exactly: with tumbling windows and no allowed lateness
// a key's slices are its windows, a window takes records only while its max timestamp is above
// the watermark, and it fires once, when the watermark reaches that max timestamp, and is
// cleaned up then. The sliced path fires a window end's keys in key order (its timer buckets)
// and drops them; the tables fire the window's keys in the same order, from the same
// accumulator words, and drop the table.

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string_view>
#include <sys/mman.h>
#include <type_traits>
#include <utility>
#include <vector>

#include "operators/window/sliced_store.h"
#include "operators/window/window_operator.h"
#include "operators/window/window_state_bytes.h"
#include "runtime/state/key_groups.h"
#include "runtime/state/key_ref.h"
#include "runtime/state/keyed_state_backend.h"
#include "runtime/state/state_serializer.h"

namespace tidemark {

namespace window_tables_internal {
/// The large table arrays freed on this thread, kept for the next tables' allocations of the
/// same size: a window's table is freed when it fires and the next window's, of about as many
/// keys (`reserve_`), allocated soon after; given back to the system and taken again, each of
/// its pages would be faulted in and cleared anew (behind a watermark that lags by many windows,
/// as many tables at once). At most `kBlocks` arrays and `kMaxBytes` kept (the oldest freed
/// first); freed at thread exit.
class TableBlockCache {
 public:
  static constexpr size_t kMinBytes = size_t{256} << 10;
  static constexpr size_t kMaxBytes = size_t{64} << 20;
  static constexpr size_t kBlocks = 64;
  TableBlockCache() = default;
  TableBlockCache(const TableBlockCache&) = delete;
  TableBlockCache& operator=(const TableBlockCache&) = delete;
  ~TableBlockCache() {
    for (size_t i = 0; i < kBlocks; ++i) {
      Evict(i);
    }
  }
  /// A kept array of exactly `bytes`, or nullptr.
  void* Take(size_t bytes) {
    for (Block& b : blocks_) {
      if (b.p != nullptr && b.bytes == bytes) {
        kept_ -= bytes;
        return std::exchange(b.p, nullptr);
      }
    }
    return nullptr;
  }
  /// Keeps `p` (an array of `bytes`), freeing the oldest kept arrays beyond the limits.
  void Give(void* p, size_t bytes) {
    const size_t at = next_;
    next_ = (next_ + 1) % kBlocks;
    Evict(at);
    blocks_[at] = Block{p, bytes};
    kept_ += bytes;
    for (size_t i = next_; kept_ > kMaxBytes && i != at; i = (i + 1) % kBlocks) {
      Evict(i);
    }
    if (kept_ > kMaxBytes) {
      Evict(at);
    }
  }
  static TableBlockCache& ForThread() {
    thread_local TableBlockCache cache;
    return cache;
  }

 private:
  struct Block {
    void* p = nullptr;
    size_t bytes = 0;
  };
  void Evict(size_t i) {
    if (blocks_[i].p != nullptr) {
      std::free(blocks_[i].p);
      kept_ -= blocks_[i].bytes;
      blocks_[i] = Block{};
    }
  }
  std::array<Block, kBlocks> blocks_{};
  size_t next_ = 0;
  size_t kept_ = 0;  // bytes of the kept arrays
};
}  // namespace window_tables_internal

/// The allocator of the per-window tables: a table of 4 MiB or more (10^5 keys and up) is
/// placed on 2 MiB-aligned memory advised for transparent huge pages (MADV_HUGEPAGE), so that a
/// record's random lookup into it does not also miss the TLB (10^6 keys are 8,000 4-KiB pages
/// and 17 huge ones); smaller ones come from malloc. Either is given back with free, but for an
/// array of 256 KiB or more, which the thread's `TableBlockCache` keeps for the next tables.
template <typename T>
struct TableAllocator {
  using value_type = T;
  TableAllocator() = default;
  template <typename U>
  explicit TableAllocator(const TableAllocator<U>& /*other*/) {}
  T* allocate(size_t n) {
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t bytes = n * sizeof(T);
    void* p = nullptr;
    if (bytes >= window_tables_internal::TableBlockCache::kMinBytes) {
      p = window_tables_internal::TableBlockCache::ForThread().Take(bytes);
      if (p != nullptr) {
        return static_cast<T*>(p);
      }
    }
    if (bytes >= 2 * kHuge) {
      const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
      p = std::aligned_alloc(kHuge, rounded);
      if (p != nullptr) {
        (void)::madvise(p, rounded, MADV_HUGEPAGE);  // a hint: without it, 4-KiB pages
      }
    } else {
      p = std::malloc(bytes);
    }
    if (p == nullptr) {
      throw std::bad_alloc();
    }
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) >= window_tables_internal::TableBlockCache::kMinBytes) {
      window_tables_internal::TableBlockCache::ForThread().Give(p, n * sizeof(T));
      return;
    }
    std::free(p);
  }
  template <typename U>
  friend bool operator==(const TableAllocator& /*a*/, const TableAllocator<U>& /*b*/) {
    return true;
  }
};

/// A stage of `LoopAhead`: `fn(j)` for the item `distance` places ahead of the current one.
template <typename F>
struct Ahead {
  size_t distance;
  F& fn;
};
template <typename F>
Ahead(size_t, F&) -> Ahead<F>;

/// A loop over items 0..n-1 that requests each item's memory in stages ahead of its turn: before
/// `body(i)`, each stage's `fn(i + distance)` (the first items' stages first), in the stages'
/// order. Stops at the first `body` that returns false; returns how many returned true.
template <typename Body, typename... Stages>
[[gnu::always_inline]] inline size_t LoopAhead(size_t n, Body&& body, const Stages&... stages) {
  size_t most = 0;
  ((most = std::max(most, stages.distance)), ...);
  for (size_t j = 0; j < most && j < n; ++j) {
    ((j < stages.distance ? stages.fn(j) : void()), ...);
  }
  for (size_t i = 0; i < n; ++i) {
    ((i + stages.distance < n ? stages.fn(i + stages.distance) : void()), ...);
    if (!body(i)) {
      return i;
    }
  }
  return n;
}

/// The per-window tables of one key type and accumulator width, behind one interface (a call
/// per batch, watermark or snapshot; the per-record work is inside).
class WindowTablesBase {
 public:
  virtual ~WindowTablesBase() = default;
  /// For `ShortStringKey` tables, which cannot take a record whose key is not one short string:
  /// new `KeyRef` tables holding what these hold (each table's keys interned one table at a
  /// time, these left empty); nullptr for every other key type.
  virtual std::unique_ptr<WindowTablesBase> Widen() = 0;
  /// Adds the records of `records` in order; returns how many it took: the index of the first
  /// record it cannot take (`records.size`: all), which with the rest goes to the sliced store.
  virtual size_t AddBatch(RecordBatch& records) = 0;
  /// Adds one record; false (nothing done) when it cannot take it.
  virtual bool Add(StreamRecord& record) = 0;
  /// Fires and drops every table whose window's max timestamp is <= `watermark`, in window
  /// order, each in key order.
  virtual void Fire(Timestamp watermark) = 0;
  /// The tables' state into a new sliced store of the operator (`int_store_` or `key_store_`),
  /// as the sliced path would hold it: for snapshots and for leaving the tables.
  virtual void CopyToStore() = 0;
  /// Leaving the tables on the RocksDB backend: as CopyToStore, but each table is dropped once
  /// copied and the store is spilled to RocksDB as it fills (`WindowOperator::SpillLeavingTables`),
  /// so that the tables and the store together stay within the cache's budget. Leaves no table.
  virtual void MoveToStore() = 0;
  /// The bytes the tables' memory would peak at if `n` more keys were added to each table: the
  /// tables' bytes now, plus for each table that `n` new keys would make grow its grown array
  /// (the old one is freed only after the rehash). For the RocksDB backend's budget.
  virtual size_t PeakBytesAfter(size_t n) const = 0;
  /// True for int64 keys (the sliced store they stand for is the int64 one).
  virtual bool Int64Keys() const = 0;
  /// The key form: "int64", "short-string" or "interned".
  virtual const char* KeyForm() const = 0;
  /// Appends every key held (a key of several windows once or more) to `keys`.
  virtual void AppendKeys(std::vector<Key>& keys) const = 0;
  /// Writes `key`'s sliced state in the snapshot's form, exactly as `WriteSlicedKey` writes the
  /// sliced store `CopyToStore` would make (a bool: held, then its windows as slices).
  virtual void WriteKey(StateWriter& w, const Key& key) = 0;
  /// Takes the operator's sliced store (a restored one) into the tables and drops it; false,
  /// nothing done, when the store holds what the tables cannot (firing counts, a slice that is
  /// not an aligned window).
  virtual bool AdoptStore() = 0;
  /// Adds the tables' payload bytes, memory, panes and distinct keys to `out`.
  virtual void Measure(WindowOperator::StateFigures& out, size_t num_accs) const = 0;
  /// (key, window) accumulators held.
  virtual size_t NumPanes() const = 0;
  /// Distinct keys held.
  virtual size_t NumKeys() const = 0;
  /// The accumulator words of `key` in the window starting at `start`, or nullptr.
  virtual const uint64_t* Find(const Key& key, Timestamp start) const = 0;
};

/// Per-window tables with keys `K` (`int64_t`: every key a single non-NULL int64;
/// `ShortStringKey`: every key a single non-NULL string of at most 16 bytes, held inline in its
/// slot; `KeyRef`: any key, interned in the tables' own pool) and `N` accumulator words a key
/// (the slice words, zero-padded). One `absl::flat_hash_map` per open window, ascending by window
/// start. A record whose key the tables' `K` cannot hold is not taken (`AddBatch`, `Add`).
template <typename K, size_t N>
class WindowTables final : public WindowTablesBase {
  static constexpr bool kInline = std::is_same_v<K, ShortStringKey>;

 public:
  using Words = std::array<uint64_t, N>;
  using Map =
      absl::flat_hash_map<K, Words, typename KeyTraits<K>::MapHash, typename KeyTraits<K>::MapEq,
                          TableAllocator<std::pair<const K, Words>>>;
  struct Table {
    Timestamp start = 0;
    Map keys;
    /// `KeyRef` and `ShortStringKey` keys: the sum of `RowStateBytes` of the keys in `keys`,
    /// kept as keys go in (a table only loses keys when it fires, after it left `tables_`), so
    /// that `Measure` reads no key.
    int64_t key_bytes = 0;
  };

  // A table's memory for `capacity` slots (absl's one allocation of slots and control bytes,
  // rounded up to 2 MiB from 4 MiB as TableAllocator allocates it) and its interned keys' pool
  // entries (KeyRef keys: an estimate per key held, counted in each table holding it) for `keys`
  // keys.
  static size_t TableBytes(size_t capacity, size_t keys) {
    constexpr size_t kHuge = size_t{2} << 20;
    size_t bytes = capacity == 0 ? 0 : capacity * (sizeof(typename Map::value_type) + 1) + 32;
    if (bytes >= 2 * kHuge) {
      bytes = (bytes + kHuge - 1) / kHuge * kHuge;
    }
    if constexpr (std::is_same_v<K, KeyRef>) {
      bytes += keys * kInternedKeyBytes;
    }
    return bytes;
  }
  // The keys a table of `capacity` slots holds before it grows (absl: 7/8 of its slots).
  static size_t Growth(size_t capacity) { return capacity - capacity / 8; }
  // The capacity absl grows a table of `capacity` slots to so that it holds `keys` keys.
  static size_t GrownCapacity(size_t capacity, size_t keys) {
    size_t c = capacity == 0 ? 1 : capacity;
    while (Growth(c) < keys) {
      c = c * 2 + 1;
    }
    return c;
  }
  // A KeyRef key's pool entry (one cache line) and its values (a Key vector of one Value with a
  // short string): the tables' estimate, long strings not counted.
  static constexpr size_t kInternedKeyBytes = 64 + 24 + 40;

  explicit WindowTables(WindowOperator& op)
      : op_(op),
        slot_(op.options_.key_slots.empty() ? 0 : static_cast<size_t>(op.options_.key_slots[0])),
        owned_(op.OwnedKeyGroups()),
        max_parallelism_(op.context().max_parallelism),
        all_owned_(owned_.size() == max_parallelism_) {}

  ~WindowTables() override {
    tables_.clear();  // the keys' refs before the pool they point into
  }

  // Flattened: the table probe, the accumulator add and the key checks are inlined into the
  // loop (otherwise calls per record).
  [[gnu::flatten]] size_t AddBatch(RecordBatch& records) override {
    const size_t n = records.size;
    if constexpr (std::is_same_v<K, int64_t>) {
      if (!LargeTables()) {
        // Small tables (in the L2 cache): no look-ahead, whose extra probe per record costs
        // more than it saves.
        const size_t taken = LoopAhead(
            n, [&](size_t i) __attribute__((always_inline)) { return AddOne(records[i], 0); });
        op_.records_since_state_sample_ += static_cast<int64_t>(taken);
        return taken;
      }
      // A record's key is hashed kCtrlAt records ahead, its table's control bytes requested;
      // kSlotAt ahead (control bytes read) its slot.
      constexpr size_t kRing = 16;
      constexpr size_t kCtrlAt = 12;
      constexpr size_t kSlotAt = 6;
      std::array<size_t, kRing> hashes{};
      std::array<Map*, kRing> maps{};
      const size_t slot = slot_;
      auto ctrl_ahead = [&](size_t j) __attribute__((always_inline)) {
        const StreamRecord& r = records[j];
        Map* m = nullptr;
        if (r.has_timestamp && IsInt64Slot(r.row, static_cast<int>(slot)) && !r.row.IsNull(slot)) {
          if (Table* t = Peek(r.timestamp)) {
            m = &t->keys;
            const int64_t k = r.row.GetInt64(slot);
            hashes[j % kRing] = typename KeyTraits<K>::MapHash()(k);
            m->prefetch(k);
          }
        }
        maps[j % kRing] = m;
      };
      auto slot_ahead = [&](size_t j) __attribute__((always_inline)) {
        if (Map* m = maps[j % kRing]) {
          const SlotTouch t{hashes[j % kRing], 0,
                            static_cast<uint32_t>(sizeof(typename Map::value_type)),
                            SlotTouch::kSlot};
          (void)m->find(t);
        }
      };
      const size_t taken = LoopAhead(
          n, [&](size_t i) __attribute__((always_inline)) { return AddOne(records[i], 0); },
          Ahead{kCtrlAt, ctrl_ahead}, Ahead{kSlotAt, slot_ahead});
      op_.records_since_state_sample_ += static_cast<int64_t>(taken);
      return taken;
    } else if constexpr (kInline) {
      // Short string keys, held in the slot: a record's row is requested 16 records ahead
      // (written on the reader's core), its key made and hashed 12 ahead with its table's
      // control bytes requested, its slot 6 ahead. No key memory off the slot.
      constexpr size_t kRing = 16;
      std::array<ShortStringKey, kRing> keys;
      std::array<bool, kRing> fits{};
      std::array<Map*, kRing> maps{};
      const size_t slot = slot_;
      const std::vector<int>& slots = op_.options_.key_slots;
      auto make_key = [&](size_t j) __attribute__((always_inline)) {
        const StreamRecord& r = records[j];
        ShortStringKey& k = keys[j % kRing];
        fits[j % kRing] = ShortStringKey::FromRow(r.row, slot, slots, &k);
        return fits[j % kRing];
      };
      auto body = [&](size_t i) __attribute__((always_inline)) {
        return fits[i % kRing] && AddOne(records[i], 0, &keys[i % kRing]);
      };
      if (!LargeTables()) {
        // Small tables (in the L2 cache): the key made a record ahead, no probe ahead.
        auto key_ahead = [&](size_t j) __attribute__((always_inline)) {
          (void)make_key(j);
        };
        const size_t taken = LoopAhead(n, body, Ahead{1, key_ahead});
        op_.records_since_state_sample_ += static_cast<int64_t>(taken);
        return taken;
      }
      auto ctrl_ahead = [&](size_t j) __attribute__((always_inline)) {
        Map* m = nullptr;
        if (make_key(j) && records[j].has_timestamp) {
          m = PeekMap(records[j].timestamp);
          if (m != nullptr) {
            m->prefetch(keys[j % kRing]);
          }
        }
        maps[j % kRing] = m;
      };
      auto slot_ahead = [&](size_t j) __attribute__((always_inline)) {
        if (Map* m = maps[j % kRing]) {
          const ShortStringKey& k = keys[j % kRing];
          const SlotTouch t{typename KeyTraits<K>::MapHash()(k), k.hash64,
                            static_cast<uint32_t>(sizeof(typename Map::value_type)),
                            SlotTouch::kSlot};
          (void)m->find(t);
        }
      };
      auto row_ahead = [&](size_t j) __attribute__((always_inline)) {
        records[j].row.PrefetchValues();
      };
      const size_t taken =
          LoopAhead(n, body, Ahead{16, row_ahead}, Ahead{12, ctrl_ahead}, Ahead{6, slot_ahead});
      op_.records_since_state_sample_ += static_cast<int64_t>(taken);
      return taken;
    } else {
      // Interned keys: a record's row is requested 16 records ahead (written on the reader's
      // core), its key hashed 12 ahead with its table's control bytes requested, its slot 8
      // ahead and the key's pool entry (which a probe compares) 4 ahead. A key its table does
      // not hold yet (no slot's control byte matched) is looked up in `held_` instead: its
      // control bytes and slot requested 8 ahead, the entry of the key found there 4 ahead.
      constexpr size_t kRing = 16;
      std::array<uint64_t, kRing> hashes{};
      std::array<Map*, kRing> maps{};
      std::array<bool, kRing> fresh{};  // the key is not in its table (kSlot stage)
      const std::vector<int>& slots = op_.options_.key_slots;
      auto ctrl_ahead = [&](size_t j) __attribute__((always_inline)) {
        const StreamRecord& r = records[j];
        const KeyProbe probe = KeyProbe::Of(r.row, slots);
        hashes[j % kRing] = probe.hash64;
        Map* m = r.has_timestamp ? PeekMap(r.timestamp) : nullptr;
        if (m != nullptr) {
          m->prefetch(probe);
        }
        maps[j % kRing] = m;
      };
      auto touch = [&](size_t j, SlotTouch::Stage stage) __attribute__((always_inline)) {
        const uint64_t hash = hashes[j % kRing];
        const size_t map_hash =
            typename KeyTraits<K>::MapHash()(KeyProbe{nullptr, nullptr, nullptr, hash});
        if (Map* m = maps[j % kRing]) {
          const SlotTouch t{map_hash, hash, static_cast<uint32_t>(sizeof(typename Map::value_type)),
                            stage};
          (void)m->find(t);
          if (stage == SlotTouch::kSlot) {
            fresh[j % kRing] = !t.candidate;
            if (!t.candidate) {
              maps[j % kRing] = nullptr;  // not in the table: its key is looked up in held_
              held_.prefetch(KeyProbe{nullptr, nullptr, nullptr, hash});
            }
          }
        } else if (stage == SlotTouch::kSlot) {
          fresh[j % kRing] = false;
        } else if (fresh[j % kRing]) {
          const SlotTouch t{map_hash, hash, static_cast<uint32_t>(sizeof(KeyRef)), stage};
          (void)held_.find(t);
        }
      };
      auto row_ahead = [&](size_t j) __attribute__((always_inline)) {
        records[j].row.PrefetchValues();
      };
      auto slot_ahead = [&](size_t j) __attribute__((always_inline)) {
        touch(j, SlotTouch::kSlot);
      };
      auto entry_ahead = [&](size_t j) __attribute__((always_inline)) {
        touch(j, SlotTouch::kEntry);
      };
      const size_t taken = LoopAhead(
          n,
          [&](size_t i)
              __attribute__((always_inline)) { return AddOne(records[i], hashes[i % kRing]); },
          Ahead{16, row_ahead}, Ahead{12, ctrl_ahead}, Ahead{8, slot_ahead}, Ahead{4, entry_ahead});
      op_.records_since_state_sample_ += static_cast<int64_t>(taken);
      return taken;
    }
  }

  [[gnu::flatten]] bool Add(StreamRecord& record) override {
    if constexpr (kInline) {
      ShortStringKey k;
      return ShortStringKey::FromRow(record.row, slot_, op_.options_.key_slots, &k) &&
             AddOne(record, 0, &k);
    }
    uint64_t hash = 0;
    if constexpr (std::is_same_v<K, KeyRef>) {
      hash = KeyHash64(record.row, op_.options_.key_slots);
    }
    return AddOne(record, hash);
  }

  void Fire(Timestamp watermark) override {
    lo_ = 1;  // the watermark moved: the cached window may be late now
    hi_ = 0;
    cur_ = nullptr;
    if (tables_.empty() || tables_.front()->start + op_.size_ - 1 > watermark) {
      return;
    }
    // The keys' result rows go downstream kFiredBatch at a time, in firing order.
    const FiredBatching batching(op_.fired_batching_);
    while (!tables_.empty() && tables_.front()->start + op_.size_ - 1 <= watermark) {
      std::unique_ptr<Table> t = std::move(tables_.front());
      tables_.erase(tables_.begin());
      reserve_ = t->keys.size();
      FireTable(*t);
    }
    op_.FlushFired();
  }

  void CopyToStore() override {
    IntoNewStore([&](auto& store) { CopyInto(store); });
  }

  void MoveToStore() override {
    const size_t n = op_.slice_words_;
    auto move = [&](auto& store) {
      size_t since_spill = 0;
      while (!tables_.empty()) {
        std::unique_ptr<Table> t = std::move(tables_.front());
        tables_.erase(tables_.begin());
        for (const auto& [k, w] : t->keys) {
          AddToStore(store, *t, k, w, n);
          if (++since_spill == 4096) {
            since_spill = 0;
            op_.SpillLeavingTables(MemoryBytes() + TableBytes(t->keys.capacity(), t->keys.size()));
          }
        }
      }
      op_.SpillLeavingTables(0);
    };
    cur_ = nullptr;
    lo_ = 1;
    hi_ = 0;
    IntoNewStore(move);
  }

  size_t PeakBytesAfter(size_t n) const override {
    size_t bytes = 0;
    for (const auto& t : tables_) {
      const size_t capacity = t->keys.capacity();
      bytes += TableBytes(capacity, t->keys.size());
      if (t->keys.size() + n > Growth(capacity)) {
        bytes += TableBytes(GrownCapacity(capacity, t->keys.size() + n), n);
      }
    }
    return bytes;
  }

  bool Int64Keys() const override { return std::is_same_v<K, int64_t>; }

  const char* KeyForm() const override {
    if constexpr (std::is_same_v<K, int64_t>) {
      return "int64";
    } else if constexpr (kInline) {
      return "short-string";
    } else {
      return "interned";
    }
  }

  std::unique_ptr<WindowTablesBase> Widen() override {
    if constexpr (kInline) {
      auto wide = std::make_unique<WindowTables<KeyRef, N>>(op_);
      wide->TakeShortStringTables(*this);
      cur_ = nullptr;
      lo_ = 1;
      hi_ = 0;
      return wide;
    } else {
      return nullptr;
    }
  }

  void AppendKeys(std::vector<Key>& keys) const override {
    Key scratch;
    ForEachDistinctKey([&](const K& k) { keys.push_back(KeyTraits<K>::ToKey(k, scratch)); });
  }

  void WriteKey(StateWriter& w, const Key& key) override {
    // The key's windows ascending (the tables are), as the slices CopyInto would give it.
    starts_.clear();
    words_.clear();
    for (const auto& t : tables_) {
      if (const uint64_t* words = FindIn(*t, key)) {
        starts_.push_back(t->start);
        words_.push_back(words);
      }
    }
    w.WriteBool(!starts_.empty());
    if (starts_.empty()) {
      return;
    }
    const Timestamp first_max = starts_.front() + op_.size_ - 1;
    op_.WriteSlices(w, starts_.data(), words_.data(), starts_.size(), first_max, first_max);
    w.WriteU32(0);  // no firing counts without lateness
  }

  bool AdoptStore() override {
    if constexpr (std::is_same_v<K, int64_t>) {
      if (!op_.int_store_ || !Adopt(*op_.int_store_)) {
        return false;
      }
      op_.int_store_.reset();
    } else {
      if (!op_.key_store_ || !Adopt(*op_.key_store_)) {
        return false;
      }
      op_.key_store_.reset();
    }
    return true;
  }

  // O(tables), but for the distinct keys behind a watermark that lags by more than a window
  // (NumKeys): the keys' bytes are kept per table (`Table::key_bytes`), so no key is read.
  void Measure(WindowOperator::StateFigures& out, size_t num_accs) const override {
    int64_t bytes = 0;
    int64_t memory = 0;
    const auto panes = static_cast<int64_t>(NumPanes());
    for (const auto& t : tables_) {
      memory += static_cast<int64_t>(TableBytes(t->keys.capacity(), 0));
      if constexpr (!std::is_same_v<K, int64_t>) {
        // The sum over the table's keys of PaneStateBytes(RowStateBytes(key), num_accs).
        bytes += t->key_bytes + static_cast<int64_t>(t->keys.size()) * PaneStateBytes(0, num_accs);
      }
    }
    if constexpr (std::is_same_v<K, int64_t>) {
      bytes = panes * PaneStateBytes(ValueStateBytes(Value(int64_t{0})), num_accs);
    }
    out.bytes += bytes;
    out.memory_bytes += memory;
    out.panes += panes;
    out.keys += static_cast<int64_t>(NumKeys());
  }

  size_t NumPanes() const override {
    size_t n = 0;
    for (const auto& t : tables_) {
      n += t->keys.size();
    }
    return n;
  }

  size_t NumKeys() const override {
    if constexpr (std::is_same_v<K, KeyRef>) {
      return held_.size();
    } else {
      if (tables_.size() <= 1) {
        return tables_.empty() ? 0 : tables_.front()->keys.size();
      }
      return CountDistinctKeys();
    }
  }

  const uint64_t* Find(const Key& key, Timestamp start) const override {
    for (const auto& t : tables_) {
      if (t->start == start) {
        return FindIn(*t, key);
      }
    }
    return nullptr;
  }

  // `KeyRef` tables: takes the tables of `from` (`Widen`), each freed once its keys are interned
  // into its copy here.
  void TakeShortStringTables(WindowTables<ShortStringKey, N>& from) {
    static_assert(std::is_same_v<K, KeyRef>);
    reserve_ = from.reserve_;
    Key scratch;
    while (!from.tables_.empty()) {
      std::unique_ptr<typename WindowTables<ShortStringKey, N>::Table> src =
          std::move(from.tables_.front());
      from.tables_.erase(from.tables_.begin());
      auto t = std::make_unique<Table>();
      t->start = src->start;
      t->keys.reserve(src->keys.size());
      for (const auto& [k, w] : src->keys) {
        auto [it, inserted] =
            t->keys.try_emplace(Intern(KeyProbe{nullptr, nullptr, &k.ToKey(scratch), k.hash64}), w);
        if (inserted) {
          t->key_bytes += KeyStateBytes(it->first);
        }
      }
      tables_.push_back(std::move(t));  // (ascending, as `from`'s)
    }
  }

 private:
  template <typename, size_t>
  friend class WindowTables;

  // A new sliced store of the operator for the tables' keys (`int_store_` or `key_store_`),
  // filled by `fill(store)`.
  template <typename F>
  void IntoNewStore(F&& fill) {
    if constexpr (std::is_same_v<K, int64_t>) {
      op_.int_store_ = std::make_unique<SlicedStore<int64_t>>(max_parallelism_, owned_);
      fill(*op_.int_store_);
    } else {
      op_.key_store_ = std::make_unique<SlicedStore<KeyRef>>(max_parallelism_, owned_);
      fill(*op_.key_store_);
    }
  }

  // The tables' memory now (TableBytes of each).
  size_t MemoryBytes() const {
    size_t bytes = 0;
    for (const auto& t : tables_) {
      bytes += TableBytes(t->keys.capacity(), t->keys.size());
    }
    return bytes;
  }

  // `f(key)` once for every key held: behind a watermark that lags by many windows a key is in
  // many tables, so the keys seen are noted (O(panes), not a lookup in every other table).
  template <typename F>
  void ForEachDistinctKey(F&& f) const {
    seen_.clear();
    for (const auto& t : tables_) {
      for (const auto& [k, w] : t->keys) {
        if (tables_.size() == 1 || seen_.insert(k).second) {
          f(k);
        }
      }
    }
    seen_.clear();
  }

  // The distinct keys of several tables (NumKeys behind a watermark that lags by a window or
  // more, which each state sample reads): O(panes) without one large set of every key, whose
  // random inserts (a cache miss each) and growth cost as much as the records added between two
  // samples. The keys are spread by their hash's top bits over kParts parts of one array (a
  // counting pass, then sequential writes), then each part (panes / kParts keys: in the L2
  // cache) deduplicated in a small open-addressing table of indices.
  size_t CountDistinctKeys() const {
    static_assert(!std::is_same_v<K, KeyRef>);
    constexpr int kBits = 6;
    constexpr size_t kParts = size_t{1} << kBits;
    auto part_of = [](const K& k) {
      return static_cast<size_t>(KeyTraits<K>::Hash64(k) >> (64 - kBits));
    };
    std::array<size_t, kParts + 1> at{};
    for (const auto& t : tables_) {
      for (const auto& [k, w] : t->keys) {
        ++at[part_of(k) + 1];
      }
    }
    for (size_t i = 1; i <= kParts; ++i) {
      at[i] += at[i - 1];
    }
    std::vector<K> keys(at[kParts]);
    std::array<size_t, kParts> next{};
    std::copy_n(at.begin(), kParts, next.begin());
    for (const auto& t : tables_) {
      for (const auto& [k, w] : t->keys) {
        keys[next[part_of(k)]++] = k;
      }
    }
    constexpr uint32_t kEmpty = ~uint32_t{0};
    std::vector<uint32_t> slots;
    size_t n = 0;
    for (size_t p = 0; p < kParts; ++p) {
      const size_t size = at[p + 1] - at[p];
      size_t capacity = 16;
      while (capacity < 2 * size) {
        capacity *= 2;
      }
      slots.assign(capacity, kEmpty);
      const K* part = keys.data() + at[p];
      for (size_t i = 0; i < size; ++i) {
        // (The hash's low bits: the part took its top ones.)
        size_t s = static_cast<size_t>(KeyTraits<K>::Hash64(part[i])) & (capacity - 1);
        while (slots[s] != kEmpty && !(part[slots[s]] == part[i])) {
          s = (s + 1) & (capacity - 1);
        }
        if (slots[s] == kEmpty) {
          slots[s] = static_cast<uint32_t>(i);
          ++n;
        }
      }
    }
    return n;
  }

  // `RowStateBytes(k.key())`; a key of one short string from its pool entry (its values are
  // not read).
  static int64_t KeyStateBytes(const KeyRef& k) {
    if (k.IsShortString()) {
      return ValueStateBytes(Value()) + static_cast<int64_t>(k.ShortString().size());
    }
    return RowStateBytes(k.key());
  }
  // `RowStateBytes` of the key of one string.
  static int64_t KeyStateBytes(const ShortStringKey& k) {
    return ValueStateBytes(Value()) + static_cast<int64_t>(k.len);
  }

  // A ref to the probe's key in the pool: the one the tables already share when one holds the
  // key (its entry read, not copied), else a new entry, noted in `held_`.
  KeyRef Intern(const KeyProbe& probe) {
    if (auto h = held_.find(probe); h != held_.end()) {
      return *h;
    }
    KeyRef ref = pool_.Make(probe);
    held_.insert(ref);
    return ref;
  }

  // `key`'s words in `t`, or nullptr.
  static const uint64_t* FindIn(const Table& t, const Key& key) {
    if constexpr (std::is_same_v<K, int64_t>) {
      const int64_t* v = key.size() == 1 ? std::get_if<int64_t>(&key[0]) : nullptr;
      auto it = v == nullptr ? t.keys.end() : t.keys.find(*v);
      return it == t.keys.end() ? nullptr : it->second.data();
    } else if constexpr (kInline) {
      ShortStringKey k;
      if (!ShortStringKey::FromKey(key, &k)) {
        return nullptr;
      }
      auto it = t.keys.find(k);
      return it == t.keys.end() ? nullptr : it->second.data();
    } else {
      auto it = t.keys.find(KeyProbe::Of(key));
      return it == t.keys.end() ? nullptr : it->second.data();
    }
  }

  // The table of the open window holding `t` (no new one, no late check), for the look-ahead.
  [[gnu::always_inline]] Table* Peek(Timestamp t) const {
    if (t >= lo_ && t < hi_) {
      return cur_;
    }
    for (const auto& table : tables_) {
      if (t >= table->start && t - table->start < op_.size_) {
        return table.get();
      }
    }
    return nullptr;
  }
  [[gnu::always_inline]] Map* PeekMap(Timestamp t) const {
    Table* table = Peek(t);
    return table != nullptr ? &table->keys : nullptr;
  }

  // The table of the window holding `t` (made when absent), or nullptr when that window is late
  // (its max timestamp <= the watermark; no allowed lateness).
  // Out of line: once per window in a run of in-order records.
  [[gnu::noinline]] Table* TableOf(Timestamp t) {
    const Timestamp start = TimeWindow::GetWindowStartWithOffset(t, op_.offset_, op_.size_);
    if (start + op_.size_ - 1 <= op_.timer_service_->CurrentWatermark()) {
      return nullptr;
    }
    cur_ = TableAt(start);
    lo_ = start;
    hi_ = start + op_.size_;
    return cur_;
  }

  Table* TableAt(Timestamp start) {
    auto it =
        std::lower_bound(tables_.begin(), tables_.end(), start,
                         [](const std::unique_ptr<Table>& a, Timestamp s) { return a->start < s; });
    if (it == tables_.end() || (*it)->start != start) {
      auto t = std::make_unique<Table>();
      t->start = start;
      // A window has about as many keys as the last one fired: one allocation, no rehash; on
      // the RocksDB backend only when that fits the budget beside the other tables (else the
      // table grows as keys come, and the check before each batch leaves the tables in time).
      const size_t budget = op_.tables_budget_;
      if (budget == 0 ||
          MemoryBytes() + TableBytes(GrownCapacity(0, reserve_), reserve_) <= budget) {
        t->keys.reserve(reserve_);
      }
      it = tables_.insert(it, std::move(t));
    }
    return it->get();
  }

  // Whether a table may outgrow the L2 cache (8192 keys: the sliced path's threshold too).
  bool LargeTables() const {
    constexpr size_t kLargeKeys = 8192;
    if (reserve_ > kLargeKeys) {
      return true;
    }
    for (const auto& t : tables_) {
      if (t->keys.size() > kLargeKeys) {
        return true;
      }
    }
    return false;
  }

  // `record` into its window's table (`hash`: its key's KeyHash64 for KeyRef keys; `key`: its
  // key for ShortStringKey keys); false when the tables cannot take it (nothing done).
  [[gnu::always_inline]] bool AddOne(StreamRecord& record, uint64_t hash,
                                     const ShortStringKey* key = nullptr) {
    const Row& row = record.row;
    if constexpr (std::is_same_v<K, int64_t>) {
      // (The tables are int64 only for a single key field.)
      if (!IsInt64Slot(row, static_cast<int>(slot_)) || row.IsNull(slot_)) [[unlikely]] {
        return false;
      }
    }
    Table* t = cur_;
    if (!record.has_timestamp || record.timestamp < lo_ || record.timestamp >= hi_) [[unlikely]] {
      // Another window than the last record's (the cached one is within the sliced range).
      if (!WindowOperator::InSlicedRange(record)) {
        return false;
      }
      t = TableOf(record.timestamp);
    }
    Words* words = nullptr;
    if constexpr (std::is_same_v<K, int64_t>) {
      const int64_t k = row.GetInt64(slot_);
      if (!all_owned_ && !owned_.Contains(KeyGroupForHash(Int64KeyHash64(k), max_parallelism_)))
          [[unlikely]] {
        return false;  // the sliced store reports the routing error
      }
      if (t == nullptr) [[unlikely]] {
        op_.HandleLateElement(record, op_.assigner_->AssignWindows(record, op_));
        return true;
      }
      words = &t->keys.try_emplace(k).first->second;
    } else if constexpr (kInline) {
      if (!all_owned_ && !owned_.Contains(KeyGroupForHash(key->hash64, max_parallelism_)))
          [[unlikely]] {
        return false;
      }
      if (t == nullptr) [[unlikely]] {
        op_.HandleLateElement(record, op_.assigner_->AssignWindows(record, op_));
        return true;
      }
      auto [it, inserted] = t->keys.try_emplace(*key);
      if (inserted) {
        t->key_bytes += KeyStateBytes(*key);
      }
      words = &it->second;
    } else {
      if (!all_owned_ && !owned_.Contains(KeyGroupForHash(hash, max_parallelism_))) [[unlikely]] {
        return false;
      }
      if (t == nullptr) [[unlikely]] {
        op_.HandleLateElement(record, op_.assigner_->AssignWindows(record, op_));
        return true;
      }
      const KeyProbe probe{&row, &op_.options_.key_slots, nullptr, hash};
      auto it = t->keys.find(probe);
      if (it == t->keys.end()) {
        // Interned before it goes into the table (interning may throw; see
        // KeyedStateBackend::Emplace).
        it = t->keys.try_emplace(Intern(probe)).first;
        t->key_bytes += KeyStateBytes(it->first);
      }
      words = &it->second;
    }
    op_.slice_aggs_.Add(words->data(), row, op_.aggregating_->NextArrival(), op_.slice_strings_);
    return true;
  }

  void FireTable(Table& t) {
    // Key order, as the sliced path's timer buckets fire a window end's keys.
    if constexpr (std::is_same_v<K, int64_t>) {
      due_.clear();
      due_.reserve(t.keys.size());
      for (const auto& [k, w] : t.keys) {
        due_.emplace_back(k, w);
      }
      t.keys = Map();  // freed now: the rows below may allocate
      std::sort(due_.begin(), due_.end(),
                [](const std::pair<int64_t, Words>& a, const std::pair<int64_t, Words>& b) {
                  return a.first < b.first;
                });
      for (const auto& [k, w] : due_) {
        op_.FireTableWindow(KeyTraits<int64_t>::ToKey(k, op_.current_key_), w.data(), t.start,
                            nullptr);
      }
      due_.clear();
    } else if constexpr (kInline) {
      // The keys and words copied out (the table then freed whole), the keys' order found from
      // their own bytes (SortShortStringKeys), each fired with its key as a string: no key
      // memory off the slots is read.
      due_.clear();
      due_.reserve(t.keys.size());
      for (const auto& [k, w] : t.keys) {
        due_.emplace_back(k, w);
      }
      t.keys = Map();  // freed now: the rows below may allocate
      const size_t n = due_.size();
      due_sorted_keys_.resize(n);
      for (size_t i = 0; i < n; ++i) {
        due_sorted_keys_[i] = due_[i].first;
      }
      SortShortStringKeys(due_sorted_keys_.data(), n, sort_scratch_, due_order_);
      constexpr size_t kAhead = 8;
      for (size_t i = 0; i < n; ++i) {
        if (i + kAhead < n) {
          __builtin_prefetch(&due_[due_order_[i + kAhead]]);
        }
        const auto& [k, w] = due_[due_order_[i]];
        const std::string_view s = k.view();
        op_.FireTableWindow(k.ToKey(op_.current_key_), w.data(), t.start, &s);
      }
      due_.clear();
    } else {
      // The table's keys and words moved out slot by slot (extract: no entry is read, no
      // reference count written; the table is then freed whole), then the keys sorted with
      // the permutation that the words follow.
      due_keys_.clear();
      due_words_.clear();
      due_keys_.reserve(t.keys.size());
      due_words_.reserve(t.keys.size());
      for (auto it = t.keys.begin(); it != t.keys.end();) {
        auto node = t.keys.extract(it++);
        due_keys_.push_back(std::move(node.key()));
        due_words_.push_back(node.mapped());
      }
      t.keys = Map();  // freed now: the rows below may allocate
      SortUniqueKeys(due_keys_, sort_scratch_, &due_order_);
      const size_t n = due_keys_.size();
      // Each key's pool entry (the result row's key) is requested a few keys ahead, its
      // `held_` slot too (its hash is in the ref: no entry read), and its words.
      constexpr size_t kAhead = 8;
      for (size_t j = 0; j < kAhead && j < n; ++j) {
        held_.prefetch(due_keys_[j]);
        due_keys_[j].PrefetchEntry();
        __builtin_prefetch(due_words_[due_order_[j]].data());
      }
      for (size_t i = 0; i < n; ++i) {
        if (i + kAhead < n) {
          held_.prefetch(due_keys_[i + kAhead]);
          due_keys_[i + kAhead].PrefetchEntry();
          __builtin_prefetch(due_words_[due_order_[i + kAhead]].data());
          due_keys_[i + kAhead / 2].PrefetchValues();
        }
        KeyRef& key = due_keys_[i];
        std::string_view short_string;
        if (key.IsShortString()) {
          short_string = key.ShortString();
        }
        op_.FireTableWindow(key.key(), due_words_[due_order_[i]].data(), t.start,
                            key.IsShortString() ? &short_string : nullptr);
        // Dropped while the key's entry is cached; the key leaves `held_` with its last table
        // (its refs: this one, which was the table's, and `held_`'s).
        if (key.use_count() == 2) {
          held_.erase(key);
        }
        key = KeyRef();
      }
      due_keys_.clear();
      due_words_.clear();
    }
  }

  template <typename Store>
  void CopyInto(Store& store) {
    const size_t n = op_.slice_words_;
    for (const auto& t : tables_) {
      for (const auto& [k, w] : t->keys) {
        AddToStore(store, *t, k, w, n);
      }
    }
  }

  // `k`'s window of `t` (its words `w`) into `store`, as the sliced path holds it; the tables'
  // windows go in ascending.
  template <typename Store>
  void AddToStore(Store& store, const Table& t, const K& k, const Words& w, size_t n) {
    auto [ref, ks] = [&] {
      if constexpr (kInline) {
        store.recent.Invalidate();  // an insert may move every state
        return store.keys.Emplace(KeyProbe{nullptr, nullptr, &k.ToKey(scratch_key_), k.hash64});
      } else {
        return EmplaceFromKey(store, k);
      }
    }();
    const bool first = ks->starts.empty();
    ks->starts.push_back(t.start);
    ks->accs.insert(ks->accs.end(), w.begin(), w.begin() + static_cast<std::ptrdiff_t>(n));
    if (first) {
      // The key's first window (the tables ascend; MoveToStore: or its first since it was
      // spilled, a partial state as a record makes): its next firing and live timer, where the
      // sliced path keeps them without lateness (the first slice's drop time is its window's
      // max timestamp too).
      ks->next_fire = t.start + op_.size_ - 1;
      ks->timer = ks->next_fire;
      store.timers.Add(ks->timer, *ref);
    }
  }

  template <typename Store>
  bool Adopt(Store& store) {
    if (!store.firings.empty()) {
      return false;
    }
    bool aligned = true;
    store.keys.ForEach([&](int, const auto&, const SlicedKeyState& ks) {
      for (Timestamp s : ks.starts) {
        aligned = aligned && InSlicedRange(s) &&
                  TimeWindow::GetWindowStartWithOffset(s, op_.offset_, op_.size_) == s;
      }
    });
    if constexpr (kInline) {
      store.keys.ForEach([&](int, const auto& k, const SlicedKeyState&) {
        ShortStringKey sk;
        aligned = aligned && ShortStringKey::FromKey(k.key(), &sk);
      });
    }
    if (!aligned) {
      return false;
    }
    const size_t n = op_.slice_words_;
    store.keys.ForEach([&](int, const auto& k, const SlicedKeyState& ks) {
      for (size_t i = 0; i < ks.starts.size(); ++i) {
        Table* t = TableAt(ks.starts[i]);
        Words* w = nullptr;
        if constexpr (std::is_same_v<K, int64_t>) {
          w = &t->keys.try_emplace(k).first->second;
        } else if constexpr (kInline) {
          ShortStringKey sk;
          (void)ShortStringKey::FromKey(k.key(), &sk);  // (every key fits: checked above)
          auto [it, inserted] = t->keys.try_emplace(sk);
          if (inserted) {
            t->key_bytes += KeyStateBytes(sk);
          }
          w = &it->second;
        } else {
          auto [it, inserted] =
              t->keys.try_emplace(Intern(KeyProbe{nullptr, nullptr, &k.key(), k.hash64()}));
          if (inserted) {
            t->key_bytes += KeyStateBytes(it->first);
          }
          w = &it->second;
        }
        std::copy_n(ks.accs.data() + i * n, n, w->data());
      }
    });
    return true;
  }
  static bool InSlicedRange(Timestamp t) {
    return t > -WindowOperator::kMaxSlicedTimestamp && t < WindowOperator::kMaxSlicedTimestamp;
  }

  WindowOperator& op_;
  size_t slot_;  // int64 keys: the key's input slot
  KeyGroupRange owned_;
  int max_parallelism_;
  bool all_owned_;
  KeyPool pool_;  // KeyRef keys' values; declared before the tables (destroyed after them)
  // `KeyRef` keys: every key some table holds, once; the tables' refs to a key share its pool
  // entry (one entry a key, not one a pane: behind a watermark that lags by many windows a key
  // is in many tables). Its size is the distinct keys held.
  absl::flat_hash_set<KeyRef, KeyTraits<KeyRef>::MapHash, KeyTraits<KeyRef>::MapEq> held_;
  std::vector<std::unique_ptr<Table>> tables_;  // ascending start
  // The table of the last record's window [lo_, hi_) (empty: lo_ > hi_), valid until the
  // watermark moves (Fire) or a table is made.
  Table* cur_ = nullptr;
  Timestamp lo_ = 1;
  Timestamp hi_ = 0;
  size_t reserve_ = 0;  // keys of the last window fired
  // int64 and ShortStringKey keys: a window's (key, words) to fire
  std::vector<std::pair<K, Words>> due_;
  std::vector<ShortStringKey> due_sorted_keys_;  // ShortStringKey keys: due_'s keys, for the sort
  Key scratch_key_;                              // ShortStringKey keys: a key as a `Key`
  std::vector<KeyRef> due_keys_;                 // KeyRef keys: a window's keys to fire,
  std::vector<Words> due_words_;                 // their words (in the table's order)
  // KeyRef keys: due_keys_[i]'s index into due_words_; ShortStringKey keys: the i-th key's
  // index into due_
  std::vector<uint32_t> due_order_;
  // ForEachDistinctKey's scratch: the keys seen.
  mutable absl::flat_hash_set<K, typename KeyTraits<K>::MapHash, typename KeyTraits<K>::MapEq>
      seen_;
  std::vector<Timestamp> starts_;       // WriteKey's scratch: the key's windows
  std::vector<const uint64_t*> words_;  // and their words
  KeySortScratch sort_scratch_;
};

}  // namespace tidemark

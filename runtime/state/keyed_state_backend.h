#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/hash/hash.h>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/core/checksum.h"
#include "runtime/core/errors.h"
#include "runtime/core/key.h"
#include "runtime/core/prefetch.h"
#include "runtime/core/timestamp.h"
#include "runtime/state/key_groups.h"
#include "runtime/state/key_ref.h"

namespace tidemark {

/// How a keyed-state key type is hashed: `Hash64` is the stable key-group hash (XXH3 of the
/// canonical bytes, runtime/state/key_groups.h), `MapHash` / `MapEq` the in-memory table's hash
/// and equality, `Arena` what the backend keeps beside its tables for the keys' bytes.
/// `int64_t` is the fast path for a key of one non-NULL int64 (or timestamp) field: no buffer,
/// no variant. `KeyRef` is the fixed-width form of every other key (strings, several fields):
/// an interned handle whose values live once in the backend's `KeyPool`, looked up by a
/// `KeyProbe` over the record's fields without building a `Key`. `Key` (a row of values) is the
/// general form.
template <typename K>
struct KeyTraits;

/// No arena: the key is its own bytes.
struct NoKeyArena {};

/// Requests the memory a keyed-state value keeps off its table slot (heap buffers), for
/// `KeyedStateBackend::Touch`. A value type with such buffers declares an overload beside it
/// (found by argument-dependent lookup); this one, for every other type, requests nothing.
template <typename V>
[[gnu::always_inline]] inline void PrefetchOutOfLine(const V& /*value*/) {}

/// A table probe that matches no key, for loops that look many keys up and request each key's
/// memory a few keys ahead (`KeyedStateBackend::Touch`). A `find` with it visits the slots whose
/// control byte matches the key's hash (almost always only the key's own slot, 1/128 a stray
/// one) and, per `stage`, requests: `kSlot` the slot's cache lines (reading only control bytes:
/// absl's own `prefetch` requests only the first slot of the key's 16-slot group, which for an
/// 80-byte slot is the key's own line one time in 16); `kEntry` (slot read, `KeyRef` keys) the
/// interned key's pool entry, and (through `PrefetchOutOfLine`) the slot value's own buffers off
/// the slot; `kValues` (entry read) the key's values. Each stage reads what the stage before it
/// requested.
struct SlotTouch {
  enum Stage : uint8_t { kSlot, kEntry, kValues };
  size_t map_hash = 0;  // the key's `MapHash`
  uint64_t hash64 = 0;  // the key's `Hash64`
  uint32_t slot_bytes = 0;
  Stage stage = kSlot;
  /// Set by the `kEntry` stage: the key in the slot whose hash matched (the first member of the
  /// slot's (key, value) pair), for `KeyedStateBackend::Touch` to reach the value.
  mutable const void* matched = nullptr;
  /// Set by the `kSlot` stage (`KeyRef` keys): a slot's control byte matched the key's, so the
  /// key may be held (false: it is not, and the later stages would find nothing).
  mutable bool candidate = false;

  [[gnu::always_inline]] void RequestSlot(const void* slot) const {
    PrefetchLines(slot, slot_bytes);
  }
};

template <>
struct KeyTraits<int64_t> {
  static uint64_t Hash64(int64_t k) { return Int64KeyHash64(k); }
  struct MapHash {
    using is_transparent = void;
    size_t operator()(int64_t k) const { return absl::Hash<int64_t>()(k); }
    size_t operator()(const SlotTouch& t) const { return t.map_hash; }
  };
  struct MapEq {
    using is_transparent = void;
    bool operator()(int64_t a, int64_t b) const { return a == b; }
    [[gnu::always_inline]] bool operator()(const int64_t& a, const SlotTouch& t) const {
      if (t.stage == SlotTouch::kSlot) {
        t.RequestSlot(&a);
      }
      return false;
    }
  };
  using Arena = NoKeyArena;
  static int64_t Intern(int64_t k, Arena&) { return k; }
  static const Key& ToKey(int64_t k, Key& scratch) {
    if (scratch.size() != 1) {
      scratch.assign(1, Value(k));
    } else if (int64_t* v = std::get_if<int64_t>(&scratch[0])) {
      *v = k;
    } else {
      scratch[0] = k;
    }
    return scratch;
  }
};

template <>
struct KeyTraits<Key> {
  static uint64_t Hash64(const Key& k) { return KeyHash64(k); }
  /// Not the key-group hash itself: a table holding one key group would see the same low bits
  /// (the group) in every key's hash, which are the bits an open-addressing table probes with.
  struct MapHash {
    size_t operator()(const Key& k) const { return static_cast<size_t>(Mix64(KeyHash()(k))); }
  };
  using MapEq = std::equal_to<Key>;
  using Arena = NoKeyArena;
  static const Key& Intern(const Key& k, Arena&) { return k; }
  static const Key& ToKey(const Key& k, Key& /*scratch*/) { return k; }
};

template <>
struct KeyTraits<KeyRef> {
  static uint64_t Hash64(const KeyRef& k) { return k.hash64(); }
  static uint64_t Hash64(const KeyProbe& p) { return p.hash64; }
  /// The key-group hash remixed (see `KeyTraits<Key>::MapHash`); a `KeyProbe` hashes as the
  /// `KeyRef` of its values.
  struct MapHash {
    using is_transparent = void;
    // Always inlined: a probe of a window end's keys hashes each two or three times.
    [[gnu::always_inline]] size_t operator()(const KeyRef& k) const {
      return static_cast<size_t>(Mix64(k.hash64()));
    }
    [[gnu::always_inline]] size_t operator()(const KeyProbe& p) const {
      return static_cast<size_t>(Mix64(p.hash64));
    }
    size_t operator()(const SlotTouch& t) const { return t.map_hash; }
  };
  struct MapEq {
    using is_transparent = void;
    bool operator()(const KeyRef& a, const KeyRef& b) const { return a == b; }
    bool operator()(const KeyRef& a, const KeyProbe& p) const {
      return a.hash64() == p.hash64 && p.Equals(a);
    }
    bool operator()(const KeyProbe& p, const KeyRef& a) const { return (*this)(a, p); }
    [[gnu::always_inline]] bool operator()(const KeyRef& a, const SlotTouch& t) const {
      switch (t.stage) {
        case SlotTouch::kSlot:
          t.RequestSlot(&a);
          t.candidate = true;
          break;
        case SlotTouch::kEntry:
          if (a.hash64() == t.hash64) {
            a.PrefetchEntry();
            t.matched = &a;
          }
          break;
        case SlotTouch::kValues:
          if (a.hash64() == t.hash64) {
            a.PrefetchValues();
          }
          break;
      }
      return false;
    }
  };
  using Arena = KeyPool;
  static KeyRef Intern(const KeyProbe& p, Arena& pool) { return pool.Make(p); }
  static const Key& ToKey(const KeyRef& k, Key& /*scratch*/) { return k.key(); }
  static const Key& ToKey(const KeyProbe& p, Key& scratch) {
    scratch = p.ToKey();
    return scratch;
  }
};

template <>
struct KeyTraits<ShortStringKey> {
  static uint64_t Hash64(const ShortStringKey& k) { return k.hash64; }
  /// The key-group hash remixed (see `KeyTraits<Key>::MapHash`).
  struct MapHash {
    using is_transparent = void;
    [[gnu::always_inline]] size_t operator()(const ShortStringKey& k) const {
      return static_cast<size_t>(Mix64(k.hash64));
    }
    size_t operator()(const SlotTouch& t) const { return t.map_hash; }
  };
  struct MapEq {
    using is_transparent = void;
    [[gnu::always_inline]] bool operator()(const ShortStringKey& a, const ShortStringKey& b) const {
      return a == b;
    }
    [[gnu::always_inline]] bool operator()(const ShortStringKey& a, const SlotTouch& t) const {
      if (t.stage == SlotTouch::kSlot) {
        t.RequestSlot(&a);
        t.candidate = true;
      }
      return false;
    }
  };
  using Arena = NoKeyArena;
  static const Key& ToKey(const ShortStringKey& k, Key& scratch) { return k.ToKey(scratch); }
};

/// Keyed state of one operator subtask: a value `V` per key, kept per key group. Mirrors the role
/// of Flink's `HeapKeyedStateBackend` (its `StateTable`s are per key group too), with flat
/// open-addressing tables (`absl::flat_hash_map`) holding the values inline.
///
/// - `K`: `int64_t` (single int64 key, see `KeyTraits`), `KeyRef` (any other key, its values
///   stored once in the backend's `KeyPool`) or `Key`.
/// - Key groups: `KeyGroupForHash(KeyTraits<K>::Hash64(key), max_parallelism)`; the subtask
///   owns `range`; a key outside it is a routing error (`Error`).
/// - Steady state (an existing key, or a key re-inserted into a table that has held as many
///   keys before) allocates nothing.
///
/// Threading: the owning operator's mailbox thread only. References returned stay valid until
/// the next insert or erase into the same key group.
template <typename K, typename V>
class KeyedStateBackend {
 public:
  using Map =
      absl::flat_hash_map<K, V, typename KeyTraits<K>::MapHash, typename KeyTraits<K>::MapEq>;

  KeyedStateBackend(int max_parallelism, KeyGroupRange range)
      : max_parallelism_(max_parallelism),
        range_(range),
        group_mask_(max_parallelism > 1 && (max_parallelism & (max_parallelism - 1)) == 0
                        ? static_cast<uint64_t>(max_parallelism - 1)
                        : 0),
        groups_(static_cast<size_t>(std::max(range.size(), 0))) {
    TM_CHECK(range.size() >= 1 && range.start >= 0 && range.end < max_parallelism,
             "keyed state: key group range [{}, {}] of max parallelism {}", range.start, range.end,
             max_parallelism);
  }

  int max_parallelism() const { return max_parallelism_; }
  const KeyGroupRange& key_group_range() const { return range_; }

  /// The key group of `key`.
  template <typename Src>
  int KeyGroupOf(const Src& key) const {
    return GroupOfHash(KeyTraits<K>::Hash64(key));
  }
  /// The key group of a key hash (`KeyTraits<K>::Hash64`).
  int GroupOfHash(uint64_t hash) const {
    // A power-of-two max parallelism (the default 128) takes the low bits: the same group as
    // `KeyGroupForHash`, without a 64-bit division per record.
    return group_mask_ != 0 ? static_cast<int>(hash & group_mask_)
                            : KeyGroupForHash(hash, max_parallelism_);
  }

  /// The table of `key`'s group (`key`: a `K`, or a `KeyProbe` for `KeyRef` keys). Throws
  /// `Error` when this subtask does not own the group.
  template <typename Src>
  Map& TableOf(const Src& key) {
    return TableOfHash(key, KeyTraits<K>::Hash64(key));
  }
  /// `TableOf` with the key's hash known.
  template <typename Src>
  Map& TableOfHash(const Src& key, uint64_t hash64) {
    const int kg = GroupOfHash(hash64);
    if (!range_.Contains(kg)) [[unlikely]] {
      ThrowNotOwned(key, kg);
    }
    return groups_[static_cast<size_t>(kg - range_.start)];
  }

  /// The value of `key`, default-constructed if absent; `inserted` tells which.
  std::pair<V*, bool> GetOrCreate(const K& key) {
    auto [it, inserted] = TableOf(key).try_emplace(key);
    return {&it->second, inserted};
  }
  /// The entry of the key `src` denotes (a `K`, or a `KeyProbe` for `KeyRef` keys: the key is
  /// interned into the backend's arena only when absent), its value default-constructed if
  /// absent. The key pointer is the table's copy (valid as the value's).
  template <typename Src>
  std::pair<const K*, V*> Emplace(const Src& src) {
    Map& m = TableOf(src);
    if constexpr (std::is_same_v<Src, K> &&
                  std::is_same_v<typename KeyTraits<K>::Arena, NoKeyArena>) {
      auto it = m.try_emplace(src).first;  // one probe, nothing to intern
      return {&it->first, &it->second};
    } else {
      // A key not held is interned before it goes into the table: interning may throw
      // (bad_alloc), and absl's lazy_emplace would then leave a slot marked full but never
      // constructed, which the table's destructor destroys. The second probe costs only a new key.
      auto it = m.find(src);
      if (it == m.end()) {
        it = m.try_emplace(KeyTraits<K>::Intern(src, arena_)).first;
      }
      return {&it->first, &it->second};
    }
  }
  /// `key` with its hash known: `hash64` is `KeyTraits<K>::Hash64(key)`, which the caller computed
  /// once for this and `PrefetchHashed` (a loop over a batch a few keys ahead). Keys without an
  /// arena only (int64). Throws `Error` as `TableOf`.
  std::pair<const K*, V*> EmplaceHashed(const K& key, uint64_t hash64) requires
      std::is_same_v<typename KeyTraits<K>::Arena, NoKeyArena> {
    auto it = TableOfHash(key, hash64).try_emplace(key).first;
    return {&it->first, &it->second};
  }
  /// The value of `key` with its hash known (as `EmplaceHashed`), or nullptr: the key is not
  /// held, or its group is not this subtask's (where `EmplaceHashed` throws).
  // Flattened: absl's find is otherwise a call per record in the int64 batch loops.
  [[gnu::flatten]] V* FindHashed(const K& key, uint64_t hash64) requires
      std::is_same_v<typename KeyTraits<K>::Arena, NoKeyArena> {
    const int kg = GroupOfHash(hash64);
    if (!range_.Contains(kg)) [[unlikely]] {
      return nullptr;
    }
    Map& m = groups_[static_cast<size_t>(kg - range_.start)];
    auto it = m.find(key);
    return it == m.end() ? nullptr : &it->second;
  }
  /// `Prefetch` with the key's hash known (as `EmplaceHashed`).
  // Both prefetches are always inlined: GCC takes an out-of-line copy, which only reads memory
  // and requests a cache line, for a pure function and deletes the call, whose result is unused.
  [[gnu::always_inline]] void PrefetchHashed(const K& key, uint64_t hash64) const {
    const int kg = GroupOfHash(hash64);
    if (range_.Contains(kg)) {
      groups_[static_cast<size_t>(kg - range_.start)].prefetch(key);
    }
  }
  /// Requests `key`'s memory for a lookup a few keys later (`stage`: see `SlotTouch`; a loop
  /// calls the stages for a key in order, a few keys apart, so each reads what the one before
  /// requested). `key`: a `K`, or a `KeyProbe` for `KeyRef` keys; `hash64` its `Hash64`. Finds
  /// nothing and changes nothing; a key of a group this subtask does not own is ignored.
  /// Returns false when the key is certainly not held (`KeyRef` keys: no slot's control byte
  /// matched at `kSlot`, no slot's hash at `kEntry`), so a loop can skip its later stages;
  /// true otherwise (always for other key types).
  template <typename Src = K>
  [[gnu::always_inline]] bool Touch(const Src& key, uint64_t hash64, SlotTouch::Stage stage) {
    const int kg = GroupOfHash(hash64);
    if (range_.Contains(kg)) {
      const SlotTouch t{typename KeyTraits<K>::MapHash()(key), hash64,
                        static_cast<uint32_t>(sizeof(typename Map::value_type)), stage};
      (void)groups_[static_cast<size_t>(kg - range_.start)].find(t);
      if (t.matched != nullptr) {
        // The slot holds a pair whose first member is the key `matched` points at.
        static_assert(std::is_standard_layout_v<typename Map::value_type>);
        PrefetchOutOfLine(reinterpret_cast<const typename Map::value_type*>(t.matched)->second);
      }
      if constexpr (std::is_same_v<K, KeyRef>) {
        return stage == SlotTouch::kSlot ? t.candidate : t.matched != nullptr;
      }
    }
    return true;
  }
  /// The entry of `src` (as `Emplace`), or {nullptr, nullptr}.
  template <typename Src>
  std::pair<const K*, V*> FindEntry(const Src& src) {
    Map& m = TableOf(src);
    auto it = m.find(src);
    if (it == m.end()) {
      return {nullptr, nullptr};
    }
    return {&it->first, &it->second};
  }
  /// The arena the backend interns its keys into (`KeyPool` for `KeyRef` keys).
  typename KeyTraits<K>::Arena& arena() { return arena_; }
  /// Starts loading `key`'s table slot (for a loop over many keys: a few keys ahead of `Find`;
  /// `key`: a `K`, or a `KeyProbe` for `KeyRef` keys, whose hash is not recomputed).
  /// A key of a group this subtask does not own is ignored.
  template <typename Src = K>
  [[gnu::always_inline]] void Prefetch(const Src& key) const {
    const int kg = KeyGroupOf(key);
    if (range_.Contains(kg)) {
      groups_[static_cast<size_t>(kg - range_.start)].prefetch(key);
    }
  }

  /// The value of `key` (a `K`, or a `KeyProbe` for `KeyRef` keys), or nullptr.
  template <typename Src = K>
  V* Find(const Src& key) {
    Map& m = TableOf(key);
    auto it = m.find(key);
    return it == m.end() ? nullptr : &it->second;
  }
  template <typename Src = K>
  const V* Find(const Src& key) const {
    return const_cast<KeyedStateBackend*>(this)->Find(key);
  }
  void Erase(const K& key) { TableOf(key).erase(key); }

  /// A held entry's place, from `FindSlot`: its table and position. Valid until the next insert
  /// into that table (an erase of another entry moves no entry), so a loop that looks keys up a
  /// few keys ahead and erases them (a window end's keys) probes each once.
  struct Slot {
    Map* table = nullptr;  // nullptr: the key is not held
    typename Map::iterator it;
    const K& key() const { return it->first; }
    V& value() const { return it->second; }
  };
  /// The place of `key` (a `K`, or a `KeyProbe` for `KeyRef` keys); `table` nullptr when absent.
  template <typename Src = K>
  Slot FindSlot(const Src& key) {
    Map& m = TableOf(key);
    auto it = m.find(key);
    return it == m.end() ? Slot{} : Slot{&m, it};
  }
  /// Erases the entry at `slot` (held, and valid as `Slot` says): no probe.
  void EraseSlot(const Slot& slot) { slot.table->erase(slot.it); }

  /// Calls `f(key_group, key, value)` for every entry, key group by key group (table order
  /// within a group: unspecified).
  template <typename F>
  void ForEach(F&& f) {
    for (size_t i = 0; i < groups_.size(); ++i) {
      for (auto& [k, v] : groups_[i]) {
        f(range_.start + static_cast<int>(i), k, v);
      }
    }
  }
  template <typename F>
  void ForEach(F&& f) const {
    for (size_t i = 0; i < groups_.size(); ++i) {
      for (const auto& [k, v] : groups_[i]) {
        f(range_.start + static_cast<int>(i), k, v);
      }
    }
  }

  /// The table of key group `kg` (in range).
  Map& KeyGroupTable(int kg) { return groups_[static_cast<size_t>(kg - range_.start)]; }

  /// Bytes the tables hold allocated, full slots or not: per key group one slot
  /// (`sizeof(pair<const K, V>)`) and one control byte per unit of capacity, plus a group's width
  /// of cloned control bytes (absl's layout). The values' own heap buffers and the key arena are
  /// not included.
  int64_t TableBytes() const {
    int64_t bytes = 0;
    for (const Map& m : groups_) {
      if (m.capacity() > 0) {
        bytes += static_cast<int64_t>(m.capacity() * (sizeof(typename Map::value_type) + 1) + 16);
      }
    }
    return bytes;
  }

  size_t size() const {
    size_t n = 0;
    for (const Map& m : groups_) {
      n += m.size();
    }
    return n;
  }
  void Clear() {
    for (Map& m : groups_) {
      m.clear();
    }
  }

 private:
  template <typename Src>
  [[noreturn, gnu::cold, gnu::noinline]] void ThrowNotOwned(const Src& key, int kg) {
    throw Error(
        fmt::format("keyed state: key {} is in key group {}, which this subtask (key "
                    "groups {}..{} of {}) does not own",
                    KeyToString(KeyTraits<K>::ToKey(key, scratch_)), kg, range_.start, range_.end,
                    max_parallelism_));
  }

  // The arena first: destroyed after the tables whose keys point into it.
  [[no_unique_address]] typename KeyTraits<K>::Arena arena_;
  int max_parallelism_;
  KeyGroupRange range_;
  uint64_t group_mask_;  // max_parallelism - 1 when a power of two, else 0
  std::vector<Map> groups_;
  mutable Key scratch_;
};

/// Event-time timers of keyed state grouped by time: each time holds the keys with a timer then,
/// fired together in key order (`std::less<K>`: for `Key` the order of `InternalTimer`s, so a
/// firing order across keys equals the `InternalTimerService`'s). Plain data, no closures, no
/// node per timer. Registering the same (time, key) twice keeps one (duplicates are removed when
/// the time fires). A timer is deleted by the owner ignoring it when it fires (the owner keeps
/// the time it registered per key), so deleting costs nothing here.
///
/// Threading: the owning operator's mailbox thread only. Steady state (as many distinct times
/// and keys as before) allocates nothing: emptied key lists are reused.
template <typename K>
class KeyedTimerBuckets {
 public:
  /// Adds a timer for `key` at `time`.
  void Add(Timestamp time, const K& key) {
    if (buckets_.empty() || buckets_.back().time < time) {
      buckets_.push_back(Bucket{time, TakeSpare(), 0});
      buckets_.back().keys.push_back(key);
      return;
    }
    if (last_ < buckets_.size() && buckets_[last_].time == time) {
      buckets_[last_].keys.push_back(key);
      return;
    }
    auto it = std::lower_bound(buckets_.begin(), buckets_.end(), time,
                               [](const Bucket& b, Timestamp t) { return b.time < t; });
    if (it == buckets_.end() || it->time != time) {
      it = buckets_.insert(it, Bucket{time, TakeSpare(), 0});
    }
    it->keys.push_back(key);
    last_ = static_cast<size_t>(it - buckets_.begin());
  }

  /// When the earliest time is <= `watermark`: moves its keys, sorted and without duplicates,
  /// into `keys` (replacing its contents), removes the time and returns true with `*time` set.
  bool PopDue(Timestamp watermark, Timestamp* time, std::vector<K>& keys) {
    if (buckets_.empty() || buckets_.front().time > watermark) {
      return false;
    }
    Bucket& b = buckets_.front();
    *time = b.time;
    SortUnique(b);
    keys.swap(b.keys);
    b.keys.clear();
    spare_.push_back(std::move(b.keys));
    buckets_.erase(buckets_.begin());
    last_ = buckets_.size();
    return true;
  }

  /// Removes the duplicate keys of every time once the entries have grown by a quarter since
  /// the last call that did (amortized O(log n) per `Add`; duplicates stay under a quarter of
  /// the entries): for an owner that registers the same timers again and again (the window
  /// operator's RocksDB partial states). O(entries log entries) when it does, in place.
  void CompactDuplicates() {
    const size_t n = NumEntries();
    entries_after_compact_ = std::min(entries_after_compact_, n);  // times fired since
    if (n < (size_t{1} << 16) || n < entries_after_compact_ + entries_after_compact_ / 4) {
      return;
    }
    for (Bucket& b : buckets_) {
      SortUnique(b);
    }
    entries_after_compact_ = NumEntries();
  }

  bool empty() const { return buckets_.empty(); }
  /// Registered (time, key) entries, duplicates included.
  size_t NumEntries() const {
    size_t n = 0;
    for (const Bucket& b : buckets_) {
      n += b.keys.size();
    }
    return n;
  }
  /// Bytes held allocated: the time list and every key list's capacity, spare ones included.
  int64_t MemoryBytes() const {
    size_t bytes =
        buckets_.capacity() * sizeof(Bucket) + spare_.capacity() * sizeof(std::vector<K>);
    for (const Bucket& b : buckets_) {
      bytes += b.keys.capacity() * sizeof(K);
    }
    for (const std::vector<K>& v : spare_) {
      bytes += v.capacity() * sizeof(K);
    }
    return static_cast<int64_t>(bytes);
  }
  void Clear() {
    for (Bucket& b : buckets_) {
      b.keys.clear();
      spare_.push_back(std::move(b.keys));
    }
    buckets_.clear();
    last_ = 0;
  }

 private:
  struct Bucket {
    Timestamp time;
    std::vector<K> keys;
    size_t sorted = 0;  // int64 keys: keys[0, sorted) are sorted and unique (SortUnique)
  };
  // Sorts `b`'s keys and removes duplicates. Int64 keys: only the keys added since the last call
  // are sorted, then merged with the sorted ones (CompactDuplicates runs each time a quarter more
  // keys came: this sorts that quarter, not all of them again).
  void SortUnique(Bucket& b) {
    if constexpr (std::is_same_v<K, int64_t>) {
      const auto mid =
          b.keys.begin() + static_cast<std::ptrdiff_t>(std::min(b.sorted, b.keys.size()));
      std::sort(mid, b.keys.end());
      std::inplace_merge(b.keys.begin(), mid, b.keys.end());
      b.keys.erase(std::unique(b.keys.begin(), b.keys.end()), b.keys.end());
      b.sorted = b.keys.size();
    } else {
      SortUniqueKeys(b.keys, sort_scratch_);
    }
  }
  std::vector<K> TakeSpare() {
    if (spare_.empty()) {
      return {};
    }
    std::vector<K> v = std::move(spare_.back());
    spare_.pop_back();
    return v;
  }

  std::vector<Bucket> buckets_;  // ascending time
  std::vector<std::vector<K>> spare_;
  KeySortScratch sort_scratch_;
  size_t last_ = 0;  // the bucket Add used last (records of one window share one time)
  size_t entries_after_compact_ = 0;  // see CompactDuplicates
};

/// Event-time timers of keyed state as a binary min-heap of plain (time, key) entries, popped in
/// (time, key) order (`std::less<K>`: for `Key` the order of `InternalTimer`s, so firing across
/// keys follows the `InternalTimerService`'s order). The role of Flink's `HeapPriorityQueue` of
/// `TimerHeapInternalTimer`s, without closures or a node per timer.
///
/// Deduplication and deletion are the owner's: it keeps, per key, the time of the key's one live
/// entry and skips a popped entry at any other time (a moved or deleted timer), so a (time, key)
/// fires at most once however often it was added. Adding a timer that only moves later is not
/// needed either: the owner re-adds it when the earlier entry pops (see the window operator's
/// session path). `K` must be copyable and ordered.
///
/// Threading: the owning operator's mailbox thread only. Cost: O(log n) per add and pop; `TakeDue`
/// of d of n entries, O(n + d log d) once more than a few are due. Steady
/// state (no more entries than the heap held before) allocates nothing for `int64_t` keys.
template <typename K>
class KeyedTimerHeap {
 public:
  void Add(Timestamp time, const K& key) {
    heap_.push_back(Entry{time, key});
    std::push_heap(heap_.begin(), heap_.end(), Later);
  }

  /// When the earliest entry is at or before `watermark`: removes it, sets `*time` and `*key`
  /// and returns true.
  bool PopDue(Timestamp watermark, Timestamp* time, K* key) {
    if (heap_.empty() || heap_.front().time > watermark) {
      return false;
    }
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    *time = heap_.back().time;
    *key = std::move(heap_.back().key);
    heap_.pop_back();
    return true;
  }

  /// Moves every entry at or before `watermark` out of the heap into `*due` (cleared first), in
  /// (time, key) order, and returns how many. The same entries, in the same order, as calling
  /// `PopDue` until it returns false; but when many are due (a watermark that passes most keys'
  /// timers) they are partitioned out, sorted and the rest re-heaped, with sequential memory
  /// access instead of a sift through the heap per entry.
  size_t TakeDue(Timestamp watermark, std::vector<std::pair<Timestamp, K>>* due) {
    due->clear();
    // A few pops first: a watermark usually makes only a few entries due.
    constexpr size_t kPopsBeforePartition = 32;
    Timestamp time = 0;
    K key{};
    while (due->size() < kPopsBeforePartition && PopDue(watermark, &time, &key)) {
      due->emplace_back(time, std::move(key));
    }
    if (due->size() < kPopsBeforePartition || heap_.empty() || heap_.front().time > watermark) {
      return due->size();
    }
    const auto rest = std::partition(heap_.begin(), heap_.end(),
                                     [watermark](const Entry& e) { return e.time <= watermark; });
    const size_t popped = due->size();
    for (auto it = heap_.begin(); it != rest; ++it) {
      due->emplace_back(it->time, std::move(it->key));
    }
    heap_.erase(heap_.begin(), rest);
    std::make_heap(heap_.begin(), heap_.end(), Later);
    // The popped ones are in order and no later than any partitioned one.
    std::sort(due->begin() + static_cast<std::ptrdiff_t>(popped), due->end());
    return due->size();
  }

  /// When the earliest entry is at or before `watermark` and before (`time`, `key`) in (time, key)
  /// order: removes it, sets `*out_time` and `*out_key` and returns true. Merges entries added
  /// while a `TakeDue` run is being fired into that run's order.
  bool PopDueBefore(Timestamp watermark, Timestamp time, const K& key, Timestamp* out_time,
                    K* out_key) {
    if (heap_.empty() || heap_.front().time > watermark ||
        !Later(Entry{time, key}, heap_.front())) {
      return false;
    }
    return PopDue(watermark, out_time, out_key);
  }

  bool empty() const { return heap_.empty(); }
  /// Entries held, stale ones included.
  size_t size() const { return heap_.size(); }
  /// Bytes held allocated (the heap's capacity).
  int64_t MemoryBytes() const { return static_cast<int64_t>(heap_.capacity() * sizeof(Entry)); }
  void Clear() { heap_.clear(); }

 private:
  struct Entry {
    Timestamp time;
    K key;
  };
  // std::push_heap keeps a max-heap: "later" entries sink, the earliest (time, key) is on top.
  static bool Later(const Entry& a, const Entry& b) {
    if (a.time != b.time) {
      return a.time > b.time;
    }
    return b.key < a.key;
  }
  std::vector<Entry> heap_;
};

}  // namespace tidemark

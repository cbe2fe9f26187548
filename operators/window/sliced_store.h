#pragma once

// Internal to WindowOperator (window_operator.cc, window_operator_slices.cc): the sliced path's
// keyed state and timers for one key type.

#include <type_traits>
#include <utility>
#include <vector>

#include "operators/window/window_operator.h"
#include "runtime/state/keyed_state_backend.h"

namespace tidemark {

/// A direct-mapped cache of int64 keys' states in `SlicedStore::keys`, for the sliced path's
/// batch loop over a small table (all of it in the L2 cache): it finds a key's state from the
/// key hash the loop computed anyway (a compare instead of a table probe), early enough to
/// request the key's slices held off its slot before its add reads them. An entry is valid
/// while `epoch` is what it was when the entry was put: anything that may move or free a state
/// (an insert, which may move every slot of a table, an erase) calls `Invalidate`. Only used
/// on the heap backend (RocksDB spills and faults keys in on paths that do not invalidate it).
struct RecentKeyStates {
  struct Entry {
    int64_t key = 0;
    SlicedKeyState* state = nullptr;
    uint64_t epoch = 0;
  };
  static constexpr size_t kEntries = 8192;  // 192 KiB; 1e3 keys: ~11% of them share an entry
  std::vector<Entry> entries;               // kEntries once used, else empty
  uint64_t epoch = 1;
  // The last batch inserted a key per 8 records or more: the next one skips the cache.
  bool churn = false;

  void Invalidate() { ++epoch; }
  // The entry for a key of hash `hash64` (`Int64KeyHash64`): bits above any key group's.
  static size_t IndexOf(uint64_t hash64) { return (hash64 >> 32) & (kEntries - 1); }
  [[gnu::always_inline]] void Prefetch(uint64_t hash64) const {
    __builtin_prefetch(entries.data() + IndexOf(hash64));
  }
  [[gnu::always_inline]] SlicedKeyState* Find(int64_t key, uint64_t hash64) const {
    const Entry& e = entries[IndexOf(hash64)];
    return e.epoch == epoch && e.key == key ? e.state : nullptr;
  }
  void Put(int64_t key, uint64_t hash64, SlicedKeyState* state) {
    entries[IndexOf(hash64)] = Entry{key, state, epoch};
  }
};

template <typename K>
struct SlicedStore {
  SlicedStore(int max_parallelism, KeyGroupRange range) : keys(max_parallelism, range) {}
  KeyedStateBackend<K, SlicedKeyState> keys;
  RecentKeyStates recent;  // int64 keys on the heap backend; see RecentKeyStates
  KeyedTimerBuckets<K> timers;
  absl::flat_hash_map<K, SlicedFirings, typename KeyTraits<K>::MapHash,
                      typename KeyTraits<K>::MapEq>
      firings;
  std::vector<K> due;  // scratch: the keys of the time being fired
};

/// While alive, the window operator's sliced firings go downstream in batches
/// (`WindowOperator::fired_batching_`; the caller flushes the last one).
struct FiredBatching {
  bool& flag;
  explicit FiredBatching(bool& f) : flag(f) { flag = true; }
  ~FiredBatching() { flag = false; }
  FiredBatching(const FiredBatching&) = delete;
  FiredBatching& operator=(const FiredBatching&) = delete;
};

/// A single int64 key with its key-group hash (`Int64KeyHash64`), computed once per record by
/// the batch loop, which requests the key's table slot with it a few records ahead.
struct HashedInt64Key {
  int64_t key;
  uint64_t hash64;
};

/// `backend`'s entry for `src` (a `K`, a `KeyProbe` for `KeyRef` keys, or a `HashedInt64Key`).
template <typename K, typename V, typename Src>
std::pair<const K*, V*> EmplaceKey(KeyedStateBackend<K, V>& backend, const Src& src) {
  if constexpr (std::is_same_v<Src, HashedInt64Key>) {
    return backend.EmplaceHashed(src.key, src.hash64);
  } else {
    return backend.Emplace(src);
  }
}

/// `store`'s entry for a key it held before (a timer's key): an int64 key as itself, a `KeyRef`
/// looked up by its values.
template <typename K>
std::pair<const K*, SlicedKeyState*> EmplaceFromKey(SlicedStore<K>& store, const K& key) {
  store.recent.Invalidate();  // an insert may move every state
  if constexpr (std::is_same_v<K, KeyRef>) {
    return store.keys.Emplace(KeyProbe::Of(key.key()));
  } else {
    return store.keys.Emplace(key);
  }
}

}  // namespace tidemark

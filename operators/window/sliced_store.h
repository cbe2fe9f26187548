#pragma once

// Internal to WindowOperator (window_operator.cc, window_operator_slices.cc): the sliced path's
// keyed state and timers for one key type.

#include <type_traits>
#include <utility>
#include <vector>

#include "operators/window/window_operator.h"
#include "runtime/state/keyed_state_backend.h"

namespace tidemark {

template <typename K>
struct SlicedStore {
  SlicedStore(int max_parallelism, KeyGroupRange range) : keys(max_parallelism, range) {}
  KeyedStateBackend<K, SlicedKeyState> keys;
  KeyedTimerBuckets<K> timers;
  absl::flat_hash_map<K, SlicedFirings, typename KeyTraits<K>::MapHash,
                      typename KeyTraits<K>::MapEq>
      firings;
  std::vector<K> due;  // scratch: the keys of the time being fired
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
  if constexpr (std::is_same_v<K, KeyRef>) {
    return store.keys.Emplace(KeyProbe::Of(key.key()));
  } else {
    return store.keys.Emplace(key);
  }
}

}  // namespace tidemark

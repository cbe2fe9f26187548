#pragma once

// Internal to WindowOperator (window_operator.cc, window_operator_slices.cc): the sliced path's
// keyed state and timers for one key type.

#include <vector>

#include "operators/window/window_operator.h"
#include "runtime/state/keyed_state_backend.h"

namespace tidemark {

template <typename K>
struct SlicedStore {
  SlicedStore(int max_parallelism, KeyGroupRange range) : keys(max_parallelism, range) {}
  KeyedStateBackend<K, SlicedKeyState> keys;
  KeyedTimerBuckets<K> timers;
  absl::flat_hash_map<K, SlicedFirings, typename KeyTraits<K>::MapHash, typename KeyTraits<K>::MapEq>
      firings;
  std::vector<K> due;  // scratch: the keys of the time being fired
};

}  // namespace tidemark

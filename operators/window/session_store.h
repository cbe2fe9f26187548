#pragma once

// Internal to WindowOperator (window_operator_sessions.cc, window_operator_snapshot.cc,
// window_operator_state_bytes.cc): the flat session path's keyed state and timers for one key
// type.

#include "operators/window/window_operator.h"
#include "runtime/state/keyed_state_backend.h"

namespace tidemark {

template <typename K>
struct SessionStore {
  SessionStore(int max_parallelism, KeyGroupRange range) : keys(max_parallelism, range) {}
  KeyedStateBackend<K, SessionKeyState> keys;
  KeyedTimerHeap<K> timers;
  K popped{};                                // scratch: the key of the timer entry being fired
  std::vector<std::pair<Timestamp, K>> due;  // scratch: the entries due at a watermark
};

}  // namespace tidemark

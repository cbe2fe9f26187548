// WindowOperator's state-size gauges (stateBytes, stateBytesPeak), kept apart from the operator's
// logic: they only read its state, in the byte model of window_state_bytes.h.

#include <algorithm>

#include "operators/window/session_store.h"
#include "operators/window/sliced_store.h"
#include "operators/window/window_operator.h"
#include "operators/window/window_state_bytes.h"

namespace tidemark {

int64_t WindowOperator::StateBytes() const {
  int64_t bytes = 0;
  // The sliced path's keys live in a KeyedStateBackend (sliced_store.h); an int64 key costs what
  // a one-field row of it would, so the figure does not depend on which store holds it.
  if (int_store_) {
    const int64_t key_bytes = ValueStateBytes(Value(int64_t{0}));
    int_store_->keys.ForEach([&](int, const int64_t&, const SlicedKeyState& ks) {
      bytes += static_cast<int64_t>(ks.starts.size()) * PaneStateBytes(key_bytes, num_accs_);
    });
  }
  if (key_store_) {
    key_store_->keys.ForEach([&](int, const KeyRef& key, const SlicedKeyState& ks) {
      bytes += static_cast<int64_t>(ks.starts.size()) *
               PaneStateBytes(RowStateBytes(key.key()), num_accs_);
    });
  }
  // Flat sessions cost what their panes would on the per-window path.
  if (int_sessions_) {
    const int64_t key_bytes = ValueStateBytes(Value(int64_t{0}));
    int_sessions_->keys.ForEach([&](int, const int64_t&, const SessionKeyState& ks) {
      bytes += static_cast<int64_t>(ks.sessions.size()) * PaneStateBytes(key_bytes, session_accs_);
    });
  }
  if (key_sessions_) {
    key_sessions_->keys.ForEach([&](int, const KeyRef& key, const SessionKeyState& ks) {
      bytes += static_cast<int64_t>(ks.sessions.size()) *
               PaneStateBytes(RowStateBytes(key.key()), session_accs_);
    });
  }
  const auto* aggregating = dynamic_cast<const AggregatingWindowFunction*>(function_.get());
  for (const auto& [key, panes] : panes_) {
    const int64_t key_bytes = RowStateBytes(key);
    for (const auto& [window, state] : panes) {
      if (const auto* list = dynamic_cast<const ListWindowState*>(state.get())) {
        bytes += key_bytes;
        for (const StreamRecord& e : list->elements()) {
          bytes += ElementStateBytes(e);
        }
      } else {
        bytes += PaneStateBytes(key_bytes, aggregating ? aggregating->num_aggregates() : 1) +
                 (aggregating ? aggregating->RichStateBytes(*state) : 0);
      }
    }
  }
  return bytes;
}

namespace {

// Heap bytes of an inlined vector beyond its inline capacity `n`.
template <typename V>
int64_t HeapBytes(const V& v, size_t n) {
  return v.capacity() > n ? static_cast<int64_t>(v.capacity() * sizeof(typename V::value_type)) : 0;
}

// A key's buffers beyond the inline ones.
int64_t KeyHeapBytes(const SlicedKeyState& ks) {
  return HeapBytes(ks.starts, kInlineSliceStarts) + HeapBytes(ks.accs, kInlineSliceWords);
}
int64_t KeyHeapBytes(const SessionKeyState& ks) {
  return HeapBytes(ks.sessions, 1) + HeapBytes(ks.accs, kInlineSliceWords);
}

// A sliced or session store: its tables, its timers and its keys' heap buffers.
template <typename Store>
int64_t StoreMemoryBytes(const Store& store) {
  int64_t bytes = store.keys.TableBytes() + store.timers.MemoryBytes();
  store.keys.ForEach([&](int, const auto&, const auto& ks) { bytes += KeyHeapBytes(ks); });
  return bytes;
}

}  // namespace

int64_t WindowOperator::StateMemoryBytes() const {
  int64_t bytes = 0;
  if (int_store_) {
    bytes += StoreMemoryBytes(*int_store_);
  }
  if (key_store_) {
    bytes += StoreMemoryBytes(*key_store_);
  }
  if (int_sessions_) {
    bytes += StoreMemoryBytes(*int_sessions_);
  }
  if (key_sessions_) {
    bytes += StoreMemoryBytes(*key_sessions_);
  }
  return bytes;
}

int64_t WindowOperator::NumStateKeys() const {
  size_t n = 0;
  n += int_store_ ? int_store_->keys.size() : 0;
  n += key_store_ ? key_store_->keys.size() : 0;
  n += int_sessions_ ? int_sessions_->keys.size() : 0;
  n += key_sessions_ ? key_sessions_->keys.size() : 0;
  return static_cast<int64_t>(n);
}

void WindowOperator::SampleStateBytes() {
  // Reading the state costs O(panes); sampling only once as many records arrived as the last
  // sample counted panes keeps that O(1) per record, so a million keys do not slow every
  // watermark down. Samples are taken before timers fire, where the state is largest.
  if (records_since_state_sample_ < state_panes_at_sample_) {
    return;
  }
  records_since_state_sample_ = 0;
  const int64_t bytes = StateBytes();
  state_bytes_sampled_ = bytes;
  state_bytes_peak_ = std::max(state_bytes_peak_, bytes);
  state_memory_bytes_peak_ = std::max(state_memory_bytes_peak_, StateMemoryBytes());
  state_keys_peak_ = std::max(state_keys_peak_, NumStateKeys());
  state_panes_at_sample_ = static_cast<int64_t>(NumSlices()) + static_cast<int64_t>(panes_.size()) +
                           static_cast<int64_t>(int_sessions_ ? int_sessions_->keys.size() : 0) +
                           static_cast<int64_t>(key_sessions_ ? key_sessions_->keys.size() : 0);
}

}  // namespace tidemark

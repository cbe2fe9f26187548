// WindowOperator's state-size gauges (stateBytes, stateBytesPeak), kept apart from the operator's
// logic: they only read its state, in the byte model of window_state_bytes.h.

#include <algorithm>
#include <array>
#include <type_traits>
#include <utility>

#include "operators/window/session_store.h"
#include "operators/window/sliced_store.h"
#include "operators/window/window_operator.h"
#include "operators/window/window_state_bytes.h"
#include "operators/window/window_tables.h"

namespace tidemark {

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

// One key's panes: its slices or its sessions.
size_t KeyPanes(const SlicedKeyState& ks) {
  return ks.starts.size();
}
size_t KeyPanes(const SessionKeyState& ks) {
  return ks.sessions.size();
}

// A sliced or session store in one pass over its keys (a pass is the sampler's whole cost at a
// million keys: its slots are read from memory): the payload bytes (an int64 key costs what a
// one-field row of it would, so the figure does not depend on which store holds it; flat
// sessions cost what their panes would on the per-window path), the allocated memory (its
// tables, its timers and its keys' heap buffers) and the panes.
template <typename K, template <typename> class Store>
void MeasureStore(const Store<K>& store, size_t num_accs, WindowOperator::StateFigures& out) {
  int64_t bytes = 0;
  int64_t heap = 0;
  int64_t panes = 0;
  // Interned keys: a key's bytes are read from its pool entry and values, two cache misses one
  // after the other per key. Keys are queued: a key's entry is requested as it is queued, its
  // values kValuesAt keys later, and it is read kRing keys later.
  constexpr size_t kRing = 16;
  constexpr size_t kValuesAt = 8;
  std::array<std::pair<const KeyRef*, int64_t>, kRing> queued{};
  size_t num_queued = 0;
  auto key_bytes = [&](const std::pair<const KeyRef*, int64_t>& q) {
    bytes += q.second * PaneStateBytes(RowStateBytes(q.first->key()), num_accs);
  };
  store.keys.ForEach([&](int, const K& key, const auto& ks) {
    const auto n = static_cast<int64_t>(KeyPanes(ks));
    panes += n;
    heap += KeyHeapBytes(ks);
    if constexpr (std::is_same_v<K, KeyRef>) {
      key.PrefetchEntry();
      if (num_queued >= kValuesAt) {
        queued[(num_queued - kValuesAt) % kRing].first->PrefetchValues();
      }
      std::pair<const KeyRef*, int64_t>& slot = queued[num_queued % kRing];
      if (num_queued >= kRing) {
        key_bytes(slot);
      }
      slot = {&key, n};
      ++num_queued;
    }
  });
  for (size_t i = num_queued > kRing ? num_queued - kRing : 0; i < num_queued; ++i) {
    key_bytes(queued[i % kRing]);
  }
  if constexpr (!std::is_same_v<K, KeyRef>) {
    bytes = panes * PaneStateBytes(ValueStateBytes(Value(int64_t{0})), num_accs);
  }
  out.bytes += bytes;
  out.memory_bytes += store.keys.TableBytes() + store.timers.MemoryBytes() + heap;
  out.panes += panes;
  out.keys += static_cast<int64_t>(store.keys.size());
}

}  // namespace

WindowOperator::StateFigures WindowOperator::MeasureState() const {
  StateFigures f;
  if (int_store_) {
    MeasureStore(*int_store_, num_accs_, f);
  }
  if (key_store_) {
    MeasureStore(*key_store_, num_accs_, f);
  }
  if (tables_) {
    tables_->Measure(f, num_accs_);
  }
  f.slices = f.panes;
  if (int_sessions_) {
    MeasureStore(*int_sessions_, session_accs_, f);
  }
  if (key_sessions_) {
    MeasureStore(*key_sessions_, session_accs_, f);
  }
  // The per-window path (sessions with allowed lateness, evictors, ...) holds its keys in panes_.
  f.keys += static_cast<int64_t>(panes_.size());
  const auto* aggregating = dynamic_cast<const AggregatingWindowFunction*>(function_.get());
  for (const auto& [key, panes] : panes_) {
    const int64_t key_bytes = RowStateBytes(key);
    for (const auto& [window, state] : panes) {
      if (const auto* list = dynamic_cast<const ListWindowState*>(state.get())) {
        f.bytes += key_bytes;
        for (const StreamRecord& e : list->elements()) {
          f.bytes += ElementStateBytes(e);
        }
      } else {
        f.bytes += PaneStateBytes(key_bytes, aggregating ? aggregating->num_aggregates() : 1) +
                   (aggregating ? aggregating->RichStateBytes(*state) : 0);
      }
    }
  }
  return f;
}

int64_t WindowOperator::StateBytes() const {
  return MeasureState().bytes;
}

int64_t WindowOperator::StateMemoryBytes() const {
  return MeasureState().memory_bytes;
}

int64_t WindowOperator::NumStateKeys() const {
  size_t n = 0;
  n += int_store_ ? int_store_->keys.size() : 0;
  n += key_store_ ? key_store_->keys.size() : 0;
  n += tables_ ? tables_->NumKeys() : 0;
  n += int_sessions_ ? int_sessions_->keys.size() : 0;
  n += key_sessions_ ? key_sessions_->keys.size() : 0;
  n += panes_.size();  // the per-window path's keys
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
  const StateFigures f = MeasureState();
  state_bytes_sampled_ = f.bytes;
  state_bytes_peak_ = std::max(state_bytes_peak_, f.bytes);
  state_memory_bytes_peak_ = std::max(state_memory_bytes_peak_, f.memory_bytes);
  state_keys_peak_ = std::max(state_keys_peak_, f.keys);
  // Slices, panes of the per-window path, and keys (not sessions) of the flat session stores.
  state_panes_at_sample_ = f.slices + static_cast<int64_t>(panes_.size()) +
                           static_cast<int64_t>(int_sessions_ ? int_sessions_->keys.size() : 0) +
                           static_cast<int64_t>(key_sessions_ ? key_sessions_->keys.size() : 0);
}

}  // namespace tidemark

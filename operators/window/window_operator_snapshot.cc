// WindowOperator::SnapshotState / InitializeState (see window_operator.h): the operator's state
// in the versioned, layout-independent format of runtime/state/state_serializer.h.

#include <algorithm>
#include <map>
#include <vector>

#include "operators/window/session_store.h"
#include "operators/window/sliced_store.h"
#include "operators/window/window_operator.h"
#include "operators/window/window_tables.h"
#include "runtime/state/state_codec.h"

namespace tidemark {
namespace {

constexpr uint32_t kVersion = 1;
// [rocks-incr] Version 2: version 1's bytes (with the sliced keys in RocksDB, not listed) and a
// native RocksDB handle at the end of the section (incremental checkpoints only).
constexpr uint32_t kNativeVersion = 2;
enum StoreKind : uint8_t { kNoStore = 0, kIntStore = 1, kKeyStore = 2 };

void WriteWindow(StateWriter& w, const Window& window) {
  w.WriteBool(window.is_global());
  w.WriteI64(window.start());
  w.WriteI64(window.end());
}

Window ReadWindow(StateReader& r) {
  const bool global = r.ReadBool();
  const Timestamp start = r.ReadI64();
  const Timestamp end = r.ReadI64();
  if (global) {
    return Window(GlobalWindow{});
  }
  if (end < start) {
    throw StateCorrupt("window snapshot: a window ends before it starts");
  }
  return Window(TimeWindow(start, end));
}

}  // namespace

template <typename K, typename Src>
void WindowOperator::WriteSlicedKey(StateWriter& w, SlicedStore<K>& store, const Src& key) {
  const SlicedKeyState* ks = store.keys.Find(key);
  w.WriteBool(ks != nullptr);
  if (ks == nullptr) {
    return;
  }
  scratch_slice_words_.clear();
  for (size_t i = 0; i < ks->starts.size(); ++i) {
    scratch_slice_words_.push_back(ks->accs.data() + i * slice_words_);
  }
  WriteSlices(w, ks->starts.data(), scratch_slice_words_.data(), ks->starts.size(), ks->next_fire,
              ks->timer);
  auto f = store.firings.find(key);
  if (f == store.firings.end()) {
    w.WriteU32(0);
    return;
  }
  w.WriteU32(static_cast<uint32_t>(f->second.size()));
  for (const auto& [end, count] : f->second) {
    w.WriteI64(end);
    w.WriteI64(count);
  }
}

void WindowOperator::WriteSlices(StateWriter& w, const Timestamp* starts,
                                 const uint64_t* const* words, size_t n, Timestamp next_fire,
                                 Timestamp timer) {
  w.WriteU32(static_cast<uint32_t>(n));
  for (size_t i = 0; i < n; ++i) {
    w.WriteI64(starts[i]);
  }
  w.WriteI64(next_fire);
  w.WriteI64(timer);
  // The narrow accumulators in their general form: the bytes of version 1.
  scratch_accs_.resize(num_accs_);
  for (size_t i = 0; i < n; ++i) {
    slice_aggs_.Expand(words[i], scratch_accs_.data(), slice_strings_);
    for (const AggregateAccumulator& a : scratch_accs_) {
      WriteAccumulator(w, a);
    }
  }
}

template <typename K, typename Src>
void WindowOperator::ReadSlicedKey(StateReader& r, SlicedStore<K>& store, const Src& src) {
  const uint32_t n = r.ReadU32();
  if (n == 0 || n > r.remaining() / 8) {
    throw StateCorrupt("window snapshot: a sliced key with a bad number of slices");
  }
  auto [key_in_table, state] = store.keys.Emplace(src);
  const K key = *key_in_table;
  SlicedKeyState& ks = *state;
  ks.starts.clear();
  for (uint32_t i = 0; i < n; ++i) {
    const Timestamp s = r.ReadI64();
    if (!ks.starts.empty() && s <= ks.starts.back()) {
      throw StateCorrupt("window snapshot: slices out of order");
    }
    ks.starts.push_back(s);
  }
  ks.next_fire = r.ReadI64();
  ks.timer = r.ReadI64();
  for (size_t i = 0; i < ks.accs.size() / std::max<size_t>(slice_words_, 1); ++i) {
    slice_aggs_.Release(ks.accs.data() + i * slice_words_, slice_strings_);
  }
  ks.accs.assign(n * slice_words_, uint64_t{0});
  scratch_accs_.resize(num_accs_);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < num_accs_; ++j) {
      scratch_accs_[j] = ReadAccumulator(r);
    }
    slice_aggs_.Compress(scratch_accs_.data(), ks.accs.data() + i * slice_words_, slice_strings_);
  }
  if (ks.timer != kMinTimestamp) {
    store.timers.Add(ks.timer, key);
  }
  const uint32_t n_firings = r.ReadU32();
  if (n_firings > 0) {
    SlicedFirings& f = store.firings[key];
    for (uint32_t i = 0; i < n_firings; ++i) {
      const Timestamp end = r.ReadI64();
      const int64_t count = r.ReadI64();
      f.emplace_back(end, count);
    }
  }
}

void WindowOperator::WriteSessionKey(StateWriter& w, const SessionKeyState& ks) {
  // The flat session path's key in the per-window format (see the class comment): its panes
  // (one per state window; sessions ascend, and so do their state windows), its sessions, no
  // firing counts or trigger state, one event-time timer per session and no sliced state.
  const uint32_t n = static_cast<uint32_t>(ks.sessions.size());
  w.WriteU32(n);
  for (size_t i = 0; i < ks.sessions.size(); ++i) {
    const FlatSession& s = ks.sessions[i];
    WriteWindow(w, Window(TimeWindow(s.state_start, s.state_end)));
    scratch_accs_.resize(session_accs_);
    slice_aggs_.Expand(ks.accs.data() + i * slice_words_, scratch_accs_.data(), slice_strings_);
    aggregating_->CreateStateFrom(scratch_accs_.data())->WriteTo(w);
  }
  w.WriteU32(n);
  for (const FlatSession& s : ks.sessions) {
    WriteWindow(w, Window(TimeWindow(s.start, s.end)));
    WriteWindow(w, Window(TimeWindow(s.state_start, s.state_end)));
  }
  w.WriteU32(0);  // firings
  w.WriteU32(0);  // trigger state
  w.WriteU32(n);  // event-time timers
  for (const FlatSession& s : ks.sessions) {
    w.WriteI64(s.end - 1);
    WriteWindow(w, Window(TimeWindow(s.start, s.end)));
  }
  w.WriteU32(0);  // processing-time timers
  w.WriteBool(false);
}

void WindowOperator::SnapshotState(StateSnapshotContext& context) {
  // [rocks-incr] An incremental checkpoint on RocksDB: flush the key cache into RocksDB, then
  // checkpoint natively. Otherwise the canonical format, whatever the backend: spilled keys are
  // read back first.
  const bool native = PrepareNativeSnapshot(context);
  if (!native) {
    if (sliced_) {
      UnspillAll();
    }
    UnspillSessions();
  }
  StateWriter& w = context.writer;
  w.BeginSection("window-operator", native ? kNativeVersion : kVersion);
  w.WriteBool(sliced_);
  // Per-window tables are written as the sliced store they stand for.
  const bool int_keys = int_store_ || (tables_ && tables_->Int64Keys());
  w.WriteU8(int_keys ? kIntStore : (key_store_ || tables_ ? kKeyStore : kNoStore));
  w.WriteU32(static_cast<uint32_t>(num_accs_));
  w.WriteI64(timer_service_->CurrentWatermark());
  w.WriteI64(num_late_records_dropped_);
  w.WriteI64(num_late_records_side_output_);
  w.WriteI64(num_windows_fired_);
  w.WriteI64(state_bytes_peak_);
  function_->WriteFunctionState(w);

  // Every key with any state, on either path.
  std::vector<Key> keys;
  for (const auto& [k, panes] : panes_) {
    keys.push_back(k);
  }
  for (const auto& [k, set] : merging_sets_) {
    keys.push_back(k);
  }
  for (const auto& [k, f] : firings_) {
    keys.push_back(k);
  }
  trigger_state_.ForEach(
      [&](const Key& k, const Window&, const std::string&, int64_t) { keys.push_back(k); });
  const TimersByKey<Window> event_timers(timer_service_->EventTimeTimers());
  const TimersByKey<Window> processing_timers(timer_service_->ProcessingTimeTimers());
  event_timers.AppendKeys(keys);
  processing_timers.AppendKeys(keys);
  if (int_store_) {
    int_store_->keys.ForEach(
        [&](int, int64_t k, const SlicedKeyState&) { keys.push_back(Key{Value(k)}); });
  }
  if (key_store_) {
    key_store_->keys.ForEach(
        [&](int, const KeyRef& k, const SlicedKeyState&) { keys.push_back(k.key()); });
  }
  if (tables_) {
    tables_->AppendKeys(keys);
  }
  if (int_sessions_) {
    int_sessions_->keys.ForEach(
        [&](int, int64_t k, const SessionKeyState&) { keys.push_back(Key{Value(k)}); });
  }
  if (key_sessions_) {
    key_sessions_->keys.ForEach(
        [&](int, const KeyRef& k, const SessionKeyState&) { keys.push_back(k.key()); });
  }

  WriteKeyGroups(w, context_.max_parallelism, std::move(keys), [&](const Key& key) {
    if (const SessionKeyState* ks = FindSessionKey(key)) {
      // On the flat session path no key has per-window state.
      WriteSessionKey(w, *ks);
      return;
    }
    auto p = panes_.find(key);
    w.WriteU32(p == panes_.end() ? 0 : static_cast<uint32_t>(p->second.size()));
    if (p != panes_.end()) {
      for (const auto& [window, state] : p->second) {
        WriteWindow(w, window);
        state->WriteTo(w);
      }
    }
    auto m = merging_sets_.find(key);
    w.WriteU32(m == merging_sets_.end() ? 0 : static_cast<uint32_t>(m->second.mapping().size()));
    if (m != merging_sets_.end()) {
      for (const auto& [window, state_window] : m->second.mapping()) {
        WriteWindow(w, window);
        WriteWindow(w, state_window);
      }
    }
    auto f = firings_.find(key);
    w.WriteU32(f == firings_.end() ? 0 : static_cast<uint32_t>(f->second.size()));
    if (f != firings_.end()) {
      for (const auto& [window, count] : f->second) {
        WriteWindow(w, window);
        w.WriteI64(count);
      }
    }
    std::vector<std::tuple<Window, std::string, int64_t>> trigger_values;
    trigger_state_.ForEach(
        [&](const Key& k, const Window& window, const std::string& name, int64_t v) {
          if (k == key) {
            trigger_values.emplace_back(window, name, v);
          }
        });
    w.WriteU32(static_cast<uint32_t>(trigger_values.size()));
    for (const auto& [window, name, v] : trigger_values) {
      WriteWindow(w, window);
      w.WriteString(name);
      w.WriteI64(v);
    }
    event_timers.Write(w, key, WriteWindow);
    processing_timers.Write(w, key, WriteWindow);
    const int64_t* int_key = key.size() == 1 ? std::get_if<int64_t>(&key[0]) : nullptr;
    if (int_store_ && int_key != nullptr) {
      WriteSlicedKey(w, *int_store_, *int_key);
    } else if (key_store_) {
      WriteSlicedKey(w, *key_store_, KeyProbe::Of(key));
    } else if (tables_) {
      tables_->WriteKey(w, key);
    } else {
      w.WriteBool(false);
    }
  });
  if (native) {
    WriteNativeSnapshot(context);  // [rocks-incr]
  }
  w.EndSection();
}

void WindowOperator::InitializeState(StateInitializationContext& context) {
  if (!context.is_restored()) {
    return;
  }
  StateReader& r = *context.reader;
  const uint32_t version = r.BeginSection("window-operator", kNativeVersion);
  const bool sliced = r.ReadBool();
  const uint8_t store_kind = r.ReadU8();
  if (r.ReadU32() != num_accs_ || (sliced && !sliced_) || store_kind > kKeyStore ||
      (!sliced && store_kind != kNoStore)) {
    throw StateCorrupt(fmt::format(
        "window operator '{}': the snapshot was taken with another window configuration",
        context_.name));
  }
  if (!sliced) {
    sliced_ = false;  // the snapshotted operator had left the sliced path; nothing to rebuild
  }
  // Flink's timer service starts again at Long.MIN after a restore (its watermark is not in
  // the snapshot); checkpointing.restore-watermarks keeps the checkpointed one.
  if (const Timestamp watermark = r.ReadI64(); context.restore_watermarks) {
    timer_service_->RestoreWatermark(watermark);
  }
  num_late_records_dropped_ = r.ReadI64();
  num_late_records_side_output_ = r.ReadI64();
  num_windows_fired_ = r.ReadI64();
  state_bytes_peak_ = r.ReadI64();
  function_->ReadFunctionState(r);
  if (store_kind == kIntStore) {
    int_store_ = std::make_unique<SlicedStore<int64_t>>(context_.max_parallelism, OwnedKeyGroups());
  } else if (store_kind == kKeyStore) {
    key_store_ = std::make_unique<SlicedStore<KeyRef>>(context_.max_parallelism, OwnedKeyGroups());
  }

  ReadKeyGroups(r, context_.max_parallelism, OwnedKeyGroups(), [&](const Key& key) {
    const uint32_t n_panes = r.ReadU32();
    for (uint32_t i = 0; i < n_panes; ++i) {
      const Window window = ReadWindow(r);
      std::unique_ptr<WindowState> state = function_->CreateState();
      state->ReadFrom(r, options_.input_layout);
      panes_[key][window] = std::move(state);
    }
    const uint32_t n_sessions = r.ReadU32();
    if (n_sessions > 0 && !assigner_->IsMerging()) {
      throw StateCorrupt("window snapshot: sessions for a window assigner that does not merge");
    }
    for (uint32_t i = 0; i < n_sessions; ++i) {
      const Window window = ReadWindow(r);
      const Window state_window = ReadWindow(r);
      merging_sets_[key].RestoreWindow(window, state_window);
    }
    const uint32_t n_firings = r.ReadU32();
    for (uint32_t i = 0; i < n_firings; ++i) {
      const Window window = ReadWindow(r);
      firings_[key][window] = r.ReadI64();
    }
    const uint32_t n_trigger = r.ReadU32();
    for (uint32_t i = 0; i < n_trigger; ++i) {
      const Window window = ReadWindow(r);
      const std::string name = r.ReadString();
      trigger_state_.Set(key, window, name, r.ReadI64());
    }
    ReadKeyTimers(r, key, *timer_service_, false, ReadWindow);
    ReadKeyTimers(r, key, *timer_service_, true, ReadWindow);
    if (r.ReadBool()) {
      if (int_store_) {
        const int64_t* k = key.size() == 1 ? std::get_if<int64_t>(&key[0]) : nullptr;
        if (k == nullptr) {
          throw StateCorrupt("window snapshot: a non-int64 key in the int64 key store");
        }
        ReadSlicedKey(r, *int_store_, *k);
      } else if (key_store_) {
        ReadSlicedKey(r, *key_store_, KeyProbe::Of(key));
      } else {
        throw StateCorrupt("window snapshot: sliced state without a sliced store");
      }
    }
  });
  if (version >= kNativeVersion) {
    RestoreNativeSnapshot(r, context);  // [rocks-incr]
  }
  r.EndSection();
  // A restored sliced store goes into per-window tables when they can hold it.
  // Not on a restored native checkpoint: its keys are in RocksDB, which the tables do not read.
  window_tables_ = window_tables_ && sliced_ && !rocks_has_keys();
  if (window_tables_ && (int_store_ || key_store_) && !AdoptStoreIntoTables()) {
    window_tables_ = false;  // state the tables cannot hold: stay on the sliced store
  }
  if (flat_sessions_ && !AdoptRestoredSessions()) {
    flat_sessions_ = false;  // state the flat session path cannot hold: stay per-window
  }
}

}  // namespace tidemark

// WindowOperator's flat session path (see the class comment in window_operator.h): per key, the
// in-flight sessions as plain data with their accumulators inline, and one timer heap entry.
//
// Why it gives the per-window path's output exactly (default EventTimeTrigger, no lateness):
// - In-flight sessions of a key never intersect (a new window merges with every session it
//   intersects), and every in-flight session ends after the watermark (its timer, at its max
//   timestamp, fires and cleans it up as soon as the watermark reaches it). So a new window
//   [t, t + gap) merges exactly with the sessions it intersects itself; the merge result keeps
//   the state window of the earliest of them (`MergingWindowSet`), the others' accumulators are
//   folded into it in ascending order (`MergeStates`) and then the record is added, which is
//   what the per-window states do. A new window that merges with nothing is late iff its max
//   timestamp <= watermark, and then so is the record.
// - The per-window path has one timer per session, at its max timestamp (trigger and cleanup
//   coincide), fired in (time, key) order; a session fires once, then is dropped. Here each key
//   has one live heap entry at or before its earliest session's max timestamp: when it pops
//   early (the session was extended meanwhile) it is re-added at the session's max timestamp,
//   which is later than the time being fired, so the heap still yields (time, key) order.

#include <algorithm>
#include <typeinfo>

#include <fmt/format.h>

#include "operators/window/session_store.h"
#include "operators/window/window_operator.h"
#include "runtime/core/errors.h"

namespace tidemark {

void WindowOperator::InitSessions() {
  const WindowAssigner& assigner = *assigner_;
  const Trigger& trigger = *trigger_;
  const WindowFunction& function = *function_;
  if (sliced_ || typeid(assigner) != typeid(SessionWindows) || !assigner.IsEventTime() ||
      typeid(trigger) != typeid(EventTimeTrigger) ||
      typeid(function) != typeid(AggregatingWindowFunction) || options_.allowed_lateness_ms != 0 ||
      !static_cast<const AggregatingWindowFunction&>(function).HasNarrowForm()) {
    return;
  }
  const auto& sessions = static_cast<const SessionWindows&>(assigner);
  if (sessions.has_dynamic_gap() || sessions.gap_ms() <= 0 ||
      sessions.gap_ms() > kMaxSlicedParameter) {
    return;
  }
  flat_sessions_ = true;
  aggregating_ = static_cast<const AggregatingWindowFunction*>(function_.get());
  gap_ = sessions.gap_ms();
  session_accs_ = aggregating_->num_aggregates();
  slice_aggs_ = SliceAggregates(aggregating_->aggregates());
  slice_words_ = slice_aggs_.words();
}

const SessionKeyState* WindowOperator::FindSessionKey(const Key& key) const {
  if (int_sessions_) {
    const int64_t* v = key.size() == 1 ? std::get_if<int64_t>(&key[0]) : nullptr;
    return v == nullptr ? nullptr : int_sessions_->keys.Find(*v);
  }
  return key_sessions_ ? key_sessions_->keys.Find(KeyProbe::Of(key)) : nullptr;
}

void WindowOperator::MigrateSessionsToKeyStore() {
  // A key that is not a single non-NULL int64 arrived: every key becomes a `Key`, its live timer
  // entry re-added (for int64 values the `Key` order is the int64 order).
  if (!key_sessions_) {
    key_sessions_ =
        std::make_unique<SessionStore<KeyRef>>(context().max_parallelism, OwnedKeyGroups());
  }
  if (!int_sessions_) {
    return;
  }
  UnspillSessions();  // (RocksDB) the spilled int64 keys and their timer entries move too
  int_sessions_->keys.ForEach([this](int, int64_t k, SessionKeyState& ks) {
    const Key key{Value(k)};
    auto [ref, state] = key_sessions_->keys.Emplace(KeyProbe::Of(key));
    if (ks.timer != kMinTimestamp) {
      key_sessions_->timers.Add(ks.timer, *ref);
    }
    *state = std::move(ks);
  });
  int_sessions_.reset();
}

void WindowOperator::SessionProcessElement(StreamRecord& record) {
  // (RocksDB) The cache of hot keys kept within its budget: checked before each batch
  // (ProcessBatch) and every 256 records (counting the keys costs a pass over the key groups).
  if (rocks_session_cf_ >= 0 && ++rocks_session_records_ % 256 == 0) {
    MaybeSpillSessions();
  }
  if (options_.key_slots.size() == 1 && !key_sessions_) {
    if (IsInt64Key(record.row)) {
      if (!int_sessions_) {
        int_sessions_ =
            std::make_unique<SessionStore<int64_t>>(context().max_parallelism, OwnedKeyGroups());
      }
      SessionAdd(*int_sessions_, record.row.GetInt64(static_cast<size_t>(options_.key_slots[0])),
                 record);
      return;
    }
    MigrateSessionsToKeyStore();
  }
  if (!key_sessions_) {
    key_sessions_ =
        std::make_unique<SessionStore<KeyRef>>(context().max_parallelism, OwnedKeyGroups());
  }
  // As on the sliced path: the key fields are looked up in place, no `Key` is built.
  SessionAdd(*key_sessions_, KeyProbe::Of(record.row, options_.key_slots), record);
}

template <typename K, typename Src>
void WindowOperator::SessionAdd(SessionStore<K>& store, const Src& src, StreamRecord& record) {
  const Timestamp t = record.timestamp;
  const Timestamp end = t + gap_;  // |t| < 2^61, gap <= 2^58: no overflow
  const Timestamp wm = timer_service_->CurrentWatermark();
  const size_t n = slice_words_;
  std::pair<const K*, SessionKeyState*> entry = store.keys.FindEntry(src);
  if (entry.second == nullptr && rocks_session_cf_ >= 0) {
    entry = SessionFaultIn(store, src);  // (RocksDB) an evicted key is read back
  }
  auto [found_key, found] = entry;
  // The sessions [lo, hi) intersect [t, end) (TimeWindow::Intersects).
  size_t lo = 0;
  size_t hi = 0;
  if (found != nullptr) {
    auto& sessions = found->sessions;
    lo = sessions.size();
    while (lo > 0 && sessions[lo - 1].end >= t) {
      --lo;  // sessions ascend by end too; in-order records stop at the last one
    }
    hi = lo;
    while (hi < sessions.size() && sessions[hi].start <= end) {
      ++hi;
    }
  }
  if (lo == hi) {
    if (end - 1 <= wm) {
      // A new session that is already past its cleanup time: the record is late too.
      HandleLateElement(record, assigner_->AssignWindows(record, *this));
      return;
    }
    const auto [key, state] = found != nullptr
                                  ? std::pair<const K*, SessionKeyState*>{found_key, found}
                                  : store.keys.Emplace(src);
    SessionKeyState& ks = *state;
    if (found == nullptr) {
      ReuseAccumulators(ks.accs);
    }
    ks.sessions.insert(ks.sessions.begin() + static_cast<std::ptrdiff_t>(lo),
                       FlatSession{t, end, t, end});
    ks.accs.insert(ks.accs.begin() + static_cast<std::ptrdiff_t>(lo * n), n, uint64_t{0});
    slice_aggs_.Add(ks.accs.data() + lo * n, record.row, aggregating_->NextArrival(),
                    slice_strings_);
    if (ks.timer == kMinTimestamp || end - 1 < ks.timer) {
      store.timers.Add(end - 1, *key);
      ks.timer = end - 1;
    }
    return;
  }
  SessionKeyState& ks = *found;
  FlatSession& first = ks.sessions[lo];
  if (hi - lo > 1 || t < first.start || end > first.end) {
    // Merge: the result keeps the first merged session's state window and folds the others'
    // contents into it, in ascending order. Its max timestamp only grows, so the key's timer
    // entry stays at or before its earliest session's end.
    const Timestamp merged_end = std::max(end, ks.sessions[hi - 1].end);
    if (merged_end - 1 <= wm) {
      throw Error(fmt::format(
          "The end timestamp of an event-time window cannot become earlier than the current "
          "watermark by merging. Current watermark: {} window: {}",
          wm, TimeWindow(std::min(t, first.start), merged_end).ToString()));
    }
    for (size_t i = lo + 1; i < hi; ++i) {
      slice_aggs_.Merge(ks.accs.data() + lo * n, ks.accs.data() + i * n, slice_strings_);
      slice_aggs_.Release(ks.accs.data() + i * n, slice_strings_);
    }
    first.start = std::min(t, first.start);
    first.end = merged_end;
    if (hi - lo > 1) {
      ks.sessions.erase(ks.sessions.begin() + static_cast<std::ptrdiff_t>(lo + 1),
                        ks.sessions.begin() + static_cast<std::ptrdiff_t>(hi));
      ks.accs.erase(ks.accs.begin() + static_cast<std::ptrdiff_t>((lo + 1) * n),
                    ks.accs.begin() + static_cast<std::ptrdiff_t>(hi * n));
    }
  }
  slice_aggs_.Add(ks.accs.data() + lo * n, record.row, aggregating_->NextArrival(), slice_strings_);
}

void WindowOperator::FireSession(const Key& key, const FlatSession& session,
                                 const uint64_t* words) {
  const Window w(TimeWindow(session.start, session.end));
  const WindowFunction::Context ctx{key, w, timer_service_->CurrentWatermark(),
                                    timer_service_->processing_time_service()};
  scratch_accs_.resize(session_accs_);
  slice_aggs_.Expand(words, scratch_accs_.data(), slice_strings_);
  aggregating_->FillResultRow(ctx, scratch_accs_.data(), result_row_);
  ++num_windows_fired_;
  if (options_.emit_firing) {
    SetFiring(result_row_, 0);  // without lateness a session fires once
  }
  EmitRecycled(w.MaxTimestamp());
}

void WindowOperator::FireSessionTimers(Timestamp watermark) {
  if (int_sessions_) {
    FireSessionTimers(*int_sessions_, watermark);
  } else if (key_sessions_) {
    FireSessionTimers(*key_sessions_, watermark);
  }
  if (rocks_session_cf_ >= 0) {
    // Every key whose copy's last session ends by now was read back by its timer.
    rocks_session_dead_through_ = std::max(rocks_session_dead_through_, watermark);
    MaybeSpillSessions();
  }
}

template <typename K>
void WindowOperator::FireSessionTimers(SessionStore<K>& store, Timestamp watermark) {
  // One entry: fire the key's earliest session if the entry is at its max timestamp, else move
  // the entry to it (later than `time`, so still in (time, key) order when it is due at this
  // watermark too: `PopDueBefore` merges it into the run).
  auto fire = [&](Timestamp time, const K& key) {
    SessionKeyState* ks = store.keys.Find(key);
    if (ks == nullptr && rocks_session_cf_ >= 0) {
      ks = SessionFaultIn(store, key).second;  // (RocksDB) an evicted key is read back
    }
    if (ks == nullptr || ks->timer != time) {
      return;  // a stale entry
    }
    ks->timer = kMinTimestamp;
    if (ks->sessions.front().end - 1 == time) {
      SetCurrentKey(KeyTraits<K>::ToKey(key, current_key_));
      FireSession(current_key_, ks->sessions.front(), ks->accs.data());
      ks->sessions.erase(ks->sessions.begin());
      slice_aggs_.Release(ks->accs.data(), slice_strings_);
      ks->accs.erase(ks->accs.begin(),
                     ks->accs.begin() + static_cast<std::ptrdiff_t>(slice_words_));
      if (ks->sessions.empty()) {
        RecycleAccumulators(ks->accs);
        if (rocks_session_cf_ >= 0) {
          DropSessionCopy(store, key);  // (RocksDB) a copy read back is dead now
        }
        store.keys.Erase(key);
        return;
      }
    }
    ks->timer = ks->sessions.front().end - 1;
    store.timers.Add(ks->timer, key);
  };
  // The due entries are taken in one run so their keys' state can be requested a few entries
  // ahead (a watermark often passes most keys' entries; each lookup would otherwise wait on
  // memory).
  constexpr size_t kPrefetchDistance = 8;
  auto& due = store.due;
  Timestamp time = kMinTimestamp;
  while (store.timers.TakeDue(watermark, &due) != 0) {
    for (size_t i = 0; i < due.size(); ++i) {
      if (i + kPrefetchDistance < due.size()) {
        store.keys.Prefetch(due[i + kPrefetchDistance].second);
      }
      while (
          store.timers.PopDueBefore(watermark, due[i].first, due[i].second, &time, &store.popped)) {
        fire(time, store.popped);
      }
      fire(due[i].first, due[i].second);
    }
  }
}

void WindowOperator::LeaveSessionPath() {
  flat_sessions_ = false;
  UnspillSessions();  // (RocksDB) the per-window path keeps its state on the heap
  if (int_sessions_) {
    RebuildWindowsFromSessions(*int_sessions_);
  } else if (key_sessions_) {
    RebuildWindowsFromSessions(*key_sessions_);
  }
  int_sessions_.reset();
  key_sessions_.reset();
  slice_strings_.Clear();
  if (rocks_session_cf_ >= 0) {
    rocks_.reset();
    rocks_session_cf_ = -1;
  }
}

template <typename K>
void WindowOperator::RebuildWindowsFromSessions(SessionStore<K>& store) {
  // What the per-window path holds now: per session its entry in the key's MergingWindowSet,
  // its contents under its state window and its timer (trigger and cleanup: one time).
  store.keys.ForEach([&](int, const K& k, const SessionKeyState& ks) {
    SetCurrentKey(KeyTraits<K>::ToKey(k, current_key_));
    const Key key = current_key_;
    for (size_t i = 0; i < ks.sessions.size(); ++i) {
      const FlatSession& s = ks.sessions[i];
      const Window w(TimeWindow(s.start, s.end));
      const Window state_window(TimeWindow(s.state_start, s.state_end));
      merging_sets_[key].RestoreWindow(w, state_window);
      scratch_accs_.resize(session_accs_);
      slice_aggs_.Expand(ks.accs.data() + i * slice_words_, scratch_accs_.data(), slice_strings_);
      panes_[key][state_window] = aggregating_->CreateStateFrom(scratch_accs_.data());
      RegisterCleanupTimer(w);
    }
  });
}

bool WindowOperator::AdoptRestoredSessions() {
  // A restored snapshot is in the per-window format (either path writes it). Its sessions move
  // to the flat path when they are exactly what that path can hold: every pane a session's
  // state window, one event-time timer per session at its max timestamp, nothing else.
  if (trigger_state_.size() != 0 || !firings_.empty() ||
      timer_service_->NumProcessingTimeTimers() != 0) {
    return false;
  }
  size_t n_sessions = 0;
  for (const auto& [key, set] : merging_sets_) {
    auto p = panes_.find(key);
    if (p == panes_.end() || p->second.size() != set.mapping().size()) {
      return false;
    }
    Timestamp previous_end = kMinTimestamp;
    for (const auto& [w, state_window] : set.mapping()) {
      if (w.is_global() || state_window.is_global() || !p->second.contains(state_window) ||
          (previous_end != kMinTimestamp && w.start() <= previous_end) ||
          w.start() <= -kMaxSlicedTimestamp || w.end() >= kMaxSlicedTimestamp) {
        return false;
      }
      previous_end = w.end();
      ++n_sessions;
    }
  }
  if (panes_.size() != merging_sets_.size() || timer_service_->NumEventTimeTimers() != n_sessions) {
    return false;
  }
  for (const InternalTimer<Window>& t : timer_service_->EventTimeTimers()) {
    auto m = merging_sets_.find(t.key);
    if (m == merging_sets_.end() || !m->second.mapping().contains(t.ns) ||
        t.timestamp != t.ns.MaxTimestamp()) {
      return false;
    }
  }
  for (auto& [key, set] : merging_sets_) {
    const int64_t* int_key = key.size() == 1 ? std::get_if<int64_t>(&key[0]) : nullptr;
    SessionKeyState* ks = nullptr;
    if (int_key != nullptr && !key_sessions_) {
      if (!int_sessions_) {
        int_sessions_ =
            std::make_unique<SessionStore<int64_t>>(context().max_parallelism, OwnedKeyGroups());
      }
      ks = int_sessions_->keys.GetOrCreate(*int_key).first;
    } else {
      MigrateSessionsToKeyStore();
      ks = key_sessions_->keys.Emplace(KeyProbe::Of(key)).second;
    }
    Panes& panes = panes_.at(key);
    for (const auto& [w, state_window] : set.mapping()) {
      ks->sessions.push_back(
          FlatSession{w.start(), w.end(), state_window.start(), state_window.end()});
      const AggregateAccumulator* accs = aggregating_->AccumulatorsOf(*panes.at(state_window));
      ks->accs.resize(ks->accs.size() + slice_words_, uint64_t{0});
      slice_aggs_.Compress(accs, ks->accs.data() + (ks->accs.size() - slice_words_),
                           slice_strings_);
    }
    ks->timer = ks->sessions.front().end - 1;
    if (int_sessions_ && int_key != nullptr) {
      int_sessions_->timers.Add(ks->timer, *int_key);
    } else {
      key_sessions_->timers.Add(ks->timer, *key_sessions_->keys.FindEntry(KeyProbe::Of(key)).first);
    }
  }
  for (const auto& [key, set] : merging_sets_) {
    SetCurrentKey(key);
    for (const auto& [w, state_window] : set.mapping()) {
      timer_service_->DeleteEventTimeTimer(w, w.MaxTimestamp());
    }
  }
  panes_.clear();
  merging_sets_.clear();
  return true;
}

}  // namespace tidemark

// The window operator's flat session path on the RocksDB state backend (see the comment at
// `WindowOperator::OpenSessionRocksDb` in window_operator.h): the in-memory session store is a
// bounded write-back cache of hot keys over one RocksDB instance per subtask, column family
// "session-windows", keys prefixed by their key group. RocksDB is the source of truth for the keys
// not in the store: a key is written out (a put) when evicted and read back when a record or its
// timer needs it. A key read back keeps its copy (a delete per read costs as much as the put),
// which the store's state overrides and the key's next eviction overwrites. A key whose last
// session fires is erased from the store and its copy deleted (`DropSessionCopy`; a stale timer
// entry of the key may still pop in the same run); a copy is also dead once every session in it
// has ended (its drop time, first in the value, at or before `rocks_session_dead_through_`), which
// reads check too. Flink's RocksDB backend
// reads a key's window state on every access; the cache in front spares that for hot keys.

#include <algorithm>
#include <type_traits>

#include "operators/window/key_group_write_stage.h"
#include "operators/window/session_store.h"
#include "operators/window/window_operator.h"
#include "runtime/state/key_groups.h"

namespace tidemark {
namespace {
// A key's in-memory footprint for sizing the cache from the memory budget: its slot (one session
// inline, its timer and two accumulator words) with the table's load factor and control bytes,
// and spare room for a second session.
constexpr int64_t kCachedSessionKeyBytes = 160;
constexpr const char* kSessionColumnFamily = "session-windows";

uint64_t SessionKeyHash(int64_t k) {
  return Int64KeyHash64(k);
}
uint64_t SessionKeyHash(const KeyRef& k) {
  return k.hash64();
}
uint64_t SessionKeyHash(const KeyProbe& p) {
  return p.hash64;
}

// The key's canonical bytes (`AppendCanonicalKeyBytes`), the form RocksDB state keeps keys in.
void AppendSessionKeyBytes(int64_t k, std::string& out) {
  AppendCanonicalKeyBytes(Value(k), out);
}
void AppendSessionKeyBytes(const KeyRef& k, std::string& out) {
  for (const Value& v : k.key()) {
    AppendCanonicalKeyBytes(v, out);
  }
}
void AppendSessionKeyBytes(const KeyProbe& p, std::string& out) {
  if (p.row == nullptr) {
    for (const Value& v : *p.key) {
      AppendCanonicalKeyBytes(v, out);
    }
    return;
  }
  for (int slot : *p.slots) {
    AppendCanonicalKeyBytes(*p.row, static_cast<size_t>(slot), out);
  }
}
}  // namespace

void WindowOperator::OpenSessionRocksDb() {
  if (rocks_ || context().state_backend != "rocksdb") {
    return;
  }
  const RocksDbSpec& spec = context().rocksdb;
  rocks_ = std::make_unique<RocksDbKeyedStore>(
      RocksDbKeyedStore::OperatorOptions(spec, context().name, context().subtask_index));
  rocks_session_cf_ = rocks_->ColumnFamily(kSessionColumnFamily);
  rocks_session_cache_keys_ = RocksDbKeyedStore::CachedKeys(spec, kCachedSessionKeyBytes);
}

void WindowOperator::MaybeSpillSessions() {
  if (rocks_session_cf_ < 0) {
    return;
  }
  // The filter of written keys is paid for out of the cache's half of the budget, down to half
  // of the cache (as on the sliced path).
  const size_t filter_keys =
      rocks_session_written_.bytes() / static_cast<size_t>(kCachedSessionKeyBytes);
  const size_t cache_keys = std::max(
      rocks_session_cache_keys_ - std::min(filter_keys, rocks_session_cache_keys_ / 2), size_t{1});
  const size_t target = cache_keys - cache_keys / 4;
  if (int_sessions_ && int_sessions_->keys.size() > cache_keys) {
    SpillSessions(*int_sessions_, target);
  } else if (key_sessions_ && key_sessions_->keys.size() > cache_keys) {
    SpillSessions(*key_sessions_, target);
  }
}

void WindowOperator::EncodeSessionKey(const SessionKeyState& ks) {
  // The copy's drop time (see the file comment), the key's sessions (window and state window),
  // its timer time and each session's accumulators in their general form (the snapshot's bytes
  // for them).
  scratch_accs_.resize(session_accs_);
  StateWriter w;
  w.WriteI64(ks.sessions.back().end - 1);
  w.WriteU32(static_cast<uint32_t>(ks.sessions.size()));
  for (const FlatSession& s : ks.sessions) {
    w.WriteI64(s.start);
    w.WriteI64(s.end);
    w.WriteI64(s.state_start);
    w.WriteI64(s.state_end);
  }
  w.WriteI64(ks.timer);
  for (size_t i = 0; i < ks.sessions.size(); ++i) {
    slice_aggs_.Expand(ks.accs.data() + i * slice_words_, scratch_accs_.data(), slice_strings_);
    for (const AggregateAccumulator& a : scratch_accs_) {
      WriteAccumulator(w, a);
    }
  }
  rocks_value_ = w.Release();
}

void WindowOperator::DecodeSessionKey(std::string_view bytes, SessionKeyState& ks) {
  StateReader r(bytes);
  (void)r.ReadI64();  // the drop time
  const uint32_t n = r.ReadU32();
  if (n == 0 || n > r.remaining() / 32) {
    throw StateCorrupt("rocksdb session window state: a key with a bad number of sessions");
  }
  ks.sessions.clear();
  for (uint32_t i = 0; i < n; ++i) {
    FlatSession s;
    s.start = r.ReadI64();
    s.end = r.ReadI64();
    s.state_start = r.ReadI64();
    s.state_end = r.ReadI64();
    ks.sessions.push_back(s);
  }
  ks.timer = r.ReadI64();
  ReuseAccumulators(ks.accs);
  ks.accs.assign(n * slice_words_, uint64_t{0});
  scratch_accs_.resize(session_accs_);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < session_accs_; ++j) {
      scratch_accs_[j] = ReadAccumulator(r);
    }
    slice_aggs_.Compress(scratch_accs_.data(), ks.accs.data() + i * slice_words_, slice_strings_);
  }
  ++rocks_keys_read_;
}

template <typename K>
void WindowOperator::SpillSessions(SessionStore<K>& store, size_t target) {
  // Whole key groups from a rotating cursor until the store holds `target` keys; a group's keys
  // are staged in RocksDB's key order (the memtable then inserts each next to the one before).
  const KeyGroupRange range = store.keys.key_group_range();
  size_t size = store.keys.size();
  KeyGroupWriteStage stage;
  for (int step = 0; step < range.size() && size > target; ++step) {
    const int kg = EvictionGroup(range, rocks_session_evict_group_);
    auto& table = store.keys.KeyGroupTable(kg);
    for (auto it = table.begin(); it != table.end() && size > target;) {
      SessionKeyState& ks = it->second;
      if (!ks.sessions.empty()) {  // (a key without sessions holds nothing)
        rocks_key_.clear();
        AppendSessionKeyBytes(it->first, rocks_key_);
        EncodeSessionKey(ks);
        stage.Add(rocks_key_, rocks_value_);
        // The copy is read back, at the latest, when the timer of its last session fires.
        rocks_session_written_.Add(ks.sessions.back().end - 1, SessionKeyHash(it->first));
        if (slice_aggs_.has_strings()) {
          for (size_t i = 0; i < ks.sessions.size(); ++i) {
            slice_aggs_.Release(ks.accs.data() + i * slice_words_, slice_strings_);
          }
        }
      }
      RecycleAccumulators(ks.accs);
      table.erase(it++);
      --size;
    }
    stage.Write(*rocks_, rocks_session_cf_, kg, /*by_order=*/false);
    if (size > target) {
      rocks_session_evict_group_ = NextEvictionGroup(range, kg);
    }
  }
  rocks_->Commit();
  ++rocks_spills_;
}

template <typename K, typename Src>
std::pair<const K*, SessionKeyState*> WindowOperator::SessionFaultIn(SessionStore<K>& store,
                                                                     const Src& src) {
  const uint64_t hash = SessionKeyHash(src);
  if (!rocks_session_written_.MayContain(hash, rocks_session_dead_through_)) {
    return {nullptr, nullptr};  // a new key, or one read back since its last eviction
  }
  rocks_key_.clear();
  AppendSessionKeyBytes(src, rocks_key_);
  const int group = KeyGroupForHash(hash, context().max_parallelism);
  rocks_->Commit();
  if (!rocks_->Get(rocks_session_cf_, group, rocks_key_, &rocks_value_) ||
      StateReader(rocks_value_).ReadI64() <= rocks_session_dead_through_) {
    ++rocks_lookups_missed_;  // none, or a dead copy
    return {nullptr, nullptr};
  }
  std::pair<const K*, SessionKeyState*> entry;
  if constexpr (std::is_same_v<K, KeyRef> && std::is_same_v<Src, KeyRef>) {
    entry = store.keys.Emplace(KeyProbe::Of(src.key()));
  } else {
    entry = store.keys.Emplace(src);
  }
  DecodeSessionKey(rocks_value_, *entry.second);
  return entry;
}

void WindowOperator::SessionFaultInBatch(RecordBatch& records) {
  // The int64 keys of the batch the store misses and RocksDB may hold, read with one MultiGet
  // (one pass over the files for the whole batch instead of a Get per record).
  if (rocks_session_cf_ < 0) {
    return;
  }
  MaybeSpillSessions();  // first, so that the keys read stay for the batch
  if (!int_sessions_ || key_sessions_ || options_.key_slots.size() != 1 ||
      rocks_->num_puts(rocks_session_cf_) == 0) {
    return;
  }
  const int slot = options_.key_slots[0];
  const auto uslot = static_cast<size_t>(slot);
  rocks_batch_keys_.clear();
  for (size_t i = 0; i < records.size; ++i) {
    const Row& row = records[i].row;
    if (IsInt64Slot(row, slot) && !row.IsNull(uslot)) {
      const int64_t k = row.GetInt64(uslot);
      if (int_sessions_->keys.Find(k) == nullptr &&
          rocks_session_written_.MayContain(Int64KeyHash64(k), rocks_session_dead_through_)) {
        rocks_batch_keys_.push_back(k);
      }
    }
  }
  if (rocks_batch_keys_.empty()) {
    return;
  }
  std::sort(rocks_batch_keys_.begin(), rocks_batch_keys_.end());
  rocks_batch_keys_.erase(std::unique(rocks_batch_keys_.begin(), rocks_batch_keys_.end()),
                          rocks_batch_keys_.end());
  rocks_read_keys_.clear();
  for (int64_t k : rocks_batch_keys_) {
    std::string prefixed;
    RocksDbKeyedStore::AppendKeyGroup(int_sessions_->keys.KeyGroupOf(k), &prefixed);
    AppendCanonicalKeyBytes(Value(k), prefixed);
    rocks_read_keys_.push_back(std::move(prefixed));
  }
  rocks_->Commit();
  rocks_lookups_missed_ += static_cast<int64_t>(rocks_batch_keys_.size());
  rocks_->MultiGet(rocks_session_cf_, rocks_read_keys_, [&](size_t i, std::string_view value) {
    if (StateReader(value).ReadI64() <= rocks_session_dead_through_) {
      return;  // a dead copy
    }
    --rocks_lookups_missed_;
    DecodeSessionKey(value, *int_sessions_->keys.Emplace(rocks_batch_keys_[i]).second);
  });
}

template <typename K>
void WindowOperator::DropSessionCopy(SessionStore<K>& store, const K& key) {
  if (!rocks_session_written_.MayContain(SessionKeyHash(key), rocks_session_dead_through_)) {
    return;  // never written (or dead)
  }
  rocks_key_.clear();
  AppendSessionKeyBytes(key, rocks_key_);
  rocks_->StageDelete(rocks_session_cf_, store.keys.KeyGroupOf(key), rocks_key_);
}

void WindowOperator::UnspillSessions() {
  if (rocks_session_cf_ < 0 || rocks_->num_puts(rocks_session_cf_) == 0) {
    return;
  }
  rocks_->Commit();
  // A key the store holds overrides its copy (read back, changed since).
  rocks_->ForEach(rocks_session_cf_, [&](int, std::string_view bytes, std::string_view value) {
    if (StateReader(value).ReadI64() <= rocks_session_dead_through_) {
      return;  // a dead copy
    }
    const Key key = DecodeCanonicalKey(bytes);
    SessionKeyState* ks = nullptr;
    if (int_sessions_) {
      const int64_t* v = key.size() == 1 ? std::get_if<int64_t>(&key[0]) : nullptr;
      TM_CHECK(v != nullptr, "rocksdb session state: a non-int64 key beside the int64 store");
      ks = int_sessions_->keys.Emplace(*v).second;
    } else {
      if (!key_sessions_) {
        key_sessions_ =
            std::make_unique<SessionStore<KeyRef>>(context().max_parallelism, OwnedKeyGroups());
      }
      ks = key_sessions_->keys.Emplace(KeyProbe::Of(key)).second;
    }
    if (ks->sessions.empty()) {
      DecodeSessionKey(value, *ks);
    }
  });
  rocks_->Clear(rocks_session_cf_);
  rocks_session_written_.Clear();
}

template void WindowOperator::SpillSessions(SessionStore<int64_t>&, size_t);
template void WindowOperator::DropSessionCopy(SessionStore<int64_t>&, const int64_t&);
template void WindowOperator::DropSessionCopy(SessionStore<KeyRef>&, const KeyRef&);
template void WindowOperator::SpillSessions(SessionStore<KeyRef>&, size_t);
template std::pair<const int64_t*, SessionKeyState*> WindowOperator::SessionFaultIn(
    SessionStore<int64_t>&, const int64_t&);
template std::pair<const KeyRef*, SessionKeyState*> WindowOperator::SessionFaultIn(
    SessionStore<KeyRef>&, const KeyProbe&);
template std::pair<const KeyRef*, SessionKeyState*> WindowOperator::SessionFaultIn(
    SessionStore<KeyRef>&, const KeyRef&);

}  // namespace tidemark

// The window operator's sliced path on the RocksDB state backend (see the comment at
// `WindowOperator::OpenRocksDb` in window_operator.h): the in-memory sliced store is a bounded
// write-back cache over one RocksDB instance per subtask, column family "window-slices", keys
// prefixed by their key group.

#include <algorithm>
#include <xxhash.h>

#include "operators/window/key_group_write_stage.h"
#include "operators/window/sliced_store.h"
#include "operators/window/window_operator.h"
#include "operators/window/window_slices_merge_operator.h"
#include "runtime/state/key_groups.h"

namespace tidemark {
namespace {
// A key's in-memory footprint for sizing the cache from the memory budget: its 72-byte slot
// with the table's load factor and control bytes, and spare room for a second slice.
constexpr int64_t kCachedKeyBytes = 160;
}  // namespace

const char* const kSlicesColumnFamily = "window-slices";
const char* const kCompactSlicesColumnFamily = "window-slices-compact";

void WindowOperator::OpenRocksDb() {
  if (rocks_ || context().state_backend != "rocksdb") {
    return;
  }
  const RocksDbSpec& spec = context().rocksdb;
  RocksDbKeyedStore::Options options;
  options.dir = RocksDbKeyedStore::InstanceDir(spec, context().name, context().subtask_index);
  // Half the budget for RocksDB's cache and write buffers, half for the keys cached in memory.
  options.memory_bytes = std::max<int64_t>(spec.memory_fixed_per_slot / 2, int64_t{1} << 19);
  options.write_buffer_ratio = spec.write_buffer_ratio;
  // Every aggregate of the sliced path merges exactly (CanPreAggregate), so evicted keys are
  // written as merge operands and never read back for their records (see OpenRocksDb in the
  // header).
  rocks_merge_ = true;
  AddRocksWindowOptions(options);
  rocks_ = std::make_unique<RocksDbKeyedStore>(options);
  // Words without strings are written as they are (the compact layout), else in the general one.
  rocks_compact_ = !slice_aggs_.has_strings();
  rocks_cf_ =
      rocks_->ColumnFamily(rocks_compact_ ? kCompactSlicesColumnFamily : kSlicesColumnFamily);
  rocks_cache_keys_ =
      static_cast<size_t>(std::max<int64_t>(spec.memory_fixed_per_slot / 2 / kCachedKeyBytes, 1));
  // The per-window tables, while they are the cache, by their own bytes within the same half.
  tables_budget_ = rocks_cache_keys_ * static_cast<size_t>(kCachedKeyBytes);
}

void WindowOperator::AddRocksWindowOptions(RocksDbKeyedStore::Options& options) const {
  if (rocks_merge_) {
    options.merge_operators.emplace_back(kSlicesColumnFamily,
                                         NewWindowSlicesMergeOperator(slice_aggs_, num_accs_));
    if (!slice_aggs_.has_strings()) {
      options.merge_operators.emplace_back(kCompactSlicesColumnFamily,
                                           NewCompactWindowSlicesMergeOperator(slice_aggs_));
    }
  }
  for (const char* name : {kSlicesColumnFamily, kCompactSlicesColumnFamily}) {
    // Read back at window ends by ReadSorted passes (FireSlicedTimers).
    options.scanned_column_families.emplace_back(name);
    // Written in runs of merge operands with no read between (a record never reads RocksDB): a
    // vector memtable appends them, the flush thread sorts them (the skip list's inserts were a
    // quarter of the task thread's time).
    options.append_only_column_families.emplace_back(name);
  }
}

template <typename K>
void WindowOperator::AppendRocksKey(const K& key) {
  rocks_key_.clear();
  if constexpr (std::is_same_v<K, int64_t>) {
    // AppendCanonicalKeyBytes(Value(key)): the int64 tag and the key's little-endian bytes,
    // without making a Value per key written or read.
    char bytes[9];
    bytes[0] = '\1';
    const auto u = static_cast<uint64_t>(key);
    for (int i = 0; i < 8; ++i) {
      bytes[1 + i] = static_cast<char>((u >> (8 * i)) & 0xff);
    }
    rocks_key_.append(bytes, sizeof bytes);
  } else {
    for (const Value& v : key.key()) {
      AppendCanonicalKeyBytes(v, rocks_key_);
    }
  }
}

void WindowOperator::MaybeSpill() {
  if (!rocks_) {
    return;
  }
  // The filter of written keys (~1.3-1.7 B a key written) is paid for out of the cache's half of
  // the budget, down to half of the cache.
  const size_t filter_keys = rocks_written_.bytes() / static_cast<size_t>(kCachedKeyBytes);
  const size_t cache_keys =
      std::max(rocks_cache_keys_ - std::min(filter_keys, rocks_cache_keys_ / 2), size_t{1});
  const size_t target = cache_keys - cache_keys / 4;
  if (int_store_ && int_store_->keys.size() > cache_keys) {
    SpillStore(*int_store_, target);
  } else if (key_store_ && key_store_->keys.size() > cache_keys) {
    SpillStore(*key_store_, target);
  }
}

void WindowOperator::SpillLeavingTables(size_t tables_bytes) {
  // The store's share: what the tables leave of the budget, at kCachedKeyBytes a key; spilled
  // down to three quarters of it, as MaybeSpill does (and within MaybeSpill's bound once the
  // tables are gone).
  const size_t room = tables_budget_ - std::min(tables_budget_, tables_bytes);
  const size_t limit =
      std::min(std::max<size_t>(room / static_cast<size_t>(kCachedKeyBytes), 1), rocks_cache_keys_);
  const size_t target = limit - limit / 4;
  if (int_store_ && int_store_->keys.size() > limit) {
    SpillStore(*int_store_, target);
  } else if (key_store_ && key_store_->keys.size() > limit) {
    SpillStore(*key_store_, target);
  }
}

bool WindowOperator::RocksDbMayHold() {
  return rocks_written_.MayContain(XXH3_64bits(rocks_key_.data(), rocks_key_.size()),
                                   rocks_dead_through_);
}

void WindowOperator::EncodeSlicedKey(SlicedKeyState& ks) {
  if (rocks_compact_) {
    rocks_value_.clear();
    AppendCompactSlices(ks.starts.data(), ks.starts.size(), ks.next_fire, ks.timer, ks.accs.data(),
                        slice_words_, &rocks_value_);
    return;
  }
  // The value: the key's starts, next firing, timer time and each slice's accumulators in
  // their general form (the snapshot's bytes for a sliced key, without the firing counts,
  // which stay in memory).
  scratch_accs_.resize(num_accs_);
  StateWriter w;
  // First the time the key's last slice is dropped: a copy whose time has passed is dead (see
  // DecodeSlicedKey).
  w.WriteI64(SliceDropTime(ks.starts.back()));
  w.WriteU32(static_cast<uint32_t>(ks.starts.size()));
  for (Timestamp s : ks.starts) {
    w.WriteI64(s);
  }
  w.WriteI64(ks.next_fire);
  w.WriteI64(ks.timer);
  for (size_t i = 0; i < ks.starts.size(); ++i) {
    uint64_t* words = ks.accs.data() + i * slice_words_;
    slice_aggs_.Expand(words, scratch_accs_.data(), slice_strings_);
    for (const AggregateAccumulator& a : scratch_accs_) {
      WriteAccumulator(w, a);
    }
  }
  rocks_value_ = w.Release();
}

bool WindowOperator::IsDeadCopy(std::string_view bytes) const {
  // A key whose last slice was dropped is erased from the store without a delete in RocksDB:
  // its copy there (written before) has only slices dropped by timers that have all fired,
  // which `rocks_dead_through_` says. A live key's copy is never dead: its timer, at or
  // before its first slice's drop time, has not fired yet.
  if (rocks_compact_) {
    CompactSlicesReader r(bytes, slice_words_);
    Timestamp last = kMinTimestamp;
    while (r.Skip(&last)) {
    }
    if (!r.AtEnd()) {
      throw StateCorrupt("rocksdb window state: a value that does not decode");
    }
    return SliceDropTime(last) <= rocks_dead_through_;
  }
  StateReader r(bytes);
  return r.ReadI64() <= rocks_dead_through_;
}

void WindowOperator::DecodeSlicedKey(std::string_view bytes, SlicedKeyState& ks) {
  if (rocks_compact_) {
    CompactSlicesReader c(bytes, slice_words_);
    if (!c.ok()) {
      throw StateCorrupt("rocksdb window state: a value that does not decode");
    }
    ReuseAccumulators(ks.accs);
    ReuseSliceStarts(ks.starts);
    ks.starts.resize(c.slices());
    ks.accs.assign(c.slices() * slice_words_, uint64_t{0});
    for (size_t i = 0; i < c.slices(); ++i) {
      c.Next(&ks.starts[i], ks.accs.data() + i * slice_words_);
    }
    if (!c.AtEnd()) {
      throw StateCorrupt("rocksdb window state: a value that does not decode");
    }
    ks.next_fire = c.next_fire();
    ks.timer = c.timer();
    ++rocks_keys_read_;
    return;
  }
  StateReader r(bytes);
  (void)r.ReadI64();
  const uint32_t n = r.ReadU32();
  if (n == 0 || n > r.remaining() / 8) {
    throw StateCorrupt("rocksdb window state: a key with a bad number of slices");
  }
  ReuseAccumulators(ks.accs);
  ReuseSliceStarts(ks.starts);
  ks.starts.clear();
  for (uint32_t i = 0; i < n; ++i) {
    ks.starts.push_back(r.ReadI64());
  }
  ks.next_fire = r.ReadI64();
  ks.timer = r.ReadI64();
  ks.accs.assign(n * slice_words_, uint64_t{0});
  scratch_accs_.resize(num_accs_);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < num_accs_; ++j) {
      scratch_accs_[j] = ReadAccumulator(r);
    }
    slice_aggs_.Compress(scratch_accs_.data(), ks.accs.data() + i * slice_words_, slice_strings_);
  }
  ++rocks_keys_read_;
}

void WindowOperator::MergeStoredKey(std::string_view bytes, SlicedKeyState& ks) {
  if (ks.starts.empty()) {
    DecodeSlicedKey(bytes, ks);
    return;
  }
  DecodeSlicedKey(bytes, rocks_scratch_);
  SlicedKeyState& from = rocks_scratch_;
  for (size_t i = 0; i < from.starts.size(); ++i) {
    uint64_t* into = FindOrAddSlice(ks, from.starts[i]);
    const uint64_t* words = from.accs.data() + i * slice_words_;
    slice_aggs_.Merge(into, words, slice_strings_);
    if (slice_aggs_.has_strings()) {
      slice_aggs_.Release(words, slice_strings_);
    }
  }
  auto earlier = [](Timestamp a, Timestamp b) {
    return a == kMinTimestamp ? b : (b == kMinTimestamp ? a : std::min(a, b));
  };
  // Each of the two had its timer entry at its `timer`: the earlier one is the key's.
  ks.next_fire = earlier(ks.next_fire, from.next_fire);
  ks.timer = earlier(ks.timer, from.timer);
}

template <typename K>
void WindowOperator::SpillStore(SlicedStore<K>& store, size_t target) {
  // Whole key groups from a rotating cursor until the store holds `target` keys (three quarters
  // of its budget from MaybeSpill: a batch of evictions per spill, not the whole cache, so the
  // keys left stay hot; 0 before a native checkpoint, which needs every key in RocksDB). Every key
  // written is one the store changed since it was read (a key is read back for a record or a
  // firing, both of which change it), so no clean/dirty bit is kept.
  const KeyGroupRange range = store.keys.key_group_range();
  size_t size = store.keys.size();
  KeyGroupWriteStage stage;  // a group's keys, written in RocksDB's key order
  std::vector<std::pair<Timestamp, uint64_t>> written;  // for rocks_written_, added at the end
  for (int step = 0; step < range.size() && size > target; ++step) {
    const int kg = EvictionGroup(range, rocks_evict_group_);
    auto& table = store.keys.KeyGroupTable(kg);
    for (auto it = table.begin(); it != table.end() && size > target;) {
      SlicedKeyState& ks = it->second;
      if (!ks.starts.empty()) {  // (a key without slices holds nothing)
        AppendRocksKey(it->first);
        EncodeSlicedKey(ks);
        // rocks_merge_: a partial state, written as a merge operand (else it replaces what
        // RocksDB holds). An int64 key's place in RocksDB's order (its canonical bytes are a tag
        // and its little-endian bytes: the byte-swapped key, unsigned) is compared instead of
        // the bytes.
        const bool merge = rocks_merge_ && RocksWhole<K>().erase(it->first) == 0;
        uint64_t int_order = 0;
        if constexpr (std::is_same_v<K, int64_t>) {
          int_order = __builtin_bswap64(static_cast<uint64_t>(it->first));
        }
        stage.Add(rocks_key_, rocks_value_, merge, int_order);
        written.emplace_back(SliceDropTime(ks.starts.back()),
                             XXH3_64bits(rocks_key_.data(), rocks_key_.size()));
      }
      if (slice_aggs_.has_strings()) {
        for (size_t i = 0; i < ks.starts.size(); ++i) {
          slice_aggs_.Release(ks.accs.data() + i * slice_words_, slice_strings_);
        }
      }
      RecycleAccumulators(ks.accs);
      RecycleSliceStarts(ks.starts);
      table.erase(it++);
      --size;
    }
    stage.Write(*rocks_, rocks_cf_, kg, std::is_same_v<K, int64_t>);
    if (size > target) {
      rocks_evict_group_ = NextEvictionGroup(range, kg);
    }
  }
  rocks_written_.AddAll(written);
  rocks_->Commit();
  ++rocks_spills_;
  if (rocks_merge_) {
    // A key's partial state registers its timer again (the key's earlier copies did too): the
    // duplicates are dropped as they pile up.
    store.timers.CompactDuplicates();
  }
}

template <typename K>
bool WindowOperator::FaultIn(SlicedStore<K>& store, const K& key, SlicedKeyState& ks) {
  if (rocks_merge_ && RocksWhole<K>().contains(key)) {
    return false;  // read before: the store holds all of it
  }
  AppendRocksKey(key);
  if (!RocksDbMayHold()) {
    return false;  // a new key, or one whose copy is dead
  }
  rocks_->Commit();
  const int group = store.keys.KeyGroupOf(key);
  if (!rocks_->Get(rocks_cf_, group, rocks_key_, &rocks_value_) || IsDeadCopy(rocks_value_)) {
    ++rocks_lookups_missed_;
    return false;
  }
  if (rocks_merge_) {
    // `ks` (a partial state, or none) and the value are the key's state together.
    MergeStoredKey(rocks_value_, ks);
    RocksWhole<K>().insert(key);
    return true;
  }
  // Not deleted: the copy stays until the key is written out again (overwritten) or its last
  // slice is dropped (DropFromRocks); the store's copy overrides it meanwhile.
  DecodeSlicedKey(rocks_value_, ks);
  return true;
}

template <typename K>
void WindowOperator::SortInRocksDbOrder(SlicedStore<K>& store, std::vector<K>& keys) {
  // In place, 2 bytes a key beside the list (a window end of 2e7 keys under the 3e7-key test's
  // 2 GiB limit): the keys go into their key groups' ranges (an in-place counting sort on the
  // group, kept in `groups`), then each group's range is sorted by key bytes.
  const size_t n = keys.size();
  std::vector<uint16_t> groups(n);
  const KeyGroupRange range = store.keys.key_group_range();
  std::vector<size_t> next(static_cast<size_t>(range.size()) + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    groups[i] = static_cast<uint16_t>(store.keys.KeyGroupOf(keys[i]) - range.start);
    ++next[groups[i] + 1];
  }
  for (size_t g = 1; g < next.size(); ++g) {
    next[g] += next[g - 1];
  }
  const std::vector<size_t> bounds = next;  // group g's keys go to [bounds[g], bounds[g + 1])
  for (size_t g = 0; g + 1 < bounds.size(); ++g) {
    while (next[g] < bounds[g + 1]) {
      const size_t i = next[g];
      if (groups[i] == g) {
        ++next[g];
        continue;
      }
      const size_t to = next[groups[i]]++;  // swap it into its group's next free place
      std::swap(keys[i], keys[to]);
      std::swap(groups[i], groups[to]);
    }
  }
  groups = {};
  for (size_t g = 0; g + 1 < bounds.size(); ++g) {
    const auto first = keys.begin() + static_cast<std::ptrdiff_t>(bounds[g]);
    const auto last = keys.begin() + static_cast<std::ptrdiff_t>(bounds[g + 1]);
    if constexpr (std::is_same_v<K, int64_t>) {
      // An int64 key's canonical bytes are a tag byte and its little-endian bytes: in byte order
      // they compare as the byte-swapped key, unsigned.
      std::sort(first, last, [](int64_t a, int64_t b) {
        return __builtin_bswap64(static_cast<uint64_t>(a)) <
               __builtin_bswap64(static_cast<uint64_t>(b));
      });
    } else {
      std::vector<std::pair<std::string, K>> order;
      order.reserve(static_cast<size_t>(last - first));
      for (auto it = first; it != last; ++it) {
        AppendRocksKey(*it);
        order.emplace_back(rocks_key_, *it);
      }
      std::sort(order.begin(), order.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      for (size_t i = 0; i < order.size(); ++i) {
        *(first + static_cast<std::ptrdiff_t>(i)) = order[i].second;
      }
    }
  }
}

template <typename K>
void WindowOperator::FaultInMissing(SlicedStore<K>& store, std::vector<K>& keys,
                                    bool in_rocksdb_order) {
  rocks_->Commit();
  rocks_read_keys_.clear();
  size_t n = 0;
  for (const K& k : keys) {
    if (rocks_merge_ ? RocksWhole<K>().contains(k) : store.keys.Find(k) != nullptr) {
      continue;  // (with rocks_merge_ a cached key may be partial)
    }
    AppendRocksKey(k);
    if (!RocksDbMayHold()) {
      continue;  // a new key, or one whose copy is dead
    }
    keys[n++] = k;  // the misses RocksDB may hold, in place
    std::string prefixed;
    RocksDbKeyedStore::AppendKeyGroup(store.keys.KeyGroupOf(k), &prefixed);
    prefixed += rocks_key_;
    rocks_read_keys_.push_back(std::move(prefixed));
  }
  keys.resize(n);
  rocks_read_found_.clear();
  rocks_lookups_missed_ += static_cast<int64_t>(n);
  auto found = [&](size_t i, std::string_view value) {
    if (IsDeadCopy(value)) {
      return;
    }
    --rocks_lookups_missed_;
    auto [key_in_table, ks] = EmplaceFromKey(store, keys[i]);
    (void)key_in_table;
    if (rocks_merge_) {
      MergeStoredKey(value, *ks);
      rocks_read_found_.push_back(i);  // whole, or deleted (RocksDbAfterFiring)
      return;
    }
    DecodeSlicedKey(value, *ks);
  };
  if (in_rocksdb_order) {
    rocks_->ReadSorted(rocks_cf_, rocks_read_keys_, found);
  } else {
    rocks_->MultiGet(rocks_cf_, rocks_read_keys_, found);
  }
}

template <typename K>
void WindowOperator::RocksDbAfterFiring(SlicedStore<K>& store, const std::vector<K>& keys) {
  auto& whole = RocksWhole<K>();
  for (size_t i : rocks_read_found_) {
    if (store.keys.Find(keys[i]) != nullptr) {
      whole.insert(keys[i]);
    } else if (rocks_delete_dead_) {
      rocks_->StageDelete(rocks_cf_, store.keys.KeyGroupOf(keys[i]),
                          std::string_view(rocks_read_keys_[i]).substr(2));
    }
  }
  rocks_read_found_.clear();
  if (whole.empty()) {
    return;
  }
  for (const K& k : store.due) {  // whole keys read before, not again
    if (store.keys.Find(k) == nullptr && whole.erase(k) > 0 && rocks_delete_dead_) {
      AppendRocksKey(k);
      rocks_->StageDelete(rocks_cf_, store.keys.KeyGroupOf(k), rocks_key_);
    }
  }
}

template <typename K>
void WindowOperator::ShrinkFiredGroups(SlicedStore<K>& store, int first_group, int last_group) {
  // A chunk of a window end is mostly one key group's keys (RocksDB's order), read into that
  // group's table, fired and erased: the table grew to hold the chunk (65,536 keys, 9 MB of slots
  // for int64 keys) and an erase gives no capacity back, so every group of the subtask ended up
  // that large (1.2 GB for 128 groups at the 3e7-key check, which failed with bad_alloc under its
  // 2 GiB limit while the first window fired), far beyond the cache's budget. A group whose keys
  // have all fired is sized down to what it holds once it is more than four times its share of
  // the cache (its table then grows again with its keys, as any group's does).
  const size_t share = rocks_cache_keys_ / static_cast<size_t>(store.keys.key_group_range().size());
  for (int kg = first_group; kg <= last_group; ++kg) {
    auto& table = store.keys.KeyGroupTable(kg);
    if (table.capacity() > 4 * std::max(table.size(), share + 1)) {
      table.rehash(0);
    }
  }
}

void WindowOperator::FaultInBatch(RecordBatch& records) {
  rocks_batch_resolved_ = false;
  if (rocks_merge_ || !rocks_has_keys() || !int_store_ || !sliced_ || key_store_) {
    return;
  }
  const int slot = options_.key_slots[0];
  const auto uslot = static_cast<size_t>(slot);
  rocks_batch_keys_.clear();
  for (size_t i = 0; i < records.size; ++i) {
    const Row& row = records[i].row;
    if (IsInt64Slot(row, slot) && !row.IsNull(uslot)) {
      const int64_t k = row.GetInt64(uslot);
      if (int_store_->keys.Find(k) == nullptr) {
        rocks_batch_keys_.push_back(k);
      }
    }
  }
  std::sort(rocks_batch_keys_.begin(), rocks_batch_keys_.end());
  rocks_batch_keys_.erase(std::unique(rocks_batch_keys_.begin(), rocks_batch_keys_.end()),
                          rocks_batch_keys_.end());
  FaultInMissing(*int_store_, rocks_batch_keys_);
  rocks_batch_resolved_ = true;
}

void WindowOperator::UnspillAll() {
  if (!rocks_has_keys()) {
    return;
  }
  rocks_->Commit();
  // A key the store holds is newer than its copy in RocksDB (read back, changed since), or, with
  // rocks_merge_, the rest of it.
  rocks_->ForEach(rocks_cf_, [&](int, std::string_view bytes, std::string_view value) {
    if (IsDeadCopy(value)) {
      return;
    }
    const Key key = DecodeCanonicalKey(bytes);
    if (int_store_) {
      const int64_t* v = key.size() == 1 ? std::get_if<int64_t>(&key[0]) : nullptr;
      TM_CHECK(v != nullptr, "rocksdb window state: a non-int64 key beside the int64 store");
      if (SlicedKeyState* ks = int_store_->keys.Find(*v); ks == nullptr) {
        DecodeSlicedKey(value, *int_store_->keys.Emplace(*v).second);
      } else if (rocks_merge_ && !rocks_whole_int_.contains(*v)) {
        MergeStoredKey(value, *ks);  // a partial state and the rest of the key
      }
    } else if (key_store_) {
      const KeyProbe probe = KeyProbe::Of(key);
      auto [ref, ks] = key_store_->keys.Emplace(probe);
      if (ks->starts.empty()) {
        DecodeSlicedKey(value, *ks);
      } else if (rocks_merge_ && !rocks_whole_ref_.contains(*ref)) {
        MergeStoredKey(value, *ks);
      }
    }
  });
  rocks_->Clear(rocks_cf_);
  rocks_written_.Clear();
  rocks_whole_int_.clear();
  rocks_whole_ref_.clear();
}

template void WindowOperator::SpillStore(SlicedStore<int64_t>&, size_t);
template void WindowOperator::SpillStore(SlicedStore<KeyRef>&, size_t);
template bool WindowOperator::FaultIn(SlicedStore<int64_t>&, const int64_t&, SlicedKeyState&);
template bool WindowOperator::FaultIn(SlicedStore<KeyRef>&, const KeyRef&, SlicedKeyState&);
template void WindowOperator::FaultInMissing(SlicedStore<int64_t>&, std::vector<int64_t>&, bool);
template void WindowOperator::FaultInMissing(SlicedStore<KeyRef>&, std::vector<KeyRef>&, bool);
template void WindowOperator::SortInRocksDbOrder(SlicedStore<int64_t>&, std::vector<int64_t>&);
template void WindowOperator::SortInRocksDbOrder(SlicedStore<KeyRef>&, std::vector<KeyRef>&);
template void WindowOperator::ShrinkFiredGroups(SlicedStore<int64_t>&, int, int);
template void WindowOperator::ShrinkFiredGroups(SlicedStore<KeyRef>&, int, int);
template void WindowOperator::RocksDbAfterFiring(SlicedStore<int64_t>&,
                                                 const std::vector<int64_t>&);
template void WindowOperator::RocksDbAfterFiring(SlicedStore<KeyRef>&, const std::vector<KeyRef>&);

}  // namespace tidemark

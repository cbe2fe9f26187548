// The window operator's sliced path on the RocksDB state backend (see the comment at
// `WindowOperator::OpenRocksDb` in window_operator.h): the in-memory sliced store is a bounded
// cache over one RocksDB instance per subtask, column family "window-slices", keys prefixed by
// their key group.

#include <algorithm>

#include "operators/window/sliced_store.h"
#include "operators/window/window_operator.h"
#include "runtime/state/key_groups.h"

namespace tidemark {
namespace {
// A key's in-memory footprint for sizing the cache from the memory budget: its 72-byte slot
// with the table's load factor and control bytes, and spare room for a second slice.
constexpr int64_t kCachedKeyBytes = 160;
}  // namespace

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
  rocks_ = std::make_unique<RocksDbKeyedStore>(options);
  rocks_cf_ = rocks_->ColumnFamily("window-slices");
  rocks_cache_keys_ =
      static_cast<size_t>(std::max<int64_t>(spec.memory_fixed_per_slot / 2 / kCachedKeyBytes, 1));
}

template <typename K>
void WindowOperator::AppendRocksKey(const K& key) {
  rocks_key_.clear();
  if constexpr (std::is_same_v<K, int64_t>) {
    AppendCanonicalKeyBytes(Value(key), rocks_key_);
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
  if (int_store_ && int_store_->keys.size() > rocks_cache_keys_) {
    SpillStore(*int_store_);
  } else if (key_store_ && key_store_->keys.size() > rocks_cache_keys_) {
    SpillStore(*key_store_);
  }
}

template <typename K>
void WindowOperator::SpillStore(SlicedStore<K>& store) {
  // The value: the key's starts, next firing, timer time and each slice's accumulators in
  // their general form (the snapshot's bytes for a sliced key, without the firing counts,
  // which stay in memory).
  scratch_accs_.resize(num_accs_);
  store.keys.ForEach([&](int group, const K& key, SlicedKeyState& ks) {
    AppendRocksKey(key);
    StateWriter w;
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
      slice_aggs_.Release(words, slice_strings_);
    }
    rocks_->StagePut(rocks_cf_, group, rocks_key_, w.bytes());
  });
  rocks_->Commit();
  store.keys.Clear();
  ++rocks_spills_;
}

template <typename K>
bool WindowOperator::FaultIn(SlicedStore<K>& store, const K& key, SlicedKeyState& ks) {
  AppendRocksKey(key);
  const int group = store.keys.KeyGroupOf(key);
  if (!rocks_->Get(rocks_cf_, group, rocks_key_, &rocks_value_)) {
    return false;
  }
  rocks_->Delete(rocks_cf_, group, rocks_key_);
  ++rocks_keys_read_;
  StateReader r(rocks_value_);
  const uint32_t n = r.ReadU32();
  if (n == 0 || n > r.remaining() / 8) {
    throw StateCorrupt("rocksdb window state: a key with a bad number of slices");
  }
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
  return true;
}

void WindowOperator::UnspillAll() {
  if (!rocks_has_keys()) {
    return;
  }
  std::vector<std::pair<int, std::string>> keys;
  rocks_->ForEach(rocks_cf_, [&](int group, std::string_view key, std::string_view) {
    keys.emplace_back(group, std::string(key));
  });
  // The canonical bytes back to a key: a row of values read with the snapshot reader's rules.
  auto decode = [](std::string_view bytes) {
    Key key;
    size_t pos = 0;
    auto take = [&](size_t n) {
      if (bytes.size() - pos < n) {
        throw StateCorrupt("rocksdb window state: a truncated key");
      }
      std::string_view out = bytes.substr(pos, n);
      pos += n;
      return out;
    };
    auto le = [](std::string_view b) {
      uint64_t v = 0;
      for (size_t i = b.size(); i-- > 0;) {
        v = (v << 8) | static_cast<unsigned char>(b[i]);
      }
      return v;
    };
    while (pos < bytes.size()) {
      switch (static_cast<unsigned char>(take(1)[0])) {
        case 0:
          key.emplace_back(std::monostate{});
          break;
        case 1:
          key.emplace_back(static_cast<int64_t>(le(take(8))));
          break;
        case 2:
          key.emplace_back(std::bit_cast<double>(le(take(8))));
          break;
        case 3:
          key.emplace_back(take(1)[0] != 0);
          break;
        case 4:
          key.emplace_back(std::string(take(static_cast<size_t>(le(take(4))))));
          break;
        default:
          throw StateCorrupt("rocksdb window state: a key with an unknown value tag");
      }
    }
    return key;
  };
  for (const auto& [group, bytes] : keys) {
    const Key key = decode(bytes);
    bool found = false;
    if (int_store_) {
      const int64_t* v = key.size() == 1 ? std::get_if<int64_t>(&key[0]) : nullptr;
      TM_CHECK(v != nullptr, "rocksdb window state: a non-int64 key beside the int64 store");
      auto [k, ks] = int_store_->keys.Emplace(*v);
      found = FaultIn(*int_store_, *k, *ks);
    } else if (key_store_) {
      auto [k, ks] = key_store_->keys.Emplace(KeyProbe::Of(key));
      found = FaultIn(*key_store_, *k, *ks);
    }
    TM_CHECK(found, "rocksdb window state: a key listed but not found");
  }
  rocks_->Clear(rocks_cf_);
}

template void WindowOperator::SpillStore(SlicedStore<int64_t>&);
template void WindowOperator::SpillStore(SlicedStore<KeyRef>&);
template bool WindowOperator::FaultIn(SlicedStore<int64_t>&, const int64_t&, SlicedKeyState&);
template bool WindowOperator::FaultIn(SlicedStore<KeyRef>&, const KeyRef&, SlicedKeyState&);

}  // namespace tidemark

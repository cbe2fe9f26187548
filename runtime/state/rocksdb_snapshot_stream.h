#pragma once

// Canonical snapshots and restores of keyed state that lives partly in an operator's in-memory
// cache of hot keys and partly in a `RocksDbKeyedStore`, without reading the spilled keys into
// the cache (issue 45: state larger than memory). Mirrors what Flink's RocksDB full snapshots and
// savepoints do (`RocksFullSnapShotStrategy` streams a RocksDB snapshot's iterator key group by
// key group) and its restore (`RocksDBFullRestoreOperation` writes restored entries into
// RocksDB through write batches).
//
// The contract with an operator: a key's state is in exactly one of the cache and one column
// family, and the operator stores a key in RocksDB as `StateWriter::WriteKey` writes it, under
// its key group. The value is the operator's own (both operators store what their snapshot writes
// for the key's state, and write it again from those bytes).

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/core/key.h"
#include "runtime/state/key_groups.h"
#include "runtime/state/rocksdb_keyed_store.h"
#include "runtime/state/state_serializer.h"

namespace rocksdb {
class Iterator;
}  // namespace rocksdb

namespace tidemark {

/// A key read back from a column family: the decoded key and its value bytes as stored.
struct SpilledKey {
  Key key;
  std::string value;
};

/// Reads one column family of a `RocksDbKeyedStore` one key group at a time, in key-group order
/// (keys are prefixed by their group, so a group is a key range). The iterator reads a consistent
/// view of the column family as of construction (RocksDB's implicit snapshot of an iterator) and
/// does not fill the block cache (a full scan would evict the hot keys' blocks).
///
/// Ownership: borrows the store, which must outlive the cursor. Threading: the store's thread.
/// Errors: a RocksDB read failure throws `Error` naming the store's directory; a key that does not
/// decode throws `StateCorrupt`.
class RocksDbKeyGroupCursor {
 public:
  RocksDbKeyGroupCursor(const RocksDbKeyedStore& store, int cf);
  ~RocksDbKeyGroupCursor();
  RocksDbKeyGroupCursor(const RocksDbKeyGroupCursor&) = delete;
  RocksDbKeyGroupCursor& operator=(const RocksDbKeyGroupCursor&) = delete;

  /// The key group of the next entry, or -1 when every entry has been taken.
  int group() const { return group_; }
  /// Replaces `out` with the entries of key group `group()` (in RocksDB's key order) and moves
  /// on to the next group. Requires `group() >= 0`.
  void TakeGroup(std::vector<SpilledKey>& out);

  /// The key groups holding entries in `cf`, ascending: one seek a group (no entry is read
  /// beyond each group's first).
  static std::vector<int> KeyGroupsIn(const RocksDbKeyedStore& store, int cf);

 private:
  void ReadGroup();

  const RocksDbKeyedStore& store_;
  std::unique_ptr<rocksdb::Iterator> it_;
  int group_ = -1;
};

/// What a streamed snapshot did (for the operators' metrics and the tests that bound the memory).
struct StreamedSnapshotStats {
  int64_t groups = 0;        ///< key-group sections written
  int64_t keys = 0;          ///< keys written
  int64_t spilled_keys = 0;  ///< of them, copied from RocksDB
  /// The most spilled keys held in memory at once: one key group's (its working set).
  int64_t peak_group_spilled_keys = 0;
};

/// Writes exactly the bytes `WriteKeyGroups` (state_codec.h) writes for the union of `heap_keys`
/// and the keys in `store`'s column family `cf`, one key group at a time: for each group the
/// spilled keys of that group are read (`RocksDbKeyGroupCursor`), merged with the group's heap
/// keys, sorted, and written; then they are dropped. So at most one key group's spilled keys are
/// in memory (about 1/max-parallelism of the state), never all of them, and the cache is not
/// touched.
///
/// `heap_keys`: the keys the operator holds in memory (its cached keys with state, keys with
/// timers); duplicates are fine. `store` may be null (the heap backend: the same as
/// `WriteKeyGroups`). `write_key(key, spilled)` writes what follows the key: `spilled` points to
/// the key's value bytes from RocksDB, or is null when the key has none there (its state, if
/// any, is in the cache). Threading: the task thread, at the checkpoint barrier (the synchronous
/// part), so the store does not change while it is read.
template <typename WriteKeyFn>
StreamedSnapshotStats WriteKeyGroupsFromStore(StateWriter& writer, int max_parallelism,
                                              std::vector<Key> heap_keys,
                                              const RocksDbKeyedStore* store, int cf,
                                              WriteKeyFn&& write_key) {
  StreamedSnapshotStats stats;
  std::map<int, std::vector<Key>> heap_groups;
  for (Key& k : heap_keys) {
    heap_groups[KeyGroupForHash(KeyHash64(k), max_parallelism)].push_back(std::move(k));
  }
  heap_keys.clear();
  std::vector<int> all_groups;
  std::unique_ptr<RocksDbKeyGroupCursor> cursor;
  if (store != nullptr) {
    all_groups = RocksDbKeyGroupCursor::KeyGroupsIn(*store, cf);
    cursor = std::make_unique<RocksDbKeyGroupCursor>(*store, cf);
  }
  for (const auto& [group, keys] : heap_groups) {
    all_groups.push_back(group);
  }
  std::sort(all_groups.begin(), all_groups.end());
  all_groups.erase(std::unique(all_groups.begin(), all_groups.end()), all_groups.end());
  writer.BeginKeyGroups();
  writer.WriteU32(static_cast<uint32_t>(all_groups.size()));
  uint32_t n_groups = 0;
  std::vector<SpilledKey> spilled;
  std::vector<std::pair<const Key*, const std::string*>> entries;
  auto heap_it = heap_groups.begin();
  while (heap_it != heap_groups.end() || (cursor && cursor->group() >= 0)) {
    int group = heap_it != heap_groups.end() ? heap_it->first : -1;
    spilled.clear();
    if (cursor && cursor->group() >= 0 && (group < 0 || cursor->group() <= group)) {
      group = cursor->group();
      cursor->TakeGroup(spilled);
    }
    entries.clear();
    for (const SpilledKey& s : spilled) {
      if (KeyGroupForHash(KeyHash64(s.key), max_parallelism) != group) {
        throw StateCorrupt("rocksdb state: a key stored under another key group than its own");
      }
      entries.emplace_back(&s.key, &s.value);
    }
    if (heap_it != heap_groups.end() && heap_it->first == group) {
      for (const Key& k : heap_it->second) {
        entries.emplace_back(&k, nullptr);
      }
      ++heap_it;
    }
    // Ascending keys; of equal keys (one with state in RocksDB, the other listed for its
    // timers) the spilled entry first, and it is the one kept.
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      if (*a.first != *b.first) {
        return *a.first < *b.first;
      }
      return a.second != nullptr && b.second == nullptr;
    });
    entries.erase(std::unique(entries.begin(), entries.end(),
                              [](const auto& a, const auto& b) { return *a.first == *b.first; }),
                  entries.end());
    stats.peak_group_spilled_keys =
        std::max(stats.peak_group_spilled_keys, static_cast<int64_t>(spilled.size()));
    stats.spilled_keys += static_cast<int64_t>(spilled.size());
    stats.keys += static_cast<int64_t>(entries.size());
    writer.BeginSection("key-group", 1);
    writer.WriteU32(static_cast<uint32_t>(group));
    writer.WriteU32(static_cast<uint32_t>(entries.size()));
    for (const auto& [key, value] : entries) {
      writer.WriteKey(*key);
      write_key(*key, value);
    }
    writer.EndSection();
    ++n_groups;
  }
  if (n_groups != all_groups.size()) {
    throw StateCorrupt("rocksdb state: the key groups changed while a snapshot was written");
  }
  writer.EndKeyGroups();
  stats.groups = n_groups;
  return stats;
}

/// Where a restore puts the keys its operator's cache has no room for: straight into column
/// family `cf` of `store` (staged puts, committed every `batch_bytes` of staged data and at
/// `Finish`), never into the heap. The operator decides per key (typically: into the cache
/// until its budget, then here) and hands over the value bytes it would spill.
///
/// Ownership: borrows the store. Threading: the store's thread. Errors: a RocksDB write failure
/// throws `Error` naming the store's directory. Destroying the sink without `Finish` drops
/// nothing already committed, and what is staged is committed with the store's next `Commit`.
class RocksDbRestoreSink {
 public:
  RocksDbRestoreSink(RocksDbKeyedStore& store, int cf, int max_parallelism,
                     size_t batch_bytes = size_t{4} << 20)
      : store_(store), cf_(cf), max_parallelism_(max_parallelism), batch_bytes_(batch_bytes) {}

  /// Stages `key` -> `value` (the operator's spilled form of the key's state).
  void Put(const Key& key, std::string_view value);
  /// Commits what is staged.
  void Finish();
  /// Keys put so far.
  int64_t keys() const { return keys_; }

 private:
  RocksDbKeyedStore& store_;
  int cf_;
  int max_parallelism_;
  size_t batch_bytes_;
  size_t staged_bytes_ = 0;
  int64_t keys_ = 0;
};

}  // namespace tidemark

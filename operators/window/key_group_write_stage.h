#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/state/key_groups.h"
#include "runtime/state/rocksdb_keyed_store.h"

namespace tidemark {

/// The window operator's evictions to RocksDB (the sliced path's `SpillStore` and the flat session
/// path's `SpillSessions`): keys are written out a whole key group at a time, from a rotating
/// cursor over the subtask's key-group range, and a group's keys are staged in RocksDB's key order
/// (the in-memory table's order is a hash order) so the memtable inserts each next to the one
/// before (its skip list keeps the last insert's position) rather than from the top of the list.
///
/// Ownership: holds copies of the staged keys and values until `Write`. Threading: the task thread.

/// The key group an eviction starts at: `cursor` wrapped into `range` (the cursor starts at 0,
/// below a range that does not start at 0; C++'s % keeps the sign of a negative left operand).
/// Requires a non-empty range.
inline int EvictionGroup(const KeyGroupRange& range, int cursor) {
  const int groups = range.size();
  return range.start + ((cursor - range.start) % groups + groups) % groups;
}

/// The cursor after key group `key_group` of `range`: the next group, wrapping to the first.
inline int NextEvictionGroup(const KeyGroupRange& range, int key_group) {
  return key_group + 1 > range.end ? range.start : key_group + 1;
}

/// One key group's evicted keys, staged in RocksDB's key order before they are written.
class KeyGroupWriteStage {
 public:
  /// Stages `key` (its canonical bytes, as RocksDB keys it within its group) -> `value`: a put,
  /// or with `merge` a merge operand. `order`, when the caller sorts by it (see `Write`), is the
  /// key's place in RocksDB's order computed without comparing bytes (an int64 key's byte-swapped
  /// value). Copies both.
  void Add(std::string_view key, std::string_view value, bool merge = false, uint64_t order = 0) {
    entries_.push_back(
        Entry{bytes_.size(), bytes_.size() + key.size(), value.size(), merge, order});
    bytes_ += key;
    bytes_ += value;
  }

  /// Stages every entry in `store`'s pending write batch for column family `cf`, key group
  /// `key_group`, in RocksDB's key order (by `order` when `by_order`, else by the key bytes),
  /// then empties the stage. The caller commits.
  void Write(RocksDbKeyedStore& store, int cf, int key_group, bool by_order) {
    auto key_of = [this](const Entry& e) {
      return std::string_view(bytes_).substr(e.key, e.value - e.key);
    };
    std::sort(entries_.begin(), entries_.end(), [&](const Entry& a, const Entry& b) {
      return by_order ? a.order < b.order : key_of(a) < key_of(b);
    });
    for (const Entry& e : entries_) {
      const std::string_view value = std::string_view(bytes_).substr(e.value, e.value_size);
      if (e.merge) {
        store.StageMerge(cf, key_group, key_of(e), value);
      } else {
        store.StagePut(cf, key_group, key_of(e), value);
      }
    }
    entries_.clear();
    bytes_.clear();
  }

 private:
  struct Entry {
    size_t key;  // offsets into `bytes_`: the key's canonical bytes, then its value
    size_t value;
    size_t value_size;
    bool merge;
    uint64_t order;
  };
  std::string bytes_;
  std::vector<Entry> entries_;
};

}  // namespace tidemark

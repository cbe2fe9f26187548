#pragma once

// Shared pieces of operator snapshots over `StateWriter` / `StateReader`: stream records, the
// per-key-group layout of keyed state, and timers. Everything here follows values, never
// memory layout (see state_serializer.h).

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "runtime/core/key.h"
#include "runtime/core/stream_record.h"
#include "runtime/state/key_groups.h"
#include "runtime/state/state_serializer.h"
#include "runtime/time/internal_timer_service.h"

namespace tidemark {

/// A stream record: `Bool` has_timestamp, `I64` timestamp, the row (`WriteRow`).
void WriteRecord(StateWriter& writer, const StreamRecord& record);
/// Reads what `WriteRecord` wrote, its row in `layout`. Errors: `StateCorrupt`.
StreamRecord ReadRecord(StateReader& reader, const RowLayout* layout);

/// Writes keyed state per key group (Flink's key-group-partitioned snapshot): `U32` number of
/// groups, then per group, ascending, a section "key-group" (version 1) holding `U32` group,
/// `U32` number of keys and per key (ascending) the key (`WriteKey`) followed by whatever
/// `write_key(key)` writes. Groups are `KeyGroupForHash(KeyHash64(key), max_parallelism)`.
/// `keys` may hold duplicates (they are written once). The whole is marked as a key-group block
/// (`StateWriter::BeginKeyGroups`), so a restore at another parallelism can split it.
template <typename WriteKey>
void WriteKeyGroups(StateWriter& writer, int max_parallelism, std::vector<Key> keys,
                    WriteKey&& write_key) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::map<int, std::vector<const Key*>> groups;
  for (const Key& k : keys) {
    groups[KeyGroupForHash(KeyHash64(k), max_parallelism)].push_back(&k);
  }
  writer.BeginKeyGroups();
  writer.WriteU32(static_cast<uint32_t>(groups.size()));
  for (const auto& [group, group_keys] : groups) {
    writer.BeginSection("key-group", 1);
    writer.WriteU32(static_cast<uint32_t>(group));
    writer.WriteU32(static_cast<uint32_t>(group_keys.size()));
    for (const Key* k : group_keys) {
      writer.WriteKey(*k);
      write_key(*k);
    }
    writer.EndSection();
  }
  writer.EndKeyGroups();
}

/// Reads what `WriteKeyGroups` wrote, calling `read_key(key)` for every key of a group in `range`
/// (which must read exactly what `write_key` wrote); groups outside `range` are skipped (their
/// keys belong to another subtask after rescaling). Throws `StateCorrupt` for a key stored under
/// a group it does not hash to.
template <typename ReadKey>
void ReadKeyGroups(StateReader& reader, int max_parallelism, KeyGroupRange range,
                   ReadKey&& read_key) {
  const uint32_t n_groups = reader.ReadU32();
  for (uint32_t g = 0; g < n_groups; ++g) {
    reader.BeginSection("key-group", 1);
    const int group = static_cast<int>(reader.ReadU32());
    if (range.Contains(group)) {
      const uint32_t n_keys = reader.ReadU32();
      for (uint32_t i = 0; i < n_keys; ++i) {
        const Key key = reader.ReadKey();
        if (KeyGroupForHash(KeyHash64(key), max_parallelism) != group) {
          throw StateCorrupt(
              fmt::format("snapshot: a key is stored under key group {} of {}, "
                          "not its own",
                          group, max_parallelism));
        }
        read_key(key);
      }
    }
    reader.EndSection();
  }
}

/// The timers of an `InternalTimerService` grouped by key, for writing them inside each key's
/// entry of `WriteKeyGroups`. `write_ns(writer, ns)` writes one namespace.
template <typename N>
class TimersByKey {
 public:
  /// `timers` in (timestamp, key, namespace) order (`InternalTimerService::EventTimeTimers`).
  explicit TimersByKey(const std::vector<InternalTimer<N>>& timers) {
    for (const InternalTimer<N>& t : timers) {
      by_key_[t.key].emplace_back(t.timestamp, t.ns);
    }
  }
  /// Adds every key with a timer to `keys`.
  void AppendKeys(std::vector<Key>& keys) const {
    for (const auto& [k, t] : by_key_) {
      keys.push_back(k);
    }
  }
  /// `U32` count, then per timer (ascending) `I64` time and the namespace.
  template <typename WriteNs>
  void Write(StateWriter& writer, const Key& key, WriteNs&& write_ns) const {
    auto it = by_key_.find(key);
    if (it == by_key_.end()) {
      writer.WriteU32(0);
      return;
    }
    writer.WriteU32(static_cast<uint32_t>(it->second.size()));
    for (const auto& [time, ns] : it->second) {
      writer.WriteI64(time);
      write_ns(writer, ns);
    }
  }

 private:
  std::map<Key, std::vector<std::pair<Timestamp, N>>> by_key_;
};

/// Reads what `TimersByKey::Write` wrote for `key`, re-registering each timer in `service`
/// (event time, or processing time when `processing_time`). `read_ns(reader)` returns one
/// namespace.
template <typename N, typename ReadNs>
void ReadKeyTimers(StateReader& reader, const Key& key, InternalTimerService<N>& service,
                   bool processing_time, ReadNs&& read_ns) {
  const uint32_t n = reader.ReadU32();
  for (uint32_t i = 0; i < n; ++i) {
    InternalTimer<N> t;
    t.timestamp = reader.ReadI64();
    t.key = key;
    t.ns = read_ns(reader);
    if (processing_time) {
      service.RestoreProcessingTimeTimer(t);
    } else {
      service.RestoreEventTimeTimer(t);
    }
  }
}

}  // namespace tidemark

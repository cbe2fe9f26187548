#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/job_spec.h"
#include "runtime/core/key.h"
#include "runtime/core/row.h"

namespace tidemark {

/// Key groups: the unit in which keyed state is partitioned, partitioned again by the hash
/// partitioner, and (later) snapshotted and restored at another parallelism. Mirrors Flink's
/// `KeyGroupRangeAssignment` / `KeyGroupRange`.
///
/// A key's group is `KeyHash64(key) % max_parallelism`, where `KeyHash64` is XXH3-64 of the key's
/// canonical bytes (`AppendCanonicalKeyBytes`): stable across processes, versions and machines
/// (never `std::hash`). Subtask `i` of `p` owns the contiguous range of groups
/// `[ceil(i * max / p), floor(((i + 1) * max - 1) / p)]`, and group `g` belongs to subtask
/// `g * p / max`: the same assignment for the `RecordWriter`'s hash partitioning and for the
/// state of the receiving operator. Pure functions; any thread.

/// `pipeline.max-parallelism` when the job does not set it and no operator runs wider than 85:
/// 128, as in Flink.
inline constexpr int kDefaultMaxParallelism = 128;

/// Flink's `computeDefaultMaxParallelism`: `max(128, next power of two >= 1.5 * parallelism)`,
/// capped at 2^15.
int DefaultMaxParallelism(int parallelism);

/// Appends the canonical bytes of one key field: a tag byte (0 NULL, 1 int64 / timestamp,
/// 2 double, 3 bool, 4 string), then the value (8 bytes little-endian for int64 and the IEEE bits
/// of a double, 1 byte for a bool, a 4-byte little-endian length and the bytes for a string).
void AppendCanonicalKeyBytes(const Value& v, std::string& out);

/// The same bytes for cell `slot` of `row` (no `Value` is built).
void AppendCanonicalKeyBytes(const Row& row, size_t slot, std::string& out);

/// The key whose fields' canonical bytes, appended in order, are `bytes` (the inverse of
/// `AppendCanonicalKeyBytes`; RocksDB state keeps its keys in this form). Throws `StateCorrupt`
/// on truncated bytes or an unknown tag.
Key DecodeCanonicalKey(std::string_view bytes);

/// XXH3-64 of the canonical bytes of `key`'s fields in order.
uint64_t KeyHash64(const Key& key);
/// The same hash for the key made of `row`'s `slots` (no Key is built).
uint64_t KeyHash64(const Row& row, const std::vector<int>& slots);
/// The same hash for a key of one non-NULL int64 field, without a buffer: XXH3_64bits of the
/// canonical bytes {1, v little-endian} (XXH3's 9-to-16-byte case, its default secret's words
/// folded into two constants). Inline: batch loops hash every record's key, and an out-of-line
/// call cost tumbling_keys_1e3's window thread ~22 instructions a record (key_groups_test
/// checks it against the library).
inline uint64_t Int64KeyHash64(int64_t v) {
  __extension__ using U128 = unsigned __int128;
  constexpr uint64_t kBitflip1 = 0x6782737bea4239b9ULL;  // secret[24, 32) ^ secret[32, 40)
  constexpr uint64_t kBitflip2 = 0xaf56bc3b0996523aULL;  // secret[40, 48) ^ secret[48, 56)
  const auto u = static_cast<uint64_t>(v);
  const uint64_t lo = (1 | (u << 8)) ^ kBitflip1;  // canonical bytes 0..7
  const uint64_t hi = u ^ kBitflip2;               // canonical bytes 1..8
  const U128 product = static_cast<U128>(lo) * hi;
  uint64_t acc = 9 + __builtin_bswap64(lo) + hi +
                 (static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64));
  acc ^= acc >> 37;  // XXH3_avalanche
  acc *= 0x165667919E3779F9ULL;
  return acc ^ (acc >> 32);
}

/// Key group of a key hash: `hash % max_parallelism`. `max_parallelism` in [1, 2^15].
inline int KeyGroupForHash(uint64_t hash, int max_parallelism) {
  return static_cast<int>(hash % static_cast<uint64_t>(max_parallelism));
}
/// The subtask (of `parallelism`) owning `key_group`: `key_group * parallelism / max_parallelism`.
inline int OperatorIndexForKeyGroup(int max_parallelism, int parallelism, int key_group) {
  return static_cast<int>(static_cast<int64_t>(key_group) * parallelism / max_parallelism);
}

/// An inclusive range of key groups `[start, end]`; empty when `end < start`. Value type.
struct KeyGroupRange {
  int start = 0;
  int end = -1;
  int size() const { return end >= start ? end - start + 1 : 0; }
  bool Contains(int key_group) const { return key_group >= start && key_group <= end; }
  friend bool operator==(const KeyGroupRange&, const KeyGroupRange&) = default;
};

/// The groups subtask `index` of `parallelism` owns (Flink's
/// `computeKeyGroupRangeForOperatorIndex`). Requires 1 <= parallelism <= max_parallelism and
/// 0 <= index < parallelism; every subtask gets at least one group.
KeyGroupRange KeyGroupRangeForOperator(int max_parallelism, int parallelism, int index);

}  // namespace tidemark

#pragma once

// A may-contain filter of the keys a write-back cache has written to RocksDB, grouped by the time
// their copies die, so a key missing from the cache is read from RocksDB only when it may be
// there (RocksDB's own bloom filters answer the same question, but per SST file, from filter
// blocks that a small block cache reads back from disk for every lookup).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/core/timestamp.h"

namespace tidemark {

/// Blocked Bloom filters of 64-bit key hashes, one per drop time (the time at or after which a
/// copy written with it is dead and reads skip it).
///
/// - `Add(drop, hash)`: the key of `hash` was written with drop time `drop`.
/// - `MayContain(hash, dead_through)`: false only when no key of `hash` was added with a drop
///   time after `dead_through`, i.e. RocksDB holds no live copy of it (no false negatives; about
///   1% false positives). Filters whose drop time is at or before `dead_through` are freed.
///
/// Each drop time's filter grows as segments of 4x the previous one's keys (65,536 first), at
/// ~10 bits a key: ~1.7 B a key in the worst case. At most `kMaxDropTimes` filters are kept; a key
/// beyond that goes to the filter of the next later drop time (or the latest, whose drop time
/// moves up to it), which only keeps it longer. Not thread-safe (the operator's task thread).
/// Mirrors no Flink class (Flink reads RocksDB for every key).
class EvictedKeyFilter {
 public:
  static constexpr size_t kMaxDropTimes = 16;

  void Add(Timestamp drop, uint64_t hash) {
    Filter& f = FilterFor(drop);
    if (f.segments.empty() || f.segments.back().keys == f.segments.back().capacity) {
      const size_t capacity = f.segments.empty() ? size_t{1} << 16 : f.segments.back().capacity * 4;
      f.segments.push_back(Segment::WithCapacity(capacity));
      bytes_ += f.segments.back().words.size() * sizeof(uint64_t);
    }
    f.segments.back().Add(hash);
  }

  /// `Add` of each (drop, hash) of `entries`, the block of each requested a few entries ahead
  /// (a cache miss a key otherwise: the filters of 1e6 keys are megabytes).
  void AddAll(const std::vector<std::pair<Timestamp, uint64_t>>& entries) {
    constexpr size_t kAhead = 8;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i + kAhead < entries.size()) {
        const auto& [drop, hash] = entries[i + kAhead];
        const Filter& f = FilterFor(drop);
        if (!f.segments.empty()) {
          f.segments.back().Prefetch(hash);
        }
      }
      Add(entries[i].first, entries[i].second);
    }
  }

  bool MayContain(uint64_t hash, Timestamp dead_through) {
    DropThrough(dead_through);
    for (const Filter& f : filters_) {
      for (const Segment& s : f.segments) {
        if (s.MayContain(hash)) {
          return true;
        }
      }
    }
    return false;
  }

  // Frees the filters of drop times at or before `dead_through`.
  void DropThrough(Timestamp dead_through) {
    if (!filters_.empty() && filters_.front().drop <= dead_through) {
      auto live = std::find_if(filters_.begin(), filters_.end(),
                               [&](const Filter& f) { return f.drop > dead_through; });
      for (auto it = filters_.begin(); it != live; ++it) {
        for (const Segment& s : it->segments) {
          bytes_ -= s.words.size() * sizeof(uint64_t);
        }
      }
      filters_.erase(filters_.begin(), live);
    }
  }

  void Clear() {
    filters_.clear();
    bytes_ = 0;
  }

  /// Heap bytes of the filters' bits.
  size_t bytes() const { return bytes_; }

 private:
  struct Segment {
    static constexpr size_t kBitsPerKey = 10;
    std::vector<uint64_t> words;  // 8 words (one cache line, 512 bits) a block
    uint64_t block_mask = 0;
    size_t keys = 0;
    size_t capacity = 0;

    static Segment WithCapacity(size_t capacity) {
      Segment s;
      size_t blocks = 1;
      while (blocks * 512 < capacity * kBitsPerKey) {
        blocks *= 2;
      }
      s.words.assign(blocks * 8, 0);
      s.block_mask = blocks - 1;
      s.capacity = capacity;
      return s;
    }
    // 6 bits of one block, 9 bits of the hash each; the block from the hash's top bits.
    void Add(uint64_t hash) {
      uint64_t* block = words.data() + ((hash >> 40) & block_mask) * 8;
      uint64_t h = hash * 0x9E3779B97F4A7C15ULL;
      for (int i = 0; i < 6; ++i, h >>= 9) {
        block[(h >> 6) & 7] |= uint64_t{1} << (h & 63);
      }
      ++keys;
    }
    void Prefetch(uint64_t hash) const {
      __builtin_prefetch(words.data() + ((hash >> 40) & block_mask) * 8, 1);
    }
    bool MayContain(uint64_t hash) const {
      const uint64_t* block = words.data() + ((hash >> 40) & block_mask) * 8;
      uint64_t h = hash * 0x9E3779B97F4A7C15ULL;
      for (int i = 0; i < 6; ++i, h >>= 9) {
        if ((block[(h >> 6) & 7] & (uint64_t{1} << (h & 63))) == 0) {
          return false;
        }
      }
      return true;
    }
  };
  struct Filter {
    Timestamp drop;
    std::vector<Segment> segments;
  };

  Filter& FilterFor(Timestamp drop) {
    auto it = std::lower_bound(filters_.begin(), filters_.end(), drop,
                               [](const Filter& f, Timestamp t) { return f.drop < t; });
    if (it != filters_.end() && (it->drop == drop || filters_.size() >= kMaxDropTimes)) {
      return *it;  // its own, or the next later one's
    }
    if (filters_.size() >= kMaxDropTimes) {
      filters_.back().drop = drop;  // later than every filter's: the latest is kept until it
      return filters_.back();
    }
    return *filters_.insert(it, Filter{drop, {}});
  }

  std::vector<Filter> filters_;  // by drop time, ascending
  size_t bytes_ = 0;
};

}  // namespace tidemark

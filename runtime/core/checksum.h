#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "runtime/core/row.h"

namespace tidemark {

/// Order-independent record checksums, shared by the `checksum` sink and the benchmark baselines
/// (tools/bench) so that "the benchmark computed the same result" is one comparison of two
/// integers. A record's hash mixes each checksummed field with its position; a stream's checksum is
/// the wrapping sum of its records' hashes, so it does not depend on arrival order or on how the
/// stream was split over subtasks. Pure functions; thread-safe; a few ns per field.

/// SplitMix64 finaliser: a cheap, well-mixed 64-bit hash.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// What field number `position` mixes into its bits: `FieldHash(position, bits)` is
/// `Mix64(bits ^ FieldSalt(position))`.
inline uint64_t FieldSalt(size_t position) {
  return static_cast<uint64_t>(position + 1) * 0xD6E8FEB86659FD93ULL;
}

/// Hash of field number `position` (0-based among the checksummed fields) holding `bits`.
inline uint64_t FieldHash(size_t position, uint64_t bits) {
  return Mix64(bits ^ FieldSalt(position));
}
inline uint64_t FieldHash(size_t position, int64_t v) {
  return FieldHash(position, static_cast<uint64_t>(v));
}
inline uint64_t FieldHash(size_t position, double v) {
  return FieldHash(position, std::bit_cast<uint64_t>(v == 0.0 ? 0.0 : v));  // -0.0 == 0.0
}

/// What a NULL field hashes as (before the position's salt).
inline constexpr uint64_t kNullFieldBits = 0x6E756C6CULL;

/// Hash of one Value (int64/timestamp, double, bool, string, NULL) at `position`.
inline uint64_t FieldHash(size_t position, const Value& v) {
  switch (v.index()) {
    case 1:
      return FieldHash(position, std::get<int64_t>(v));
    case 2:
      return FieldHash(position, std::get<double>(v));
    case 3:
      return FieldHash(position, static_cast<int64_t>(std::get<bool>(v) ? 1 : 0));
    case 4:
      return FieldHash(position,
                       static_cast<uint64_t>(std::hash<std::string>{}(std::get<std::string>(v))));
    default:
      return FieldHash(position, kNullFieldBits);  // NULL
  }
}

/// `std::hash<std::string_view>{}(s)` computed inline: with libstdc++ on a 64-bit target, its
/// `_Hash_bytes(data, size, 0xc70f6907)` (a MurmurHash2 variant) spelled out so that a loop over
/// many short strings (the checksum sink's) pays no call per string and no byte loop for the
/// tail; elsewhere std::hash itself. Same value either way (checksum_test compares them).
inline uint64_t StringHash(std::string_view s) {
#if defined(__GLIBCXX__) && defined(__x86_64__)
  constexpr uint64_t kMul = (uint64_t{0xc6a4a793} << 32) + uint64_t{0x5bd1e995};
  const auto shift_mix = [](uint64_t v) {
    return v ^ (v >> 47);
  };
  const auto load = [](const char* p, auto word) {
    std::memcpy(&word, p, sizeof(word));
    return static_cast<uint64_t>(word);
  };
  const char* p = s.data();
  const size_t size = s.size();
  const char* const end = p + (size & ~size_t{7});
  uint64_t hash = uint64_t{0xc70f6907} ^ (size * kMul);
  for (; p != end; p += 8) {
    hash ^= shift_mix(load(p, uint64_t{}) * kMul) * kMul;
    hash *= kMul;
  }
  const size_t tail = size & 7;
  if (tail != 0) {
    // The tail's bytes as a little-endian number: two overlapping loads, or three bytes.
    uint64_t data;
    if (tail >= 4) {
      data = load(p, uint32_t{}) | (load(p + tail - 4, uint32_t{}) << (8 * (tail - 4)));
    } else {
      data = static_cast<uint64_t>(static_cast<unsigned char>(p[0])) |
             (static_cast<uint64_t>(static_cast<unsigned char>(p[tail / 2])) << (8 * (tail / 2))) |
             (static_cast<uint64_t>(static_cast<unsigned char>(p[tail - 1])) << (8 * (tail - 1)));
    }
    hash ^= data;
    hash *= kMul;
  }
  hash = shift_mix(hash) * kMul;
  return shift_mix(hash);
#else
  return static_cast<uint64_t>(std::hash<std::string_view>{}(s));
#endif
}

/// The bits a non-NULL cell of `row` hashes as, by its slot type: `FieldHash(position,
/// row.Get(slot))` is `FieldHash(position, CellHashBits(row, slot))` (a string through `std::hash`,
/// a double with -0.0 as 0.0, a bool as 0 / 1).
inline uint64_t CellHashBits(const Row& row, size_t slot) {
  switch (row.type(slot)) {
    case FieldType::kDouble: {
      const double d = row.GetDouble(slot);
      return std::bit_cast<uint64_t>(d == 0.0 ? 0.0 : d);
    }
    case FieldType::kString:
      return static_cast<uint64_t>(std::hash<std::string_view>{}(row.GetString(slot)));
    default:
      return row.GetBits(slot);  // int64, timestamp, bool 0 / 1
  }
}

/// `FieldHash(position, row.Get(slot))` without boxing.
inline uint64_t FieldHash(size_t position, const Row& row, size_t slot) {
  return FieldHash(position, row.IsNull(slot) ? kNullFieldBits : CellHashBits(row, slot));
}

/// A record's contribution from the sum of its fields' hashes.
inline uint64_t RecordHash(uint64_t field_hash_sum) {
  return Mix64(field_hash_sum);
}

}  // namespace tidemark

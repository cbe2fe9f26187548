#include "runtime/state/key_groups.h"

#include <bit>
#include <cstring>

// Inlined: the hash of an int64 key (9 bytes, a constant length) is a few multiplies, not a
// call through XXH3_64bits's length dispatch; same algorithm, same values.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "runtime/core/errors.h"
#include "runtime/state/state_serializer.h"

namespace tidemark {
namespace {

void AppendLe64(uint64_t x, std::string& out) {
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<char>((x >> (8 * i)) & 0xFF));
  }
}

}  // namespace

int DefaultMaxParallelism(int parallelism) {
  const int64_t want = static_cast<int64_t>(parallelism) + parallelism / 2;
  int64_t pow2 = 1;
  while (pow2 < want) {
    pow2 <<= 1;
  }
  if (pow2 < kDefaultMaxParallelism) {
    return kDefaultMaxParallelism;
  }
  return pow2 > kUpperBoundMaxParallelism ? kUpperBoundMaxParallelism : static_cast<int>(pow2);
}

void AppendCanonicalKeyBytes(const Value& v, std::string& out) {
  switch (v.index()) {
    case 0:
      out.push_back('\0');
      return;
    case 1:
      out.push_back('\1');
      AppendLe64(static_cast<uint64_t>(std::get<int64_t>(v)), out);
      return;
    case 2: {
      out.push_back('\2');
      uint64_t bits = 0;
      const double d = std::get<double>(v);
      std::memcpy(&bits, &d, sizeof bits);
      AppendLe64(bits, out);
      return;
    }
    case 3:
      out.push_back('\3');
      out.push_back(std::get<bool>(v) ? '\1' : '\0');
      return;
    default: {
      const std::string& s = std::get<std::string>(v);
      out.push_back('\4');
      const auto n = static_cast<uint32_t>(s.size());
      for (int i = 0; i < 4; ++i) {
        out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
      }
      out += s;
      return;
    }
  }
}

namespace {

// XXH3_len_9to16_64b (default secret, seed 0) of `len` canonical bytes (9 to 16) from their
// first and last 8 bytes, read little-endian (they overlap when len < 16). Callers form the two
// words in registers: bytes written one by one and read back 8 at a time stalled on store
// forwarding.
uint64_t Xxh3Len9To16(uint64_t first8, uint64_t last8, size_t len) {
  const xxh_u64 bitflip1 = XXH_readLE64(XXH3_kSecret + 24) ^ XXH_readLE64(XXH3_kSecret + 32);
  const xxh_u64 bitflip2 = XXH_readLE64(XXH3_kSecret + 40) ^ XXH_readLE64(XXH3_kSecret + 48);
  const xxh_u64 lo = first8 ^ bitflip1;
  const xxh_u64 hi = last8 ^ bitflip2;
  const xxh_u64 acc = len + XXH_swap64(lo) + hi + XXH3_mul128_fold64(lo, hi);
  return XXH3_avalanche(acc);
}

// A string whose canonical bytes fit XXH3's 9-to-16-byte case (ShortStringKeyHash64).
bool IsShortStringKey(size_t n) {
  return n >= 4 && n <= 11;
}

// XXH3_64bits of a string key's canonical bytes {4, n as 4 bytes little-endian, the n bytes} when
// they are 9 to 16 bytes (n of 4 to 11; user ids, short names), the two words formed from the
// string's own bytes.
uint64_t ShortStringKeyHash64(std::string_view s) {
  const size_t n = s.size();
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t len = n + 5;
  const uint64_t header = uint64_t{4} | (static_cast<uint64_t>(n) << 8);  // bytes 0..4
  uint64_t first8;  // canonical bytes 0..7: the header and the string's first 3
  uint64_t last8;   // canonical bytes len-8..len-1
  if (n >= 8) {
    first8 = header | (XXH_readLE64(p) << 40);
    last8 = XXH_readLE64(p + n - 8);  // the string's last 8
  } else {
    // The whole string (4 to 7 bytes) from two overlapping 4-byte reads: the overlap holds the
    // same bytes in both, so OR joins them; last8 is the header's last 8 - n bytes, then it.
    const uint64_t bytes = static_cast<uint64_t>(XXH_readLE32(p)) |
                           (static_cast<uint64_t>(XXH_readLE32(p + n - 4)) << (8 * (n - 4)));
    first8 = header | (bytes << 40);
    last8 = (header >> (8 * (n - 3))) | (bytes << (8 * (8 - n)));
  }
  return Xxh3Len9To16(first8, last8, len);
}

}  // namespace

uint64_t KeyHash64(const Key& key) {
  if (key.size() == 1) {
    if (const int64_t* v = std::get_if<int64_t>(&key[0])) {
      return Int64KeyHash64(*v);
    }
    if (const std::string* s = std::get_if<std::string>(&key[0])) {
      if (IsShortStringKey(s->size())) {
        return ShortStringKeyHash64(*s);
      }
    }
  }
  thread_local std::string buffer;
  buffer.clear();
  for (const Value& v : key) {
    AppendCanonicalKeyBytes(v, buffer);
  }
  return XXH3_64bits(buffer.data(), buffer.size());
}

void AppendCanonicalKeyBytes(const Row& row, size_t slot, std::string& out) {
  if (row.IsNull(slot)) {
    out.push_back('\0');
    return;
  }
  switch (row.type(slot)) {
    case FieldType::kInt64:
    case FieldType::kTimestamp:
      out.push_back('\1');
      AppendLe64(row.GetBits(slot), out);
      return;
    case FieldType::kDouble:
      out.push_back('\2');
      AppendLe64(row.GetBits(slot), out);
      return;
    case FieldType::kBool:
      out.push_back('\3');
      out.push_back(row.GetBool(slot) ? '\1' : '\0');
      return;
    case FieldType::kString: {
      const std::string_view s = row.GetString(slot);
      out.push_back('\4');
      const auto n = static_cast<uint32_t>(s.size());
      for (int i = 0; i < 4; ++i) {
        out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
      }
      out.append(s);
      return;
    }
  }
}

uint64_t KeyHash64(const Row& row, const std::vector<int>& slots) {
  if (slots.size() == 1) {
    const auto s = static_cast<size_t>(slots[0]);
    const FieldType t = row.type(s);
    if ((t == FieldType::kInt64 || t == FieldType::kTimestamp) && !row.IsNull(s)) {
      return Int64KeyHash64(row.GetInt64(s));
    }
    if (t == FieldType::kString && !row.IsNull(s)) {
      const std::string_view v = row.GetString(s);
      if (IsShortStringKey(v.size())) {
        return ShortStringKeyHash64(v);
      }
    }
  }
  thread_local std::string buffer;
  buffer.clear();
  for (int slot : slots) {
    AppendCanonicalKeyBytes(row, static_cast<size_t>(slot), buffer);
  }
  return XXH3_64bits(buffer.data(), buffer.size());
}

KeyGroupRange KeyGroupRangeForOperator(int max_parallelism, int parallelism, int index) {
  TM_CHECK(parallelism >= 1 && parallelism <= max_parallelism && index >= 0 && index < parallelism,
           "key group range: parallelism {} / max parallelism {} / index {}", parallelism,
           max_parallelism, index);
  const int64_t m = max_parallelism;
  const int64_t p = parallelism;
  KeyGroupRange r;
  r.start = static_cast<int>((index * m + p - 1) / p);
  r.end = static_cast<int>(((index + 1) * m - 1) / p);
  return r;
}

Key DecodeCanonicalKey(std::string_view bytes) {
  Key key;
  size_t pos = 0;
  auto take = [&](size_t n) {
    if (bytes.size() - pos < n) {
      throw StateCorrupt("rocksdb state: a truncated key");
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
        throw StateCorrupt("rocksdb state: a key with an unknown value tag");
    }
  }
  return key;
}

}  // namespace tidemark

#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/core/key.h"
#include "runtime/core/row.h"
#include "runtime/state/key_groups.h"

namespace tidemark {

class KeyPool;

namespace key_ref_internal {
// The empty key and its hash, for a default-constructed `KeyRef`: out of line and cold, so that
// `KeyRef::key()` and `KeyRef::hash64()` inline to a load and a branch (a table probe calls
// them per slot compared, a window end's sort per key).
[[gnu::cold, gnu::noinline]] inline const Key& EmptyKey() {
  static const Key kEmpty;
  return kEmpty;
}
[[gnu::cold, gnu::noinline]] inline uint64_t EmptyKeyHash64() {
  return KeyHash64(Key{});
}

/// One interned key: its values, stable hash and the number of `KeyRef`s to it. Owned by a
/// `KeyPool`; recycled (values kept, so their strings keep their capacity) when unreferenced.
/// A key whose first value is a string of at most `kShortBytes` bytes (a user or session id)
/// also has that string's bytes in the entry itself (`short_bytes`, zero-padded): one cache line
/// with the rest of the entry (64-byte aligned), so the loops over many keys that only need
/// that string (a window end's sort, its result rows, a record's key compare) read the entry
/// and not the values it points at, a second cache miss per key.
struct alignas(64) KeyEntry {
  static constexpr size_t kShortBytes = 16;
  static constexpr uint8_t kNoShort = 0xff;  // `short_len`: the first value is not such a string
  Key key;
  uint64_t hash64 = 0;
  uint32_t refs = 0;
  uint8_t short_len = kNoShort;  // the first value's string length, or kNoShort
  bool single = false;           // `key` is that one value
  KeyPool* pool = nullptr;
  std::array<char, kShortBytes> short_bytes{};

  /// Sets `short_len`, `single` and `short_bytes` from `key`.
  void NoteShort() {
    const std::string* s = key.empty() ? nullptr : std::get_if<std::string>(&key[0]);
    if (s == nullptr || s->size() > kShortBytes) {
      short_len = kNoShort;
      single = false;
      return;
    }
    short_bytes.fill(0);
    std::memcpy(short_bytes.data(), s->data(), s->size());
    short_len = static_cast<uint8_t>(s->size());
    single = key.size() == 1;
  }
};
}  // namespace key_ref_internal

static_assert(sizeof(key_ref_internal::KeyEntry) == 64, "one cache line per interned key");

/// The longest first string a key's pool entry holds itself (`KeyRef::HasShortString`).
constexpr size_t KeyEntryShortBytes() {
  return key_ref_internal::KeyEntry::kShortBytes;
}

/// The key of a keyed-state table for any key that is not a single int64 (strings, doubles,
/// bools, NULLs, several fields): a fixed-width (16-byte) handle to the key's values,
/// stored once in the owning backend's `KeyPool`, with their stable key-group hash
/// (`KeyHash64`) computed once and carried in the handle (a table probe reads no key bytes unless
/// the hashes match). A timer entry, a firing list or a table slot holding the key
/// holds a `KeyRef` (a reference count, not a copy of the values); the values go back to the
/// pool when the last `KeyRef` is destroyed.
///
/// Value semantics by content: two `KeyRef`s are equal when their keys are, and order as their
/// keys do (`std::less<Key>`, the order of Flink's `InternalTimer`s over the same keys), so a
/// stale timer entry of an erased key still finds the key's later state, exactly as a `Key`
/// would. A default-constructed `KeyRef` denotes the empty key.
///
/// Threading: the owning operator's thread only (the count is not atomic). Every `KeyRef` must
/// be destroyed before its pool.
class KeyRef {
 public:
  KeyRef() = default;
  KeyRef(const KeyRef& o) noexcept : e_(o.e_), hash_(o.hash_) {
    if (e_ != nullptr) {
      ++e_->refs;
    }
  }
  KeyRef(KeyRef&& o) noexcept : e_(std::exchange(o.e_, nullptr)), hash_(o.hash_) {}
  KeyRef& operator=(const KeyRef& o) noexcept {
    if (this == &o) {
      return *this;
    }
    if (o.e_ != nullptr) {
      ++o.e_->refs;
    }
    Release();
    e_ = o.e_;
    hash_ = o.hash_;
    return *this;
  }
  KeyRef& operator=(KeyRef&& o) noexcept {
    if (this != &o) {
      Release();
      e_ = std::exchange(o.e_, nullptr);
      hash_ = o.hash_;
    }
    return *this;
  }
  ~KeyRef() { Release(); }

  /// The key's values (the empty key for a default-constructed ref).
  [[gnu::always_inline]] const Key& key() const {
    return e_ != nullptr ? e_->key : key_ref_internal::EmptyKey();
  }
  /// `KeyHash64(key())`.
  [[gnu::always_inline]] uint64_t hash64() const {
    return e_ != nullptr ? hash_ : key_ref_internal::EmptyKeyHash64();
  }

  /// The `KeyRef`s to this key's pool entry, this one included (0 for a default-constructed ref):
  /// for an owner that indexes its keys and drops a key from the index with its last other ref.
  uint32_t use_count() const { return e_ != nullptr ? e_->refs : 0; }

  /// Hints for loops over many keys (a window end's keys): start loading the entry, or (once the
  /// entry is loaded) the key's values, a few keys ahead of use.
  // Always inlined, as KeyedStateBackend::Prefetch: an out-of-line copy is a pure function to
  // GCC, its call deleted.
  [[gnu::always_inline]] void PrefetchEntry() const { __builtin_prefetch(e_); }
  /// (Nothing for a key whose short string is in its entry: see `ShortString`.)
  [[gnu::always_inline]] void PrefetchValues() const {
    if (e_ != nullptr && !e_->single) {
      __builtin_prefetch(e_->key.data());
    }
  }

  /// True when the key's first value is a string of at most `KeyEntry::kShortBytes` bytes,
  /// whose bytes `ShortString` then reads from the entry (not from the values).
  [[gnu::always_inline]] bool HasShortString() const {
    return e_ != nullptr && e_->short_len != key_ref_internal::KeyEntry::kNoShort;
  }
  /// True when the key is exactly one such string (`HasShortString` and nothing else).
  [[gnu::always_inline]] bool IsShortString() const { return e_ != nullptr && e_->single; }
  /// The first value's string, when `HasShortString`.
  [[gnu::always_inline]] std::string_view ShortString() const {
    return {e_->short_bytes.data(), e_->short_len};
  }
  /// `HasShortString`'s bytes, zero-padded to `KeyEntry::kShortBytes`.
  [[gnu::always_inline]] const char* ShortBytes() const { return e_->short_bytes.data(); }

  friend bool operator==(const KeyRef& a, const KeyRef& b) {
    return a.e_ == b.e_ || (a.hash64() == b.hash64() && a.key() == b.key());
  }
  friend bool operator<(const KeyRef& a, const KeyRef& b) {
    return a.e_ != b.e_ && a.key() < b.key();
  }

 private:
  friend class KeyPool;
  explicit KeyRef(key_ref_internal::KeyEntry* e) : e_(e), hash_(e->hash64) { ++e_->refs; }
  inline void Release();
  key_ref_internal::KeyEntry* e_ = nullptr;
  uint64_t hash_ = 0;  // e_->hash64, kept here to spare a probe the pointer chase
};

/// A key of exactly one non-NULL string of at most `kBytes` bytes (a user or session id), held
/// inline where a table keeps its keys: the string's bytes zero-padded to `kBytes`, its length
/// and its stable key-group hash (`KeyHash64` of the one-string key). 32 bytes, no pool entry,
/// no reference count: a table probe, a compare and a sort read the key's own bytes only.
///
/// Order and equality are those of the `Key` of that one string (`std::less<Key>`, i.e.
/// `std::string`'s: unsigned bytes, a prefix first): the padded bytes compared as unsigned bytes
/// (`memcmp`), then the length. (A string shorter than another that agrees with it up to the
/// shorter's length has zeros there in its padding, which are <= the other's bytes; where every
/// padded byte is equal, as for "ab" and "ab\0", the shorter is the prefix and orders first.)
struct ShortStringKey {
  static constexpr size_t kBytes = 16;
  std::array<char, kBytes> bytes{};
  uint64_t hash64 = 0;  // KeyHash64(Key{Value(string)})
  uint8_t len = 0;

  /// Whether a string of `n` bytes fits.
  static constexpr bool Fits(size_t n) { return n <= kBytes; }
  /// The key of the string `s` (which `Fits`) with its `KeyHash64` `hash`.
  [[gnu::always_inline]] static ShortStringKey Of(std::string_view s, uint64_t hash) {
    ShortStringKey k;
    std::memcpy(k.bytes.data(), s.data(), s.size());
    k.len = static_cast<uint8_t>(s.size());
    k.hash64 = hash;
    return k;
  }
  /// Whether `key` is one string that fits; `*out` then holds it (hashed).
  static bool FromKey(const Key& key, ShortStringKey* out) {
    const std::string* s = key.size() == 1 ? std::get_if<std::string>(&key[0]) : nullptr;
    if (s == nullptr || !Fits(s->size())) {
      return false;
    }
    *out = Of(*s, KeyHash64(key));
    return true;
  }
  /// Whether cell `slot` of `row` is a non-NULL string that fits; `*out` then holds it, hashed
  /// as `KeyHash64(row, slots)` (`slots`: `{slot}`).
  [[gnu::always_inline]] static bool FromRow(const Row& row, size_t slot,
                                             const std::vector<int>& slots, ShortStringKey* out) {
    if (row.type(slot) != FieldType::kString || row.IsNull(slot)) {
      return false;
    }
    const std::string_view s = row.GetString(slot);
    if (!Fits(s.size())) {
      return false;
    }
    *out = Of(s, KeyHash64(row, slots));
    return true;
  }

  std::string_view view() const { return {bytes.data(), len}; }
  /// The key as a `Key` into `scratch` (its string's capacity reused).
  const Key& ToKey(Key& scratch) const {
    std::string* s = scratch.size() == 1 ? std::get_if<std::string>(&scratch[0]) : nullptr;
    if (s == nullptr) {
      scratch.assign(1, Value(std::string()));
      s = std::get_if<std::string>(&scratch[0]);
    }
    s->assign(bytes.data(), len);
    return scratch;
  }

  friend bool operator==(const ShortStringKey& a, const ShortStringKey& b) {
    return a.len == b.len && std::memcmp(a.bytes.data(), b.bytes.data(), kBytes) == 0;
  }
  friend bool operator<(const ShortStringKey& a, const ShortStringKey& b) {
    const int c = std::memcmp(a.bytes.data(), b.bytes.data(), kBytes);
    return c < 0 || (c == 0 && a.len < b.len);
  }
};
static_assert(sizeof(ShortStringKey) == 32);

/// A key not interned yet, as a lookup sees it: the cells `row[slots[i]]` of a record, read in
/// place (no `Key` is built), or the values of a `Key` (`row` null), with their `KeyHash64`.
/// Borrows what it points at; valid while that is.
struct KeyProbe {
  const Row* row = nullptr;
  const std::vector<int>* slots = nullptr;  // with `row`
  const Key* key = nullptr;                 // without `row`
  uint64_t hash64 = 0;

  static KeyProbe Of(const Row& row, const std::vector<int>& slots) {
    return KeyProbe{&row, &slots, nullptr, KeyHash64(row, slots)};
  }
  static KeyProbe Of(const Key& key) { return KeyProbe{nullptr, nullptr, &key, KeyHash64(key)}; }

  size_t size() const { return row != nullptr ? slots->size() : key->size(); }
  /// Whether the probe's i-th value equals `v` (as `Value ==` compares; no `Value` is built for a
  /// row cell).
  bool CellEquals(size_t i, const Value& v) const {
    if (row == nullptr) {
      return (*key)[i] == v;
    }
    const auto s = static_cast<size_t>((*slots)[i]);
    if (row->IsNull(s)) {
      return v.index() == 0;
    }
    switch (row->type(s)) {
      case FieldType::kInt64:
      case FieldType::kTimestamp: {
        const int64_t* x = std::get_if<int64_t>(&v);
        return x != nullptr && *x == row->GetInt64(s);
      }
      case FieldType::kDouble: {
        const double* x = std::get_if<double>(&v);
        return x != nullptr && *x == row->GetDouble(s);
      }
      case FieldType::kBool: {
        const bool* x = std::get_if<bool>(&v);
        return x != nullptr && *x == row->GetBool(s);
      }
      case FieldType::kString: {
        const std::string* x = std::get_if<std::string>(&v);
        return x != nullptr && *x == row->GetString(s);
      }
    }
    return false;
  }
  /// Stores the probe's i-th value in `out` (a string keeps `out`'s capacity when it already
  /// holds one).
  void CopyCellTo(size_t i, Value& out) const {
    if (row == nullptr) {
      out = (*key)[i];
      return;
    }
    const auto s = static_cast<size_t>((*slots)[i]);
    if (row->type(s) == FieldType::kString && !row->IsNull(s)) {
      if (std::string* str = std::get_if<std::string>(&out)) {
        str->assign(row->GetString(s));
        return;
      }
    }
    out = row->Get(s);
  }
  /// `Equals(ref.key())`, reading a one-string key's bytes from its entry when it is short
  /// (`KeyRef::IsShortString`): no read of the values.
  bool Equals(const KeyRef& ref) const {
    if (row != nullptr && ref.IsShortString() && slots->size() == 1) {
      const auto s = static_cast<size_t>((*slots)[0]);
      return !row->IsNull(s) && row->type(s) == FieldType::kString &&
             row->GetString(s) == ref.ShortString();
    }
    return Equals(ref.key());
  }
  bool Equals(const Key& other) const {
    const size_t n = size();
    if (other.size() != n) {
      return false;
    }
    for (size_t i = 0; i < n; ++i) {
      if (!CellEquals(i, other[i])) {
        return false;
      }
    }
    return true;
  }
  /// The key as a `Key` (error messages, rarely used paths).
  Key ToKey() const {
    if (row == nullptr) {
      return *key;
    }
    Key k;
    for (int slot : *slots) {
      k.push_back(row->Get(static_cast<size_t>(slot)));
    }
    return k;
  }
};

/// The store of the keys a keyed-state backend holds as `KeyRef`s (its "arena"): entries are
/// allocated once and reused, so a steady state (as many live keys as before) allocates nothing,
/// strings included when a reused entry's strings had the capacity. Not movable (entries point
/// back at it). Threading: the owning operator's thread only.
class KeyPool {
 public:
  KeyPool() = default;
  KeyPool(const KeyPool&) = delete;
  KeyPool& operator=(const KeyPool&) = delete;

  /// A new ref holding a copy of the probe's values.
  KeyRef Make(const KeyProbe& probe) {
    key_ref_internal::KeyEntry* e = Take();
    const size_t n = probe.size();
    e->key.resize(n);
    for (size_t i = 0; i < n; ++i) {
      probe.CopyCellTo(i, e->key[i]);  // a string keeps its capacity
    }
    e->hash64 = probe.hash64;
    e->NoteShort();
    return KeyRef(e);
  }
  KeyRef Make(const Key& key) { return Make(KeyProbe::Of(key)); }

  /// Entries referenced now.
  size_t live() const { return entries_.size() - num_free_; }
  /// Entries allocated (live or free).
  size_t allocated() const { return entries_.size(); }

 private:
  friend class KeyRef;
  // How many entries ahead of use a free entry, and then its values, are requested.
  static constexpr size_t kEntryAhead = 8;
  static constexpr size_t kValuesAhead = 4;

  key_ref_internal::KeyEntry* Take() {
    if (num_free_ > 0) {
      const size_t n = --num_free_;
      // Keys are interned one record after another from entries freed in another order (a
      // window end's keys, sorted), each a cache miss and its values another: the free list is
      // a stack, so the entries the next `Make`s take are known and requested a few takes
      // ahead (the entry kEntryAhead ahead, the values of the one kValuesAhead ahead, whose
      // entry was requested before), instead of the next one only.
      if (n > kEntryAhead) {
        __builtin_prefetch(free_[n - 1 - kEntryAhead]);
      }
      if (n > kValuesAhead) {
        __builtin_prefetch(free_[n - 1 - kValuesAhead]->key.data());
      }
      return free_[n];
    }
    // `Recycle` runs in destructors: the free list has room for every entry, so it never
    // grows (nor allocates) there.
    if (free_capacity_ <= entries_.size()) {
      const size_t capacity = std::max<size_t>(2 * free_capacity_, 64);
      auto grown = std::make_unique<key_ref_internal::KeyEntry*[]>(capacity);
      std::copy_n(free_.get(), num_free_, grown.get());
      free_ = std::move(grown);
      free_capacity_ = capacity;
    }
    entries_.push_back(std::make_unique<key_ref_internal::KeyEntry>());
    entries_.back()->pool = this;
    return entries_.back().get();
  }
  void Recycle(key_ref_internal::KeyEntry* e) { free_[num_free_++] = e; }

  std::vector<std::unique_ptr<key_ref_internal::KeyEntry>> entries_;
  // The unreferenced entries, the next to take last: `num_free_` of `free_capacity_`, which is
  // at least entries_.size() (see Take).
  std::unique_ptr<key_ref_internal::KeyEntry*[]> free_;
  size_t num_free_ = 0;
  size_t free_capacity_ = 0;
};

inline void KeyRef::Release() {
  if (e_ != nullptr && --e_->refs == 0) {
    e_->pool->Recycle(e_);
  }
  e_ = nullptr;
}

/// Scratch buffers of `SortUniqueKeys`, kept by its caller and reused between calls (no
/// allocation in steady state).
struct KeySortScratch {
  /// (abbreviation, index into the keys being sorted); twice the keys during a radix sort.
  std::vector<std::pair<uint64_t, uint32_t>> items;
  /// The keys in sorted order, before they are swapped into place.
  std::vector<KeyRef> sorted;
};

namespace key_ref_internal {
/// Sorts `items` by `first` ascending, stably (LSD radix sort, one pass per byte in which the
/// items differ). The items are plain words (an abbreviation and an index), so a pass moves 16
/// bytes an item and touches no key. `items` is the only buffer: it grows to twice its size for
/// the passes and is back to its size on return (its capacity reused by the next call).
inline void RadixSortByAbbreviation(std::vector<std::pair<uint64_t, uint32_t>>& items) {
  const size_t n = items.size();
  std::array<std::array<uint32_t, 256>, 8> counts{};  // per byte, the items with each value
  for (const auto& item : items) {
    for (size_t b = 0; b < 8; ++b) {
      ++counts[b][(item.first >> (8 * b)) & 0xff];
    }
  }
  items.resize(2 * n);
  size_t from = 0;  // the half holding the items
  for (size_t b = 0; b < 8; ++b) {
    std::array<uint32_t, 256>& c = counts[b];
    if (c[(items[from].first >> (8 * b)) & 0xff] == n) {
      continue;  // every item has this byte: the pass would not move any
    }
    uint32_t at = 0;
    for (uint32_t& slot : c) {
      const uint32_t k = slot;
      slot = at;
      at += k;
    }
    const size_t to = n - from;
    for (size_t i = 0; i < n; ++i) {
      const auto item = items[from + i];
      items[to + c[(item.first >> (8 * b)) & 0xff]++] = item;
    }
    from = to;
  }
  if (from != 0) {
    std::copy(items.begin() + static_cast<std::ptrdiff_t>(n), items.end(), items.begin());
  }
  items.resize(n);
}
}  // namespace key_ref_internal

namespace key_ref_internal {
/// Sorts `items` (an abbreviation and an index each) by abbreviation, equal abbreviations by
/// `less(index, index)` of their keys, then by index (of equal keys, the first stays first):
/// `std::sort` below 512 items, else the radix sort and a comparison sort of each run of equal
/// abbreviations.
template <typename Less>
void SortAbbreviatedItems(std::vector<std::pair<uint64_t, uint32_t>>& items, const Less& less) {
  auto by_key = [&less](const auto& a, const auto& b) {
    if (a.first != b.first) {
      return a.first < b.first;
    }
    if (less(a.second, b.second)) {
      return true;
    }
    return !less(b.second, a.second) && a.second < b.second;
  };
  const size_t n = items.size();
  if (n < 512) {
    std::sort(items.begin(), items.end(), by_key);
    return;
  }
  RadixSortByAbbreviation(items);
  // The radix sort is stable: runs of equal abbreviations are in input order.
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && items[j].first == items[i].first) {
      ++j;
    }
    if (j - i > 1) {
      std::sort(items.begin() + static_cast<std::ptrdiff_t>(i),
                items.begin() + static_cast<std::ptrdiff_t>(j), by_key);
    }
    i = j;
  }
}

}  // namespace key_ref_internal

namespace key_ref_internal {
/// `SortUniqueKeys`' last steps: `items` holds (abbreviation, index) per key, an abbreviation
/// ordering as its key's first string does after the prefix every key shares; sorts them (ties
/// by comparing the keys), moves the keys into that order and drops duplicates. `order`, when
/// given, gets each kept key's index before the sort (see `SortUniqueKeys`).
inline void SortByAbbreviations(std::vector<KeyRef>& keys, KeySortScratch& scratch,
                                std::vector<uint32_t>* order) {
  const size_t n = keys.size();
  std::vector<std::pair<uint64_t, uint32_t>>& items = scratch.items;
  // Strings with the same first `common` bytes order as their following bytes do
  // (unsigned, as std::char_traits<char>::compare); equal abbreviations compare in full.
  // (Equal keys by their index: the first of them is kept, as std::unique keeps it.)
  SortAbbreviatedItems(items, [&keys](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  // Into place, duplicates dropped: equal keys have equal abbreviations and are adjacent, so
  // only a run of equal abbreviations compares keys.
  std::vector<KeyRef>& sorted = scratch.sorted;
  sorted.clear();
  sorted.reserve(n);
  if (order != nullptr) {
    order->clear();
    order->reserve(n);
  }
  for (size_t i = 0; i < n; ++i) {
    KeyRef& k = keys[items[i].second];
    if (i > 0 && items[i].first == items[i - 1].first && k == sorted.back()) {
      continue;
    }
    sorted.push_back(std::move(k));
    if (order != nullptr) {
      order->push_back(items[i].second);
    }
  }
  keys.swap(sorted);
  sorted.clear();  // the moved-from refs (and the duplicates)
  items.clear();
}

/// The 8 bytes of `bytes` from `at` on, big-endian, zero past `len`: unsigned byte order.
[[gnu::always_inline]] inline uint64_t Abbreviate(const char* bytes, size_t len, size_t at) {
  std::array<unsigned char, 8> b{};
  if (at < len) {
    std::memcpy(b.data(), bytes + at, std::min<size_t>(8, len - at));
  }
  uint64_t abbrev = 0;
  for (unsigned char c : b) {
    abbrev = (abbrev << 8) | c;
  }
  return abbrev;
}

/// `SortUniqueKeys` when every key's first value is a short string (`KeyRef::HasShortString`):
/// the prefix and the abbreviations come from the keys' entries alone (one cache line per key,
/// not the entry and then the values). Returns false, `keys` untouched, when a key's is not.
inline bool SortUniqueShortKeys(std::vector<KeyRef>& keys, KeySortScratch& scratch,
                                std::vector<uint32_t>* order) {
  const size_t n = keys.size();
  std::vector<std::pair<uint64_t, uint32_t>>& items = scratch.items;
  items.clear();
  items.reserve(2 * n);
  const char* first = nullptr;
  size_t common = 0;
  for (size_t j = 0; j < n; ++j) {
    if (j + 16 < n) {
      keys[j + 16].PrefetchEntry();
    }
    const KeyRef& k = keys[j];
    if (!k.HasShortString()) {
      items.clear();
      return false;
    }
    const std::string_view s = k.ShortString();
    if (first == nullptr) {
      first = s.data();
      common = s.size();
    } else if (s.size() < common || std::memcmp(first, s.data(), common) != 0) {
      size_t i = 0;
      const size_t m = std::min(common, s.size());
      while (i < m && first[i] == s[i]) {
        ++i;
      }
      common = i;
    }
    items.emplace_back(0, static_cast<uint32_t>(j));
  }
  for (size_t j = 0; j < n; ++j) {
    const std::string_view s = keys[j].ShortString();  // (entries cached by the pass above)
    items[j].first = Abbreviate(s.data(), s.size(), common);
  }
  SortByAbbreviations(keys, scratch, order);
  return true;
}
}  // namespace key_ref_internal

/// Sorts `keys` ascending (`std::less<Key>` of their values) and removes duplicates. When
/// every key's first field is a string (the common case: a user or session id), the keys are
/// sorted by an 8-byte abbreviation of that string after the prefix all of them share (ties
/// fall back to comparing the keys), so sorting 10^5 keys of one window end costs no pointer
/// chasing per comparison; from 512 keys on, by a radix sort of (abbreviation, index) words (a
/// pass per byte in which they differ) instead of comparisons, each key then moved once into
/// its place. Short strings (`KeyRef::HasShortString`) are read from the keys' pool entries,
/// longer ones from their values. `scratch` is reused between calls (no allocation in steady
/// state). `order`, when given, is set to the permutation applied: `(*order)[i]` is the index
/// `keys[i]` had before the call (of equal keys, the first is kept), so that values kept beside the
/// keys in another vector follow them.
inline void SortUniqueKeys(std::vector<KeyRef>& keys, KeySortScratch& scratch,
                           std::vector<uint32_t>* order = nullptr) {
  if (keys.size() < 2) {
    if (order != nullptr) {
      order->assign(keys.size(), 0);
    }
    return;
  }
  if (key_ref_internal::SortUniqueShortKeys(keys, scratch, order)) {
    return;
  }
  // Pass 1: the prefix the first fields share, every key's first string noted with its index
  // (its entry and values requested a few keys ahead: 10^5 keys are 10^5 entries).
  const size_t n = keys.size();
  std::vector<std::pair<uint64_t, uint32_t>>& items = scratch.items;
  items.clear();
  items.reserve(2 * n);
  const std::string* first = nullptr;
  size_t common = 0;
  for (size_t j = 0; j < n; ++j) {
    if (j + 16 < n) {
      keys[j + 16].PrefetchEntry();
    }
    if (j + 8 < n) {
      keys[j + 8].PrefetchValues();
    }
    const Key& key = keys[j].key();
    const std::string* s = key.empty() ? nullptr : std::get_if<std::string>(&key[0]);
    if (s == nullptr) {
      first = nullptr;
      break;
    }
    if (first == nullptr) {
      first = s;
      common = s->size();
    } else if (s->size() < common || std::memcmp(first->data(), s->data(), common) != 0) {
      // (Most keys share the prefix so far: one compare of it, then the byte loop only here.)
      size_t i = 0;
      const size_t m = std::min(common, s->size());
      while (i < m && (*first)[i] == (*s)[i]) {
        ++i;
      }
      common = i;
    }
    items.emplace_back(reinterpret_cast<uintptr_t>(s), static_cast<uint32_t>(j));
  }
  if (first == nullptr) {
    items.clear();
    if (order == nullptr) {
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      return;
    }
    // The indices sorted by their keys (stable: of equal keys the first is kept, as
    // std::unique keeps it), then the keys moved into that order.
    std::vector<uint32_t>& idx = *order;
    idx.resize(n);
    for (size_t j = 0; j < n; ++j) {
      idx[j] = static_cast<uint32_t>(j);
    }
    std::stable_sort(idx.begin(), idx.end(),
                     [&keys](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
    idx.erase(std::unique(idx.begin(), idx.end(),
                          [&keys](uint32_t a, uint32_t b) { return keys[a] == keys[b]; }),
              idx.end());
    std::vector<KeyRef>& sorted = scratch.sorted;
    sorted.clear();
    sorted.reserve(idx.size());
    for (uint32_t j : idx) {
      sorted.push_back(std::move(keys[j]));
    }
    keys.swap(sorted);
    sorted.clear();
    return;
  }
  // Pass 2: the abbreviations, from the strings noted in pass 1 (each lives in the entry its
  // key keeps alive).
  for (size_t j = 0; j < n; ++j) {
    if (j + 8 < n) {
      // NOLINTNEXTLINE(performance-no-int-to-ptr): pass 1 stored the string's address.
      __builtin_prefetch(reinterpret_cast<const void*>(items[j + 8].first));
    }
    // NOLINTNEXTLINE(performance-no-int-to-ptr): pass 1 stored the string's address.
    const std::string& s = *reinterpret_cast<const std::string*>(items[j].first);
    items[j].first = key_ref_internal::Abbreviate(s.data(), s.size(), common);
  }
  key_ref_internal::SortByAbbreviations(keys, scratch, order);
}

/// The order that sorts `keys[0..n)` ascending (`ShortStringKey`'s `<`, which is `std::less<Key>`
/// of their strings) into `order`: `(*order)[i]` is the index of the i-th key; equal keys keep
/// their input order. As `SortUniqueKeys`, by an 8-byte abbreviation of the padded bytes after
/// the prefix every key shares (a radix sort of (abbreviation, index) words from 512 keys on),
/// ties compared in full; the keys are neither moved nor deduplicated.
inline void SortShortStringKeys(const ShortStringKey* keys, size_t n, KeySortScratch& scratch,
                                std::vector<uint32_t>& order) {
  std::vector<std::pair<uint64_t, uint32_t>>& items = scratch.items;
  items.clear();
  items.reserve(2 * n);
  size_t common = ShortStringKey::kBytes;
  for (size_t j = 1; j < n && common > 0; ++j) {
    if (std::memcmp(keys[0].bytes.data(), keys[j].bytes.data(), common) != 0) {
      size_t i = 0;
      while (keys[0].bytes[i] == keys[j].bytes[i]) {
        ++i;
      }
      common = i;
    }
  }
  for (size_t j = 0; j < n; ++j) {
    items.emplace_back(
        key_ref_internal::Abbreviate(keys[j].bytes.data(), ShortStringKey::kBytes, common),
        static_cast<uint32_t>(j));
  }
  key_ref_internal::SortAbbreviatedItems(
      items, [keys](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  order.resize(n);
  for (size_t i = 0; i < n; ++i) {
    order[i] = items[i].second;
  }
  items.clear();
}

/// `std::sort` and `std::unique` for every other key type.
template <typename K>
void SortUniqueKeys(std::vector<K>& keys, KeySortScratch& /*scratch*/) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
}

}  // namespace tidemark

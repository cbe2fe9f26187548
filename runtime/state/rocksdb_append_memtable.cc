#include "runtime/state/rocksdb_append_memtable.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <rocksdb/memtablerep.h>
#include <rocksdb/slice.h>
#include <string>
#include <vector>

namespace tidemark {
namespace {

// A memtable entry as MemTable::Add lays it out (a frozen format, see
// MemTableRep::KeyComparator::decode_key): varint32 internal-key length, the internal key (the
// user key, then 8 bytes of sequence number and type, little-endian), then the value.
struct Entry {
  uint64_t prefix;  // the user key's first 8 bytes, big-endian, zero-padded
  const char* key;  // the entry in the memtable's arena
};

const char* DecodeVarint32(const char* p, uint32_t* value) {
  uint32_t v = 0;
  for (int shift = 0; shift <= 28; shift += 7) {
    const auto byte = static_cast<uint8_t>(*p++);
    v |= static_cast<uint32_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      break;
    }
  }
  *value = v;
  return p;
}

rocksdb::Slice InternalKey(const char* entry) {
  uint32_t n = 0;
  const char* p = DecodeVarint32(entry, &n);
  return {p, n};
}

uint64_t UserKeyPrefix(const char* entry) {
  const rocksdb::Slice ikey = InternalKey(entry);
  const size_t user = ikey.size() >= 8 ? ikey.size() - 8 : 0;
  uint64_t prefix = 0;
  for (size_t i = 0; i < std::min<size_t>(user, 8); ++i) {
    prefix |= static_cast<uint64_t>(static_cast<uint8_t>(ikey.data()[i])) << (56 - 8 * i);
  }
  return prefix;
}

// RocksDB's internal key order over its bytewise comparator: user key ascending, then the
// packed sequence number and type descending. Zero padding keeps the prefixes' order the keys'
// order: a key that ends inside the prefix is a prefix of any key padded equal to it.
bool EntryLess(const Entry& a, const Entry& b) {
  if (a.prefix != b.prefix) {
    return a.prefix < b.prefix;
  }
  const rocksdb::Slice ka = InternalKey(a.key);
  const rocksdb::Slice kb = InternalKey(b.key);
  const rocksdb::Slice ua(ka.data(), ka.size() - 8);
  const rocksdb::Slice ub(kb.data(), kb.size() - 8);
  if (const int c = ua.compare(ub); c != 0) {
    return c < 0;
  }
  uint64_t ta = 0;
  uint64_t tb = 0;
  std::memcpy(&ta, ka.data() + ua.size(), 8);  // little-endian hosts only (as RocksDB's build)
  std::memcpy(&tb, kb.data() + ub.size(), 8);
  return ta > tb;
}

// The memtable key (varint32 length, internal key) of a lookup, or null when `k` is not laid
// out as checked here. rocksdb::LookupKey (db/dbformat.h, not among the installed headers)
// begins with three pointers: the memtable key, the internal key inside it, and their end; a
// layout that does not agree with itself is not read.
const char* MemTableKey(const rocksdb::LookupKey& k) {
  const char* p[3];
  std::memcpy(static_cast<void*>(p), static_cast<const void*>(&k), sizeof(p));
  const char* start = p[0];
  const char* kstart = p[1];
  const char* end = p[2];
  if (start == nullptr || kstart <= start || kstart - start > 5 || end < kstart ||
      end - kstart < 8) {
    return nullptr;
  }
  uint32_t n = 0;
  if (DecodeVarint32(start, &n) != kstart || static_cast<size_t>(end - kstart) != n) {
    return nullptr;
  }
  return start;
}

using Entries = std::vector<Entry>;

// A memtable's entries, shared by the memtable and its iterators.
struct Table {
  std::mutex mu;
  Entries entries;  // guarded by mu until immutable and sorted
  bool immutable = false;
  bool sorted = false;

  // The entries of an immutable memtable, sorted once for all its iterators.
  const Entries& Sorted() {
    std::lock_guard<std::mutex> lock(mu);
    if (!sorted) {
      std::sort(entries.begin(), entries.end(), EntryLess);
      sorted = true;
    }
    return entries;
  }
};

class Iter final : public rocksdb::MemTableRep::Iterator {
 public:
  using KeyComparator = rocksdb::MemTableRep::KeyComparator;
  // `table` set: iterates that immutable table, sorted at the first positioning; else owns
  // `copy`. `slot`, when set, is cleared on destruction (see AppendOnlyRep::Slot).
  Iter(Table* table, std::unique_ptr<Entries> copy, const KeyComparator& compare,
       std::atomic<bool>* slot)
      : table_(table), copy_(std::move(copy)), compare_(compare), slot_(slot) {}
  ~Iter() override {
    if (slot_ != nullptr) {
      slot_->store(false, std::memory_order_release);
    }
  }
  Iter(const Iter&) = delete;
  Iter& operator=(const Iter&) = delete;

  bool Valid() const override { return entries_ != nullptr && pos_ < entries_->size(); }
  const char* key() const override { return (*entries_)[pos_].key; }
  void Next() override {
    if (pos_ < entries_->size()) {
      ++pos_;
    }
  }
  void Prev() override {
    // Before the first entry: invalid (past the end), as RocksDB's VectorRep.
    pos_ = pos_ == 0 ? entries_->size() : pos_ - 1;
  }
  void Seek(const rocksdb::Slice& internal_key, const char* memtable_key) override {
    const Entries& e = Sorted();
    auto less = [&](const Entry& a, int) {
      return memtable_key != nullptr ? compare_(a.key, memtable_key) < 0
                                     : compare_(a.key, internal_key) < 0;
    };
    pos_ = static_cast<size_t>(std::lower_bound(e.begin(), e.end(), 0, less) - e.begin());
  }
  void SeekForPrev(const rocksdb::Slice& internal_key, const char* memtable_key) override {
    const Entries& e = Sorted();
    auto greater = [&](int, const Entry& a) {
      return memtable_key != nullptr ? compare_(a.key, memtable_key) > 0
                                     : compare_(a.key, internal_key) > 0;
    };
    const auto it = std::upper_bound(e.begin(), e.end(), 0, greater);  // the first one after
    pos_ = it == e.begin() ? e.size() : static_cast<size_t>(it - e.begin()) - 1;
  }
  void SeekToFirst() override {
    Sorted();
    pos_ = 0;
  }
  void SeekToLast() override {
    const Entries& e = Sorted();
    pos_ = e.empty() ? 0 : e.size() - 1;
  }

 private:
  const Entries& Sorted() {
    if (entries_ == nullptr) {
      if (table_ != nullptr) {
        entries_ = &table_->Sorted();
      } else {
        std::sort(copy_->begin(), copy_->end(), EntryLess);
        entries_ = copy_.get();
      }
    }
    return *entries_;
  }

  Table* table_;
  std::unique_ptr<Entries> copy_;
  const KeyComparator& compare_;
  std::atomic<bool>* slot_;
  const Entries* entries_ = nullptr;
  size_t pos_ = 0;
};

class AppendOnlyRep final : public rocksdb::MemTableRep {
 public:
  AppendOnlyRep(const KeyComparator& compare, rocksdb::Allocator* allocator)
      : MemTableRep(allocator), compare_(compare) {}

  void Insert(rocksdb::KeyHandle handle) override {
    const auto* key = static_cast<const char*>(handle);
    const Entry e{UserKeyPrefix(key), key};
    std::lock_guard<std::mutex> lock(table_.mu);
    table_.entries.push_back(e);
    // The vector's capacity, not its size: RocksDB sizes its flushes by this, and a grown
    // vector holds up to twice the entries it has.
    bytes_.store(table_.entries.capacity() * sizeof(Entry), std::memory_order_relaxed);
  }

  bool Contains(const char* key) const override {
    std::lock_guard<std::mutex> lock(table_.mu);
    return std::any_of(table_.entries.begin(), table_.entries.end(),
                       [&](const Entry& e) { return compare_(e.key, key) == 0; });
  }

  void MarkReadOnly() override {
    std::lock_guard<std::mutex> lock(table_.mu);
    table_.immutable = true;
  }

  size_t ApproximateMemoryUsage() override {
    return sizeof(*this) + bytes_.load(std::memory_order_relaxed);
  }

  // RocksDB's default Get (7.8) leaks the iterator it asks for, and that iterator would copy and
  // sort a written table per lookup (the window operator's late firings and MultiGets read these
  // column families by key): this one walks only the entries of the looked-up user key, in the
  // order a seek to `k` reaches them, until `callback_func` declines.
  void Get(const rocksdb::LookupKey& k, void* callback_args,
           bool (*callback_func)(void* arg, const char* entry)) override {
    const char* lookup = MemTableKey(k);
    if (lookup == nullptr) {
      MemTableRep::Get(k, callback_args, callback_func);  // a RocksDB of another layout
      return;
    }
    bool immutable = false;
    Entries matches;
    {
      std::lock_guard<std::mutex> lock(table_.mu);
      immutable = table_.immutable;
      if (!immutable) {
        const rocksdb::Slice ikey = InternalKey(lookup);
        const rocksdb::Slice user(ikey.data(), ikey.size() - 8);
        const uint64_t prefix = UserKeyPrefix(lookup);
        for (const Entry& e : table_.entries) {
          if (e.prefix == prefix && compare_(e.key, lookup) >= 0) {
            const rocksdb::Slice ekey = InternalKey(e.key);
            if (rocksdb::Slice(ekey.data(), ekey.size() - 8) == user) {
              matches.push_back(e);
            }
          }
        }
      }
    }
    const Entries* walk = &matches;
    size_t pos = 0;
    if (immutable) {
      walk = &table_.Sorted();
      pos = static_cast<size_t>(
          std::lower_bound(walk->begin(), walk->end(), 0,
                           [&](const Entry& a, int) { return compare_(a.key, lookup) < 0; }) -
          walk->begin());
    } else {
      std::sort(matches.begin(), matches.end(), EntryLess);
    }
    while (pos < walk->size() && callback_func(callback_args, (*walk)[pos].key)) {
      ++pos;
    }
  }

  Iterator* GetIterator(rocksdb::Arena* arena) override {
    Table* table = nullptr;
    std::unique_ptr<Entries> copy;
    {
      std::lock_guard<std::mutex> lock(table_.mu);
      if (table_.immutable) {
        table = &table_;
      } else {
        copy = std::make_unique<Entries>(table_.entries);  // still written: a copy of now
      }
    }
    if (arena == nullptr) {
      return new Iter(table, std::move(copy), compare_, nullptr);
    }
    std::lock_guard<std::mutex> lock(slots_mu_);
    Slot* slot = nullptr;
    for (Slot& s : slots_) {
      if (!s.used.load(std::memory_order_acquire)) {
        slot = &s;
        break;
      }
    }
    if (slot == nullptr) {
      slot = &slots_.emplace_back();
    }
    slot->used.store(true, std::memory_order_relaxed);
    return new (slot->bytes) Iter(table, std::move(copy), compare_, &slot->used);
  }

 private:
  // Storage for the iterators RocksDB places in its arena (it then calls only their destructor):
  // rocksdb::Arena is not in RocksDB's public headers, so they live here instead, a slot each,
  // reused once its iterator is destroyed (RocksDB destroys a memtable's iterators before the
  // memtable).
  struct Slot {
    alignas(Iter) unsigned char bytes[sizeof(Iter)];
    std::atomic<bool> used{false};
  };

  const KeyComparator& compare_;
  mutable Table table_;
  std::atomic<size_t> bytes_{0};  // the entries' allocation
  std::mutex slots_mu_;
  std::deque<Slot> slots_;
};

class AppendOnlyRepFactory final : public rocksdb::MemTableRepFactory {
 public:
  const char* Name() const override { return "TidemarkAppendOnlyRepFactory"; }
  using MemTableRepFactory::CreateMemTableRep;
  rocksdb::MemTableRep* CreateMemTableRep(const rocksdb::MemTableRep::KeyComparator& compare,
                                          rocksdb::Allocator* allocator,
                                          const rocksdb::SliceTransform* /*prefix_extractor*/,
                                          rocksdb::Logger* /*logger*/) override {
    return new AppendOnlyRep(compare, allocator);
  }
};

}  // namespace

std::shared_ptr<rocksdb::MemTableRepFactory> NewAppendOnlyMemTableFactory() {
  return std::make_shared<AppendOnlyRepFactory>();
}

}  // namespace tidemark

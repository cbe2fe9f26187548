// The append-only memtable (runtime/state/rocksdb_append_memtable.h) against RocksDB's own skip
// list: the same writes (puts, merge operands, deletes; keys sharing their first 8 bytes,
// shorter than 8 bytes, with zero bytes, written many times) read back the same, from the
// memtable being written, after a flush, forwards and backwards, by Get (now and at a snapshot),
// Seek and SeekForPrev.

#include "runtime/state/rocksdb_append_memtable.h"

#include <filesystem>
#include <memory>
#include <random>
#include <rocksdb/db.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/options.h>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

namespace tidemark {
namespace {

// Operands joined by ',' (associative, so flushes may merge them in parts).
class JoinOperator : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice& /*key*/, const rocksdb::Slice* existing,
             const rocksdb::Slice& value, std::string* new_value,
             rocksdb::Logger* /*logger*/) const override {
    *new_value =
        existing == nullptr ? value.ToString() : existing->ToString() + "," + value.ToString();
    return true;
  }
  const char* Name() const override { return "JoinOperator"; }
};

struct Db {
  std::string dir;
  std::unique_ptr<rocksdb::DB> db;
  Db(const std::string& name, bool append_only) {
    dir = (std::filesystem::temp_directory_path() /
           ("tm_append_memtable_" + std::to_string(::getpid()) + "_" + name))
              .string();
    std::filesystem::remove_all(dir);
    rocksdb::Options o;
    o.create_if_missing = true;
    o.merge_operator = std::make_shared<JoinOperator>();
    o.write_buffer_size = 64 << 10;  // several memtables over the test's writes
    o.disable_auto_compactions = true;
    if (append_only) {
      o.memtable_factory = NewAppendOnlyMemTableFactory();
      o.allow_concurrent_memtable_write = false;
    }
    rocksdb::DB* raw = nullptr;
    EXPECT_TRUE(rocksdb::DB::Open(o, dir, &raw).ok());
    db.reset(raw);
  }
  ~Db() {
    db.reset();
    std::filesystem::remove_all(dir);
  }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  std::vector<std::pair<std::string, std::string>> Scan(bool backwards) const {
    std::vector<std::pair<std::string, std::string>> out;
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    if (backwards) {
      for (it->SeekToLast(); it->Valid(); it->Prev()) {
        out.emplace_back(it->key().ToString(), it->value().ToString());
      }
    } else {
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        out.emplace_back(it->key().ToString(), it->value().ToString());
      }
    }
    EXPECT_TRUE(it->status().ok());
    return out;
  }

  // Seek and SeekForPrev to `target`: the keys found, "-" for none.
  std::pair<std::string, std::string> Around(const std::string& target) const {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    it->Seek(target);
    std::string after = it->Valid() ? it->key().ToString() : "-";
    it->SeekForPrev(target);
    std::string before = it->Valid() ? it->key().ToString() : "-";
    return {after, before};
  }

  // `snapshot` set: the value as of it (a lookup that passes newer entries of the key).
  std::string Get(const std::string& key, const rocksdb::Snapshot* snapshot = nullptr) const {
    std::string v;
    rocksdb::ReadOptions read;
    read.snapshot = snapshot;
    const rocksdb::Status s = db->Get(read, key, &v);
    return s.IsNotFound() ? "<none>" : v;
  }
};

std::vector<std::string> Keys() {
  std::vector<std::string> keys = {std::string(),
                                   std::string(1, '\0'),
                                   std::string(2, '\0'),
                                   "a",
                                   "ab",
                                   std::string("ab\0", 3),
                                   "abcdefgh",
                                   std::string("abcdefgh\0", 9),
                                   "abcdefghi",
                                   "abcdefghj",
                                   "abcdefgg\xff",
                                   "\xff\xff\xff\xff\xff\xff\xff\xff\xff"};
  // Window-operator-like keys: a 2-byte key group, a tag, an int64's little-endian bytes.
  for (int i = 0; i < 300; ++i) {
    std::string k;
    k.push_back(static_cast<char>(i % 3));
    k.push_back(static_cast<char>(i % 7));
    k.push_back('\1');
    const uint64_t v = static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ULL;
    for (int b = 0; b < 8; ++b) {
      k.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
    }
    keys.push_back(k);
  }
  return keys;
}

TEST(RocksDbAppendMemTableTest, ReadsBackWhatTheSkipListDoes) {
  Db append("append", true);
  Db skip("skip", false);
  const std::vector<std::string> keys = Keys();
  std::mt19937_64 rng(45);
  const rocksdb::Snapshot* append_then = nullptr;
  const rocksdb::Snapshot* skip_then = nullptr;
  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    const auto forwards = skip.Scan(false);
    EXPECT_FALSE(forwards.empty());
    EXPECT_EQ(append.Scan(false), forwards);
    EXPECT_EQ(append.Scan(true), skip.Scan(true));
    for (const std::string& k : keys) {
      EXPECT_EQ(append.Get(k), skip.Get(k)) << k;
      EXPECT_EQ(append.Get(k, append_then), skip.Get(k, skip_then)) << k;
      EXPECT_EQ(append.Around(k), skip.Around(k)) << k;
      EXPECT_EQ(append.Around(k + "x"), skip.Around(k + "x")) << k;
    }
  };
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 4000; ++i) {
      if (i == 3900) {  // the last 100 writes are after the snapshots
        append_then = append.db->GetSnapshot();
        skip_then = skip.db->GetSnapshot();
      }
      const std::string& k = keys[rng() % keys.size()];
      const std::string v = std::to_string(round) + ":" + std::to_string(i);
      const int op = static_cast<int>(rng() % 10);
      rocksdb::WriteOptions w;
      w.disableWAL = true;
      for (Db* db : {&append, &skip}) {
        const rocksdb::Status s = op == 0  ? db->db->Delete(w, k)
                                  : op < 3 ? db->db->Put(w, k, v)
                                           : db->db->Merge(w, k, v);
        ASSERT_TRUE(s.ok()) << s.ToString();
      }
    }
    check("with a memtable being written");  // its entries copied and sorted per read
    for (Db* db : {&append, &skip}) {
      ASSERT_TRUE(db->db->Flush(rocksdb::FlushOptions()).ok());
    }
    check("after a flush");  // from level-0 files the flushes sorted
    append.db->ReleaseSnapshot(append_then);
    skip.db->ReleaseSnapshot(skip_then);
  }
}

// RocksDB flushes a memtable when its reported memory reaches the write buffer size: the report
// must count the entries' whole allocation (a grown vector's capacity), not only the entries
// written, or the memtable outgrows its share of the memory budget by up to a half.
TEST(RocksDbAppendMemTableTest, ReportsTheEntriesAllocation) {
  struct AnyOrder : rocksdb::MemTableRep::KeyComparator {
    int operator()(const char* /*a*/, const char* /*b*/) const override { return 0; }
    int operator()(const char* /*a*/, const rocksdb::Slice& /*b*/) const override { return 0; }
  };
  const AnyOrder compare;
  const std::shared_ptr<rocksdb::MemTableRepFactory> factory = NewAppendOnlyMemTableFactory();
  std::unique_ptr<rocksdb::MemTableRep> rep(
      factory->CreateMemTableRep(compare, nullptr, nullptr, nullptr));
  const size_t empty = rep->ApproximateMemoryUsage();
  // Memtable keys as RocksDB writes them: varint32 length, user key, 8 bytes sequence and type.
  constexpr int kEntries = 1025;  // one past a power of two: the vector has grown past it
  std::vector<std::string> keys;
  keys.reserve(kEntries);
  for (int i = 0; i < kEntries; ++i) {
    std::string k(1, static_cast<char>(15));
    k += "key" + std::to_string(1000 + i);  // 7 bytes
    k.append(8, '\0');
    keys.push_back(k);
    rep->Insert(keys.back().data());
  }
  // An entry is 16 bytes (a key prefix and the key's address); the vector holds more than
  // kEntries of them after growing past 1024.
  EXPECT_GT(rep->ApproximateMemoryUsage() - empty, size_t{16} * kEntries);
  EXPECT_LE(rep->ApproximateMemoryUsage() - empty, size_t{16} * 2 * kEntries);
}

}  // namespace
}  // namespace tidemark

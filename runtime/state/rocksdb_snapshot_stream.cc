#include "runtime/state/rocksdb_snapshot_stream.h"

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>

#include <fmt/format.h>

#include "runtime/core/errors.h"

namespace tidemark {

namespace {
int GroupOf(const rocksdb::Slice& k) {
  if (k.size() < 2) {
    throw StateCorrupt("rocksdb state: a key without its key-group prefix");
  }
  return (static_cast<unsigned char>(k[0]) << 8) | static_cast<unsigned char>(k[1]);
}
}  // namespace

RocksDbKeyGroupCursor::RocksDbKeyGroupCursor(const RocksDbKeyedStore& store, int cf)
    : store_(store) {
  rocksdb::ReadOptions read;
  read.fill_cache = false;
  it_.reset(store.db()->NewIterator(read, store.handle(cf)));
  it_->SeekToFirst();
  ReadGroup();
}

RocksDbKeyGroupCursor::~RocksDbKeyGroupCursor() = default;

void RocksDbKeyGroupCursor::ReadGroup() {
  if (it_->Valid()) {
    group_ = GroupOf(it_->key());
    return;
  }
  group_ = -1;
  if (!it_->status().ok()) {
    throw Error(fmt::format("rocksdb state backend: reading for a snapshot in {}: {}", store_.dir(),
                            it_->status().ToString()));
  }
}

void RocksDbKeyGroupCursor::TakeGroup(std::vector<SpilledKey>& out) {
  TM_CHECK(group_ >= 0, "rocksdb key-group cursor: no group left");
  out.clear();
  const int group = group_;
  for (; it_->Valid(); it_->Next()) {
    const rocksdb::Slice k = it_->key();
    if (GroupOf(k) != group) {
      break;
    }
    StateReader r(std::string_view(k.data() + 2, k.size() - 2));
    SpilledKey& entry = out.emplace_back();
    entry.key = r.ReadKey();
    entry.value.assign(it_->value().data(), it_->value().size());
  }
  ReadGroup();
}

std::vector<int> RocksDbKeyGroupCursor::KeyGroupsIn(const RocksDbKeyedStore& store, int cf) {
  rocksdb::ReadOptions read;
  read.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(store.db()->NewIterator(read, store.handle(cf)));
  std::vector<int> groups;
  std::string prefix;
  for (it->SeekToFirst(); it->Valid();) {
    const int group = GroupOf(it->key());
    groups.push_back(group);
    prefix.clear();
    RocksDbKeyedStore::AppendKeyGroup(group + 1, &prefix);
    it->Seek(prefix);
  }
  if (!it->status().ok()) {
    throw Error(fmt::format("rocksdb state backend: reading for a snapshot in {}: {}", store.dir(),
                            it->status().ToString()));
  }
  return groups;
}

void RocksDbRestoreSink::Put(const Key& key, std::string_view value) {
  StateWriter kw;
  kw.WriteKey(key);
  store_.StagePut(cf_, KeyGroupForHash(KeyHash64(key), max_parallelism_), kw.bytes(), value);
  ++keys_;
  staged_bytes_ += kw.bytes().size() + value.size();
  if (staged_bytes_ >= batch_bytes_) {
    store_.Commit();
    staged_bytes_ = 0;
  }
}

void RocksDbRestoreSink::Finish() {
  store_.Commit();
  staged_bytes_ = 0;
}

}  // namespace tidemark

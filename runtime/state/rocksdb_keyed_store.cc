#include "runtime/state/rocksdb_keyed_store.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <rocksdb/write_buffer_manager.h>
#include <system_error>
#include <unistd.h>

#include "runtime/core/errors.h"
#include "runtime/state/rocksdb_append_memtable.h"
#include "runtime/state/rocksdb_local_dir.h"

namespace tidemark {

struct RocksDbKeyedStore::Shared {
  std::shared_ptr<rocksdb::Cache> cache;
  std::shared_ptr<rocksdb::WriteBufferManager> write_buffers;
};

namespace {
/// The largest memtable (RocksDB's and Flink's default `write_buffer_size`, 64 MiB).
constexpr size_t kMaxWriteBufferBytes = size_t{64} << 20;

void Check(const rocksdb::Status& s, const std::string& dir, const char* what) {
  if (!s.ok()) {
    throw Error(fmt::format("rocksdb state backend: {} in {}: {}", what, dir, s.ToString()));
  }
}
}  // namespace

std::string RocksDbKeyedStore::InstanceDir(const RocksDbSpec& spec,
                                           const std::string& operator_name, int subtask_index) {
  static std::atomic<int64_t> counter{0};
  const std::filesystem::path root = spec.localdir.empty() ? std::filesystem::temp_directory_path()
                                                           : std::filesystem::path(spec.localdir);
  return (root / fmt::format("tidemark-rocksdb-{}-{}-{}-{}", getpid(), operator_name, subtask_index,
                             counter.fetch_add(1)))
      .string();
}

RocksDbKeyedStore::RocksDbKeyedStore(Options options)
    : options_(std::move(options)), shared_(std::make_unique<Shared>()) {
  std::error_code ec;
  if (!options_.open_existing) {
    std::filesystem::remove_all(options_.dir, ec);
  }
  std::filesystem::create_directories(options_.dir, ec);
  if (ec) {
    throw Error(
        fmt::format("rocksdb state backend: cannot create the instance directory {} (under "
                    "pipeline.rocksdb.localdir): {}",
                    options_.dir, ec.message()));
  }
  // Keyed state is user data: only the owner may read the instance (its SST files follow the
  // umask, 0644 under the usual 022; a 0700 directory keeps them from other users), as
  // checkpoint state files are 0600.
  std::filesystem::permissions(options_.dir, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace, ec);
  // The directory goes again when opening the instance below fails (a full localdir): a throwing
  // constructor runs no destructor, and the directory would stay until the next job's start-up.
  struct RemoveOnFailure {
    explicit RemoveOnFailure(const std::string& d) : dir(d) {}
    const std::string& dir;
    bool armed = true;
    RemoveOnFailure(const RemoveOnFailure&) = delete;
    RemoveOnFailure& operator=(const RemoveOnFailure&) = delete;
    ~RemoveOnFailure() {
      if (armed) {
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
      }
    }
  } remove_on_failure{options_.dir};
  // Lets a later process remove this directory should this one die before Close does.
  WriteRocksDbInstanceMarker(options_.dir);
  const auto budget = static_cast<size_t>(options_.memory_bytes);
  // Flink's bounded-memory set-up: one cache for blocks, index and filter blocks and (through
  // the write buffer manager, which charges its memtables to the cache) the write buffers.
  shared_->cache = rocksdb::NewLRUCache(budget, -1, false, 0.1);
  shared_->write_buffers = std::make_shared<rocksdb::WriteBufferManager>(
      static_cast<size_t>(static_cast<double>(budget) * options_.write_buffer_ratio),
      shared_->cache);
  rocksdb::Options db_options;
  db_options.create_if_missing = true;
  db_options.write_buffer_manager = shared_->write_buffers;
  db_options.max_open_files = -1;
  // Table files are opened on the calling thread: RocksDB's default opens them on up to 16 new
  // threads per open, and under an address-space limit (the daemon's --memory-limit) a thread it
  // cannot start ends the whole process (std::terminate inside RocksDB), not just the job.
  db_options.max_file_opening_threads = 1;
  db_options.info_log_level = rocksdb::InfoLogLevel::HEADER_LEVEL;
  db_options.keep_log_file_num = 1;
  // Closing does not flush the memtables: the directory is removed after (a checkpoint flushes
  // what it needs itself).
  db_options.avoid_flush_during_shutdown = true;
  // Vector memtables (append_only_column_families) take no concurrent inserts; the store has one
  // writer, so nothing is lost for the other column families.
  if (!options_.append_only_column_families.empty()) {
    db_options.allow_concurrent_memtable_write = false;
  }
  rocksdb::DB* db = nullptr;
  if (options_.open_existing) {
    OpenExisting(db_options);
  } else {
    Check(rocksdb::DB::Open(db_options, options_.dir, &db), options_.dir, "open");
    db_.reset(db);
  }
  batch_ = std::make_unique<rocksdb::WriteBatch>();
  remove_on_failure.armed = false;
}

void RocksDbKeyedStore::OpenExisting(const rocksdb::Options& db_options) {
  // A restored native checkpoint: every column family it has, opened with the options
  // ColumnFamily gives new ones; each counted so num_puts says whether it holds keys.
  std::vector<std::string> names;
  Check(rocksdb::DB::ListColumnFamilies(db_options, options_.dir, &names), options_.dir,
        "list column families");
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  descriptors.reserve(names.size());
  for (const std::string& name : names) {
    descriptors.emplace_back(name, CfOptions(name));
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  Check(rocksdb::DB::Open(db_options, options_.dir, descriptors, &handles, &db), options_.dir,
        "open");
  db_.reset(db);
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == rocksdb::kDefaultColumnFamilyName) {
      (void)db_->DestroyColumnFamilyHandle(handles[i]);
      continue;
    }
    handles_.push_back(handles[i]);
    names_.push_back(names[i]);
    append_only_.push_back(IsAppendOnly(names[i]));
    unflushed_.push_back(false);
    int64_t n = 0;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles[i]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ++n;
    }
    Check(it->status(), options_.dir, "iterate");
    puts_.push_back(n);
  }
}

RocksDbKeyedStore::~RocksDbKeyedStore() {
  for (rocksdb::ColumnFamilyHandle* h : handles_) {
    (void)db_->DestroyColumnFamilyHandle(h);
  }
  handles_.clear();
  if (db_) {
    (void)db_->Close();
    db_.reset();
  }
  std::error_code ec;
  std::filesystem::remove_all(options_.dir, ec);  // best effort: a leftover dir is only disk
}

int RocksDbKeyedStore::ColumnFamily(const std::string& name) {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) {
      return static_cast<int>(i);
    }
  }
  rocksdb::ColumnFamilyHandle* handle = nullptr;
  Check(db_->CreateColumnFamily(CfOptions(name), name, &handle), options_.dir,
        "create column family");
  handles_.push_back(handle);
  names_.push_back(name);
  puts_.push_back(0);
  append_only_.push_back(IsAppendOnly(name));
  unflushed_.push_back(false);
  return static_cast<int>(handles_.size() - 1);
}

bool RocksDbKeyedStore::IsAppendOnly(const std::string& name) const {
  const auto& names = options_.append_only_column_families;
  return std::find(names.begin(), names.end(), name) != names.end();
}

void RocksDbKeyedStore::FlushBeforeRead(int cf) const {
  const auto i = static_cast<size_t>(cf);
  if (!unflushed_[i]) {
    return;
  }
  rocksdb::FlushOptions flush;
  flush.wait = true;
  flush.allow_write_stall = true;
  Check(db_->Flush(flush, handles_[i]), options_.dir, "flush");
  unflushed_[i] = false;
}

rocksdb::ColumnFamilyOptions RocksDbKeyedStore::CfOptions(const std::string& name) const {
  rocksdb::ColumnFamilyOptions cf_options;
  for (const auto& [cf_name, merge] : options_.merge_operators) {
    if (cf_name == name) {
      cf_options.merge_operator = merge;
    }
  }
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = shared_->cache;
  table.cache_index_and_filter_blocks = true;
  table.pin_l0_filter_and_index_blocks_in_cache = true;
  // Point lookups of keys that are not there (a key's first record of a window) stop at the
  // filter. A column family read by passes (`scanned_column_families`) has none: building one
  // over every key of each flush and compaction cost ~10% of the spilled tumbling job's CPU, and
  // its rare point reads (a late record firing at once) find the key anyway.
  const bool scanned =
      std::find(options_.scanned_column_families.begin(), options_.scanned_column_families.end(),
                name) != options_.scanned_column_families.end();
  if (!scanned) {
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  }
  // Partitioned index and filter blocks (Flink's `memory.partitioned-index-filters`): 3e7 keys
  // have ~40 MB of filters, more than a small budget's cache, and a monolithic filter block
  // would be read from disk again for each lookup; partitions are cached by what is read.
  table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
  table.partition_filters = true;
  table.metadata_block_size = 4096;
  table.cache_index_and_filter_blocks_with_high_priority = true;
  table.pin_top_level_index_and_filter = true;
  cf_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  if (IsAppendOnly(name)) {
    // Appends; the flush thread sorts (see Options::append_only_column_families).
    cf_options.memtable_factory = NewAppendOnlyMemTableFactory();
  }
  // A bloom filter over each memtable's keys: most reads are of keys not written lately, and
  // without it each pays a skip-list search per memtable before reaching the files.
  if (!scanned) {
    cf_options.memtable_prefix_bloom_size_ratio = 0.1;
    cf_options.memtable_whole_key_filtering = true;
  } else {
    // Written as merge operands spread over the whole key space, so every level-0 file overlaps
    // all of level 1 and each compaction rewrites level 1 whole: compacting at 24 files rather
    // than 4 rewrites it a sixth as often (the spilled tumbling job: 12 files took ~10% less
    // CPU than 4, 24 another ~10%). A pass merges the 24 files' iterators instead of 4. The
    // slowdown and stop stay 16 and 32 files above it, as RocksDB's defaults (20 and 36 for 4)
    // are; the files on disk stay bounded by them.
    constexpr int kLevel0Files = 24;
    cf_options.level0_file_num_compaction_trigger = kLevel0Files;
    cf_options.level0_slowdown_writes_trigger = kLevel0Files + 16;
    cf_options.level0_stop_writes_trigger = kLevel0Files + 32;
  }
  // Values are a few dozen bytes of accumulators, read back one block per key: decompressing
  // a block per read costs more CPU than the disk it saves.
  cf_options.compression = rocksdb::kNoCompression;
  // At most kMaxWriteBufferBytes a memtable (RocksDB's and Flink's default write buffer size):
  // a memtable's bloom filter (a tenth of its size) and first arena block are allocated and
  // touched when it is made, so a memtable sized from a large budget made RSS grow with
  // memory.fixed-per-slot however small the state (tester-repro 02). The WriteBufferManager
  // still bounds all memtables together by the budget.
  cf_options.write_buffer_size =
      std::clamp<size_t>(static_cast<size_t>(static_cast<double>(options_.memory_bytes) *
                                             options_.write_buffer_ratio / 2),
                         size_t{1} << 20, kMaxWriteBufferBytes);
  if (IsAppendOnly(name)) {
    // Written alone between window ends: one memtable may take all of the write buffers (the
    // manager flushes it at 7/8 of them), so a window end merges half as many level-0 files.
    cf_options.write_buffer_size =
        std::clamp<size_t>(static_cast<size_t>(static_cast<double>(options_.memory_bytes) *
                                               options_.write_buffer_ratio),
                           size_t{1} << 20, kMaxWriteBufferBytes);
  }
  return cf_options;
}

std::string RocksDbKeyedStore::PrefixedKey(int key_group, std::string_view key) {
  key_scratch_.clear();
  key_scratch_.push_back(static_cast<char>((key_group >> 8) & 0xff));
  key_scratch_.push_back(static_cast<char>(key_group & 0xff));
  key_scratch_.append(key);
  return key_scratch_;
}

void RocksDbKeyedStore::StagePut(int cf, int key_group, std::string_view key,
                                 std::string_view value) {
  const std::string k = PrefixedKey(key_group, key);
  Check(
      batch_->Put(handles_[static_cast<size_t>(cf)], k, rocksdb::Slice(value.data(), value.size())),
      options_.dir, "put");
  ++puts_[static_cast<size_t>(cf)];
  MarkWritten(cf);
}

void RocksDbKeyedStore::StageMerge(int cf, int key_group, std::string_view key,
                                   std::string_view value) {
  const std::string k = PrefixedKey(key_group, key);
  Check(batch_->Merge(handles_[static_cast<size_t>(cf)], k,
                      rocksdb::Slice(value.data(), value.size())),
        options_.dir, "merge");
  ++puts_[static_cast<size_t>(cf)];
  MarkWritten(cf);
}

void RocksDbKeyedStore::Commit() {
  if (batch_->Count() == 0) {
    return;
  }
  rocksdb::WriteOptions w;
  w.disableWAL = true;
  Check(db_->Write(w, batch_.get()), options_.dir, "write");
  batch_->Clear();
}

bool RocksDbKeyedStore::Get(int cf, int key_group, std::string_view key, std::string* value) {
  FlushBeforeRead(cf);
  const std::string k = PrefixedKey(key_group, key);
  const rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), handles_[static_cast<size_t>(cf)], k, value);
  if (s.IsNotFound()) {
    return false;
  }
  Check(s, options_.dir, "get");
  return true;
}

void RocksDbKeyedStore::Delete(int cf, int key_group, std::string_view key) {
  const std::string k = PrefixedKey(key_group, key);
  rocksdb::WriteOptions w;
  w.disableWAL = true;
  Check(db_->Delete(w, handles_[static_cast<size_t>(cf)], k), options_.dir, "delete");
  MarkWritten(cf);
}

void RocksDbKeyedStore::StageDelete(int cf, int key_group, std::string_view key) {
  const std::string k = PrefixedKey(key_group, key);
  Check(batch_->Delete(handles_[static_cast<size_t>(cf)], k), options_.dir, "delete");
  MarkWritten(cf);
}

void RocksDbKeyedStore::MultiGet(int cf, const std::vector<std::string>& prefixed_keys,
                                 const std::function<void(size_t, std::string_view)>& found) {
  const size_t n = prefixed_keys.size();
  if (n == 0) {
    return;
  }
  FlushBeforeRead(cf);
  std::vector<rocksdb::Slice> keys(prefixed_keys.begin(), prefixed_keys.end());
  std::vector<rocksdb::PinnableSlice> values(n);
  std::vector<rocksdb::Status> statuses(n);
  // Batches of reads cover many blocks read from files once each (a window end reads its keys):
  // their checksums are not verified per read (the files are local, written by this process).
  rocksdb::ReadOptions read;
  read.verify_checksums = false;
  db_->MultiGet(read, handles_[static_cast<size_t>(cf)], n, keys.data(), values.data(),
                statuses.data());
  for (size_t i = 0; i < n; ++i) {
    if (statuses[i].IsNotFound()) {
      continue;
    }
    Check(statuses[i], options_.dir, "multi-get");
    found(i, std::string_view(values[i].data(), values[i].size()));
  }
}

void RocksDbKeyedStore::ReadSorted(int cf, const std::vector<std::string>& sorted_prefixed_keys,
                                   const std::function<void(size_t, std::string_view)>& found) {
  const size_t n = sorted_prefixed_keys.size();
  if (n == 0) {
    return;
  }
  FlushBeforeRead(cf);
  // Past the last key: the smallest key after it is itself followed by a zero byte.
  const std::string upper = sorted_prefixed_keys.back() + '\0';
  const rocksdb::Slice upper_bound(upper);
  rocksdb::ReadOptions read;
  read.verify_checksums = false;  // as MultiGet: local files written by this process
  read.fill_cache = false;
  read.iterate_upper_bound = &upper_bound;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, handles_[static_cast<size_t>(cf)]));
  it->Seek(sorted_prefixed_keys[0]);
  // A key a few entries on is stepped to; one further away is sought (a seek costs a few steps).
  constexpr int kStepsBeforeSeek = 8;
  for (size_t i = 0; i < n && it->Valid(); ++i) {
    const rocksdb::Slice target(sorted_prefixed_keys[i]);
    for (int steps = 0; it->Valid() && it->key().compare(target) < 0; ++steps) {
      if (steps == kStepsBeforeSeek) {
        it->Seek(target);
        break;
      }
      it->Next();
    }
    if (it->Valid() && it->key() == target) {
      const rocksdb::Slice v = it->value();
      found(i, std::string_view(v.data(), v.size()));
    }
  }
  Check(it->status(), options_.dir, "iterate");
}

void RocksDbKeyedStore::ForEach(
    int cf, const std::function<void(int, std::string_view, std::string_view)>& fn) const {
  FlushBeforeRead(cf);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), handles_[static_cast<size_t>(cf)]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const rocksdb::Slice k = it->key();
    const rocksdb::Slice v = it->value();
    if (k.size() < 2) {
      continue;
    }
    const int group = (static_cast<unsigned char>(k[0]) << 8) | static_cast<unsigned char>(k[1]);
    fn(group, std::string_view(k.data() + 2, k.size() - 2), std::string_view(v.data(), v.size()));
  }
  Check(it->status(), options_.dir, "iterate");
}

void RocksDbKeyedStore::Clear(int cf) {
  // Every key starts with a 2-byte key group below 2^15: [00 00, 80 00) covers them all.
  const std::string begin(2, '\0');
  const std::string end = std::string(1, static_cast<char>(0x80)) + std::string(1, '\0');
  rocksdb::WriteOptions w;
  w.disableWAL = true;
  Check(db_->DeleteRange(w, handles_[static_cast<size_t>(cf)], begin, end), options_.dir,
        "delete range");
  puts_[static_cast<size_t>(cf)] = 0;
}

// ---- Sizing for an operator's instance and its cache of hot keys (keyed process operator) ----

RocksDbKeyedStore::Options RocksDbKeyedStore::OperatorOptions(const RocksDbSpec& spec,
                                                              const std::string& operator_name,
                                                              int subtask_index) {
  Options options;
  options.dir = InstanceDir(spec, operator_name, subtask_index);
  // Half the budget for RocksDB's cache and write buffers, half for the keys cached in memory.
  const int64_t half = spec.memory_fixed_per_slot / 2;
  options.memory_bytes = half > (int64_t{1} << 19) ? half : int64_t{1} << 19;
  options.write_buffer_ratio = spec.write_buffer_ratio;
  return options;
}

size_t RocksDbKeyedStore::CachedKeys(const RocksDbSpec& spec, int64_t bytes_per_key) {
  const int64_t keys = spec.memory_fixed_per_slot / 2 / (bytes_per_key > 0 ? bytes_per_key : 1);
  return keys > 1 ? static_cast<size_t>(keys) : 1;
}

}  // namespace tidemark

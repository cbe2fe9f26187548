#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/rocksdb_spec.h"

namespace rocksdb {
class DB;
struct ColumnFamilyOptions;
struct Options;
class ColumnFamilyHandle;
class MergeOperator;
class WriteBatch;
}  // namespace rocksdb

namespace tidemark {

/// One operator subtask's keyed state on local disk: a RocksDB instance in its own directory,
/// one column family per named state, every key prefixed by its 2-byte big-endian key group so
/// that a key-group range is a key range. The storage half of Flink's
/// `RocksDBKeyedStateBackend` (`pipeline.state-backend: rocksdb`).
///
/// Memory: one LRU block cache of `memory_bytes` per instance, which also carries the
/// memtables through a `WriteBufferManager` (at most `write_buffer_ratio` of it), as Flink's
/// `state.backend.rocksdb.memory.fixed-per-slot` bounds a slot's instances. No WAL: the state is
/// rebuilt from checkpoints after a failure, as in Flink.
///
/// Lifetime: the constructor creates a fresh database in `dir` (whatever was there is removed),
/// or with `open_existing` opens the one there (counting each column family's entries); the
/// destructor closes it and removes `dir`. Ownership: owns the database and its handles.
/// Threading: the owning operator's mailbox thread only. Errors: a RocksDB failure (disk full, a
/// directory that cannot be created) throws `tidemark::Error` naming the directory.
class RocksDbKeyedStore {
 public:
  struct Options {
    std::string dir;  ///< the instance's directory; created, and removed on close
    int64_t memory_bytes = int64_t{64} << 20;
    double write_buffer_ratio = 0.5;
    /// Opens the database already in `dir` (with its column families) instead of creating a
    /// fresh one: a restore from a native checkpoint (rocksdb_native_checkpoint.h) put its
    /// files there.
    bool open_existing = false;
    /// Merge operators by column family name: a column family named here is created and opened
    /// with it (RocksDB needs it at every open, a restore's too, to read its merge operands).
    /// Shared with RocksDB's threads (flushes and compactions merge operands): thread-safe.
    std::vector<std::pair<std::string, std::shared_ptr<rocksdb::MergeOperator>>> merge_operators;
    /// Column families read by `ReadSorted` passes and rarely by point reads (the window
    /// operator's merge operands): no bloom filters, in files or memtables (a pass uses neither,
    /// and each flush and compaction built one over every key), and level 0 compacted at 24
    /// files instead of 4 (merge operands of keys spread over the key space: each compaction
    /// rewrites level 1 whole).
    std::vector<std::string> scanned_column_families;
    /// Column families written in long runs without reads between (the window operator's merge
    /// operands, read back only at window ends): their memtables are append-only vectors
    /// (`NewAppendOnlyMemTableFactory`, rocksdb_append_memtable.h: an insert appends, the flush
    /// thread sorts by each key's first 8 bytes) instead of skip lists, and every read of one
    /// (`Get`, `MultiGet`, `ReadSorted`, `ForEach`) first flushes what was written since the
    /// last read, so no read sorts an unsorted memtable. A point read after each write pays a
    /// flush each: for column families read in passes only. Needs one writer at a time (the
    /// store's rule anyway: concurrent memtable writes are off).
    std::vector<std::string> append_only_column_families;
  };

  explicit RocksDbKeyedStore(Options options);
  ~RocksDbKeyedStore();
  RocksDbKeyedStore(const RocksDbKeyedStore&) = delete;
  RocksDbKeyedStore& operator=(const RocksDbKeyedStore&) = delete;

  /// The column family of state `name`, created at its first use. The returned index is valid
  /// for the store's lifetime.
  int ColumnFamily(const std::string& name);
  /// Whether column family `name` exists (created by `ColumnFamily`, or restored with
  /// `open_existing`), without creating it.
  bool HasColumnFamily(const std::string& name) const {
    for (const std::string& n : names_) {
      if (n == name) {
        return true;
      }
    }
    return false;
  }

  /// Stages a put of (`key_group`, `key`) -> `value` in the pending write batch; `Commit`
  /// writes it. Reads do not see staged writes.
  void StagePut(int cf, int key_group, std::string_view key, std::string_view value);
  /// Stages a merge operand for (`key_group`, `key`) (RocksDB's `Merge`: the column family's merge
  /// operator, from `Options::merge_operators`, combines it with what is there when read or
  /// compacted). Same rules as `StagePut`.
  void StageMerge(int cf, int key_group, std::string_view key, std::string_view value);
  /// Writes the staged batch (no-op when empty).
  void Commit();
  /// The value of (`key_group`, `key`) into `*value`; false when absent.
  bool Get(int cf, int key_group, std::string_view key, std::string* value);
  void Delete(int cf, int key_group, std::string_view key);
  /// Stages a delete of (`key_group`, `key`) in the pending write batch (see `StagePut`): a
  /// tombstone whether or not the key is there.
  void StageDelete(int cf, int key_group, std::string_view key);
  /// Batched point reads (RocksDB's `MultiGet`, one pass over the files for the whole batch):
  /// calls `found(i, value)` for each `prefixed_keys[i]` present in `cf`, in index order. Each
  /// key is already prefixed by its key group (`AppendKeyGroup`). `value` is valid during the
  /// call only. Reads do not see staged writes. Cost: about one block-cache probe per key.
  void MultiGet(int cf, const std::vector<std::string>& prefixed_keys,
                const std::function<void(size_t, std::string_view)>& found);
  /// Reads of keys given in ascending byte order (each prefixed as for `MultiGet`) with one
  /// iterator over their range: calls `found(i, value)` for each `sorted_prefixed_keys[i]`
  /// present in `cf`, in index order (merge operands applied, as a read does). For many keys
  /// dense in the column family (a window end's keys) it costs about one step of the iterator
  /// per key and one read of each data block, where `MultiGet` searches the index and filter per
  /// key; keys far apart are sought. Reads do not see staged writes; the blocks read are not
  /// added to the cache (a scan of more than it holds would only evict what is hot).
  void ReadSorted(int cf, const std::vector<std::string>& sorted_prefixed_keys,
                  const std::function<void(size_t, std::string_view)>& found);
  /// Appends the 2-byte big-endian key-group prefix every stored key starts with.
  static void AppendKeyGroup(int key_group, std::string* out) {
    out->push_back(static_cast<char>((key_group >> 8) & 0xff));
    out->push_back(static_cast<char>(key_group & 0xff));
  }
  /// Calls `fn(key_group, key, value)` for every entry of `cf`, in key-group order.
  void ForEach(int cf,
               const std::function<void(int, std::string_view, std::string_view)>& fn) const;
  /// Removes every entry of `cf` (a range delete over all key groups).
  void Clear(int cf);
  /// Entries written and not deleted since the last `Clear` (puts of a key already present
  /// count again: an upper bound). 0 means the column family is empty.
  int64_t num_puts(int cf) const { return puts_[static_cast<size_t>(cf)]; }

  const std::string& dir() const { return options_.dir; }
  /// The database, for native checkpoints (rocksdb_native_checkpoint.h). Owned by the store;
  /// valid for its lifetime. Same thread rule as the store.
  rocksdb::DB* db() const { return db_.get(); }
  /// The RocksDB handle of column family `cf` (owned by the store; same rules as `db()`).
  rocksdb::ColumnFamilyHandle* handle(int cf) const { return handles_[static_cast<size_t>(cf)]; }

  /// The directory for one subtask's instance: `<localdir or temp>/tidemark-rocksdb-<pid>-
  /// <operator>-<subtask>-<n>` (n: a process-wide counter, so restarts and tests never share).
  static std::string InstanceDir(const RocksDbSpec& spec, const std::string& operator_name,
                                 int subtask_index);

  // ---- Sizing for an operator's instance and its cache of hot keys (keyed process operator;
  // added beside the functions above, which they do not change) ----

  /// Options of one operator subtask's instance: its directory (`InstanceDir`) and half of
  /// `spec.memory_fixed_per_slot` (at least 512 KiB) for RocksDB's block cache and write buffers.
  static Options OperatorOptions(const RocksDbSpec& spec, const std::string& operator_name,
                                 int subtask_index);
  /// How many keys an operator's in-memory cache of hot keys may hold: the other half of
  /// `spec.memory_fixed_per_slot` over `bytes_per_key` (a key's estimated in-memory bytes), at
  /// least 1.
  static size_t CachedKeys(const RocksDbSpec& spec, int64_t bytes_per_key);

 private:
  std::string PrefixedKey(int key_group, std::string_view key);
  rocksdb::ColumnFamilyOptions CfOptions(const std::string& name) const;
  bool IsAppendOnly(const std::string& name) const;
  // An append-only column family (`Options::append_only_column_families`) written since its last
  // flush is flushed (waiting for it) before a read; other column families are left alone.
  void FlushBeforeRead(int cf) const;
  void MarkWritten(int cf) {
    if (append_only_[static_cast<size_t>(cf)]) {
      unflushed_[static_cast<size_t>(cf)] = true;
    }
  }
  void OpenExisting(const rocksdb::Options& db_options);

  Options options_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // owned: destroyed before db_
  std::vector<std::string> names_;
  std::vector<int64_t> puts_;
  std::vector<bool> append_only_;        // by column family
  mutable std::vector<bool> unflushed_;  // append-only and written since its last flush
  std::unique_ptr<rocksdb::WriteBatch> batch_;
  std::string key_scratch_;
  struct Shared;  // the block cache and write buffer manager
  std::unique_ptr<Shared> shared_;
};

}  // namespace tidemark

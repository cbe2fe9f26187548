#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/state/key_groups.h"
#include "runtime/state/rocksdb_keyed_store.h"
#include "runtime/state/shared_state_file.h"
#include "runtime/state/state_serializer.h"

namespace tidemark {

/// Native, incremental checkpoints of one `RocksDbKeyedStore` (`checkpointing.incremental: true`
/// with `pipeline.state-backend: rocksdb`). Mirrors Flink's `RocksIncrementalSnapshotStrategy`
/// (snapshot) and `RocksDBIncrementalRestoreOperation` (restore); the checkpoint storage's
/// reference counting is its `SharedStateRegistry`.
///
/// A snapshot takes a RocksDB checkpoint (its Checkpoint API: memtables flushed, SST files hard
/// linked into a local directory beside the instance), then copies each SST file this instance
/// has not uploaded yet into `<checkpoint root>/shared/` (a hard link when on the same file
/// system, else a copy; fsynced, written under a temporary name and renamed) and references the
/// ones it uploaded before by name. The small files (MANIFEST, CURRENT, OPTIONS) go inline into
/// the handle, which the operator writes into its state file, so they are checksummed with it.
///
/// Shared file names are `<instance>-g<generation>-<sst file name>`: the instance is a random id
/// per store (a restored store keeps the restored files' names and uses a new id for new ones),
/// the generation grows at `ForgetUploads`. Within one generation a live SST file always has
/// the same name, and every native checkpoint references every live SST file; so a file that a
/// retained checkpoint does not reference is not live in any later checkpoint either, and
/// deleting it (CheckpointStorage's retention) never breaks a checkpoint still being taken.
///
/// Handle bytes (section "rocksdb-native", version 1): the key-group range (`U32` first,
/// `U32` last), `U32` SST count and per SST its local file name, shared path, `I64` size and
/// `I64` XXH3-64, then `U32` count of inline files and per file its name and bytes.
///
/// Ownership: borrows the store, which must outlive this object. Threading: the store's
/// (the owning operator's mailbox thread). Errors: I/O and RocksDB failures throw `Error` naming
/// the path; a handle that cannot be read throws `StateCorrupt`.
class RocksDbNativeCheckpoint {
 public:
  explicit RocksDbNativeCheckpoint(RocksDbKeyedStore& store);

  /// Checkpoints the store natively for checkpoint `checkpoint_id`: flushes its memtables, uploads
  /// new SST files under `target.root / "shared"`, writes the handle into `w` and appends every
  /// referenced SST file to `target.referenced`. `key_groups`: the range the store holds,
  /// checked at restore. The caller has written everything into the store first (a cache of
  /// dirty keys flushed, `RocksDbKeyedStore::Commit` called). Returns the bytes newly uploaded.
  uint64_t Snapshot(int64_t checkpoint_id, KeyGroupRange key_groups,
                    IncrementalSnapshotTarget& target, StateWriter& w);

  /// Forgets what was uploaded: the next snapshot uploads every SST file again under new names.
  /// Call when a checkpoint that does not reference the shared files (a canonical one) was
  /// taken, since it may subsume the checkpoints that did and so delete their files.
  void ForgetUploads();

  /// Rebuilds a store from a handle written by `Snapshot`: links (or copies) its SST files from
  /// `root / <shared path>` and writes its inline files into `options.dir` (emptied first), then
  /// opens the database there. `key_groups` is the range the restoring subtask owns; a handle of
  /// another range (the job is restored at another parallelism) throws `Error` telling the user
  /// to restore from a savepoint, which is redistributable. A missing shared file or one of
  /// another size throws `Error` naming it.
  struct Restored {
    std::unique_ptr<RocksDbKeyedStore> store;
    std::unique_ptr<RocksDbNativeCheckpoint> checkpoint;  ///< knows the restored uploads
  };
  static Restored Restore(StateReader& r, const std::filesystem::path& root,
                          RocksDbKeyedStore::Options options, KeyGroupRange key_groups,
                          const std::string& operator_name);

 private:
  RocksDbKeyedStore& store_;
  std::string instance_;
  int64_t generation_ = 0;
  /// Local SST file name -> its shared file, for every SST file the last snapshot referenced.
  std::map<std::string, SharedStateFile> uploaded_;
};

}  // namespace tidemark

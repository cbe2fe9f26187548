// [rocks-incr] The window operator's native, incremental checkpoints on the RocksDB state backend
// (`checkpointing.incremental: true`; see runtime/state/rocksdb_native_checkpoint.h): the key
// cache is flushed into RocksDB, RocksDB is checkpointed natively and only its new SST files are
// uploaded. The heap part of the state (timers, per-window state) stays in the canonical section
// around the handle; the sliced keys' timers are rebuilt from RocksDB at restore.

#include <algorithm>
#include <xxhash.h>

#include "operators/window/sliced_store.h"
#include "operators/window/window_operator.h"
#include "operators/window/window_slices_merge_operator.h"
#include "runtime/core/non_recoverable_error.h"
#include "runtime/state/key_groups.h"

namespace tidemark {
bool WindowOperator::PrepareNativeSnapshot(const StateSnapshotContext& context) {
  // Firing counts (emit-firing with lateness) live on the heap per key and are only written
  // with the keys in the canonical format: a checkpoint holding any is canonical.
  const bool firings =
      (int_store_ && !int_store_->firings.empty()) || (key_store_ && !key_store_->firings.empty());
  if (context.incremental == nullptr || !rocks_ || !sliced_ || firings) {
    if (rocks_native_) {
      // This checkpoint references no shared file and may subsume those that did.
      rocks_native_->ForgetUploads();
    }
    return false;
  }
  // Per-window tables (the cache while RocksDB held no key) into the sliced store for good:
  // the checkpoint needs their state in RocksDB.
  if (tables_) {
    LeaveWindowTables();
  }
  // Every cached key into RocksDB, the cache emptied: a key read back later is written again
  // only when it changed, so the next checkpoint's new files hold the changes, not the cache.
  if (int_store_ && int_store_->keys.size() > 0) {
    SpillStore(*int_store_, 0);
  }
  if (key_store_ && key_store_->keys.size() > 0) {
    SpillStore(*key_store_, 0);
  }
  if (!rocks_native_) {
    rocks_native_ = std::make_unique<RocksDbNativeCheckpoint>(*rocks_);
  }
  return true;
}

void WindowOperator::WriteNativeSnapshot(StateSnapshotContext& context) {
  // The copies in RocksDB whose drop time is at or before this are dead (IsDeadCopy): the
  // restored operator must keep them dead, or their timers would fire again.
  context.writer.WriteI64(rocks_dead_through_);
  rocks_native_->Snapshot(context.checkpoint_id, OwnedKeyGroups(), *context.incremental,
                          context.writer);
}

void WindowOperator::RestoreNativeSnapshot(StateReader& r,
                                           const StateInitializationContext& context) {
  // Both are the same on every attempt: a restart cannot cure them (LocalJob::Create refuses
  // the first before the job starts; this catches a checkpoint without shared files).
  if (!rocks_) {
    throw NonRecoverableError(fmt::format(
        "operator \"{}\": its state is an incremental RocksDB checkpoint, which restores only "
        "with pipeline.state-backend: rocksdb on the sliced window path; to change the state "
        "backend, restore from a savepoint (canonical, backend-independent)",
        context_.name));
  }
  if (context.restored_directory.empty()) {
    throw NonRecoverableError(fmt::format(
        "operator \"{}\": an incremental RocksDB checkpoint needs its checkpoint directory",
        context_.name));
  }
  rocks_dead_through_ = r.ReadI64();
  const RocksDbSpec& spec = this->context().rocksdb;
  RocksDbKeyedStore::Options options;
  options.dir = RocksDbKeyedStore::InstanceDir(spec, context_.name, this->context().subtask_index);
  options.memory_bytes = std::max<int64_t>(spec.memory_fixed_per_slot / 2, int64_t{1} << 19);
  options.write_buffer_ratio = spec.write_buffer_ratio;
  AddRocksWindowOptions(options);  // as OpenRocksDb
  rocks_native_.reset();
  rocks_.reset();
  RocksDbNativeCheckpoint::Restored restored = RocksDbNativeCheckpoint::Restore(
      r, context.restored_directory.parent_path(), options, OwnedKeyGroups(), context_.name);
  rocks_ = std::move(restored.store);
  rocks_native_ = std::move(restored.checkpoint);
  // A checkpoint in the general layout (one written before the compact layout existed, or of
  // aggregates with strings) goes on in it; else the compact one where the words allow it.
  const bool general_held = rocks_->HasColumnFamily(kSlicesColumnFamily) &&
                            rocks_->num_puts(rocks_->ColumnFamily(kSlicesColumnFamily)) > 0;
  rocks_compact_ = !slice_aggs_.has_strings() && !general_held;
  rocks_cf_ =
      rocks_->ColumnFamily(rocks_compact_ ? kCompactSlicesColumnFamily : kSlicesColumnFamily);
  rocks_written_.Clear();
  rocks_whole_int_.clear();
  rocks_whole_ref_.clear();
  // The heap timers of the live keys in RocksDB, from each key's value (EncodeSlicedKey's
  // layouts: the drop time and the timer time).
  rocks_->ForEach(rocks_cf_, [&](int group, std::string_view key_bytes, std::string_view value) {
    if (IsDeadCopy(value)) {
      if (rocks_merge_) {
        // A merge operand written later must not find it (its slices are gone).
        rocks_->StageDelete(rocks_cf_, group, key_bytes);
      }
      return;
    }
    Timestamp drop = kMinTimestamp;
    Timestamp timer = kMinTimestamp;
    if (rocks_compact_) {
      CompactSlicesReader v(value, slice_words_);
      Timestamp last = kMinTimestamp;
      while (v.Skip(&last)) {
      }
      drop = SliceDropTime(last);
      timer = v.timer();
    } else {
      StateReader v(value);
      drop = v.ReadI64();
      const uint32_t n = v.ReadU32();
      for (uint32_t i = 0; i < n; ++i) {
        (void)v.ReadI64();
      }
      (void)v.ReadI64();  // next firing
      timer = v.ReadI64();
    }
    // Every live copy may be read back (RocksDbMayHold).
    rocks_written_.Add(drop, XXH3_64bits(key_bytes.data(), key_bytes.size()));
    if (timer == kMinTimestamp) {
      return;
    }
    const Key key = DecodeCanonicalKey(key_bytes);
    if (int_store_) {
      const int64_t* k = key.size() == 1 ? std::get_if<int64_t>(&key[0]) : nullptr;
      if (k == nullptr) {
        throw StateCorrupt("rocksdb window state: a non-int64 key in the int64 key store");
      }
      int_store_->timers.Add(timer, *k);
    } else if (key_store_) {
      key_store_->timers.Add(timer, key_store_->keys.arena().Make(key));
    } else {
      throw StateCorrupt("rocksdb window state: keys in RocksDB without a sliced store");
    }
  });
  rocks_->Commit();
}

}  // namespace tidemark

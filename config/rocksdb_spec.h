#pragma once

#include <cstdint>
#include <string>

namespace tidemark {

/// `pipeline.rocksdb:` block: Flink's `state.backend.rocksdb.*` options, same leaf names.
struct RocksDbSpec {
  /// `localdir` (Flink's `state.backend.rocksdb.localdir`): where each subtask's RocksDB
  /// instance lives. Empty: a directory under the system temp dir, removed when the job ends.
  std::string localdir;
  /// `memory.fixed-per-slot` (Flink's `state.backend.rocksdb.memory.fixed-per-slot`), bytes:
  /// each subtask's RocksDB instance gets a block cache of this size that also carries its
  /// write buffers (a `WriteBufferManager`); the operator's in-memory cache of hot keys is
  /// bounded by the same figure. Flink's default is managed memory; tidemark has no managed
  /// memory, so the default is a fixed 64 MiB.
  int64_t memory_fixed_per_slot = int64_t{64} << 20;
  /// `memory.managed` (Flink's `state.backend.rocksdb.memory.managed`, default true): RocksDB's
  /// memory comes from the slot's managed memory. tidemark has no TaskManager memory model
  /// (Flink's `taskmanager.memory.managed.size` / `.fraction`): a slot's managed memory is the
  /// 64 MiB default of `memory_fixed_per_slot`, which, when set, overrides it, as in Flink. With
  /// false and no fixed size Flink leaves RocksDB unbounded; tidemark still bounds each instance
  /// by `memory_fixed_per_slot` (docs/checkpoints.md). Kept for the export and the status.
  bool memory_managed = true;
  /// `memory.write-buffer-ratio` (Flink's `state.backend.rocksdb.memory.write-buffer-ratio`):
  /// the share of the budget the write buffers may take, in (0, 1).
  double write_buffer_ratio = 0.5;
};

}  // namespace tidemark

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
  /// `memory.write-buffer-ratio` (Flink's `state.backend.rocksdb.memory.write-buffer-ratio`):
  /// the share of the budget the write buffers may take, in (0, 1).
  double write_buffer_ratio = 0.5;
};

}  // namespace tidemark

#pragma once

#include <cstdint>

namespace tidemark {

/// What a checkpoint is for (Flink's `SnapshotType`): a periodic checkpoint, or a savepoint a
/// user asked for.
enum class SnapshotType { kCheckpoint, kSavepoint };

/// The marker that cuts a stream into "before checkpoint `id`" and "after" (Flink's
/// `CheckpointBarrier`). A source task emits it on every output between the records it snapshot
/// and the ones after; every other task forwards it once it arrived on all its input channels
/// (exactly-once: aligned) and its operators snapshot. `timestamp_ms` is the coordinator's
/// processing time at the trigger. Plain value type.
struct CheckpointBarrier {
  int64_t id = 0;  ///< > 0, increasing per job
  int64_t timestamp_ms = 0;
  SnapshotType type = SnapshotType::kCheckpoint;
  friend bool operator==(const CheckpointBarrier&, const CheckpointBarrier&) = default;
};

}  // namespace tidemark

#pragma once

#include <cstdint>

#include "config/job_spec.h"
#include "runtime/core/timestamp.h"

namespace tidemark {

/// What a rolling policy sees of the open (in-progress) part file. Mirrors Flink's `PartFileInfo`.
/// Times are processing time in ms; `size_bytes` counts every byte written to the file so far.
struct PartFileInfo {
  Timestamp creation_time_ms = 0;
  Timestamp last_update_time_ms = 0;
  int64_t size_bytes = 0;
};

/// When the exactly-once file sink closes its in-progress part file and starts the next one.
/// Mirrors Flink's `DefaultRollingPolicy` (row formats), with its defaults: roll before writing a
/// record once the file is larger than `part-size` (128 MiB), and on the bucket check timer once
/// the file is open `rollover-interval` (60 s) or unwritten `inactivity-interval` (60 s).
/// At a checkpoint, like Flink's DefaultRollingPolicy, only a file over `part-size` rolls — the
/// rest stays in progress and the checkpoint records its valid length; `roll-on-checkpoint: true`
/// is Flink's `OnCheckpointRollingPolicy` (what bulk formats must use): every checkpoint rolls.
/// Immutable value type; any thread.
class DefaultRollingPolicy {
 public:
  explicit DefaultRollingPolicy(const SinkSpec::RollingPolicySpec& spec) : spec_(spec) {}

  bool ShouldRollOnCheckpoint(const PartFileInfo& file) const {
    return spec_.roll_on_checkpoint || file.size_bytes > spec_.part_size_bytes;
  }
  /// Asked before a record is written to the open file (Flink's `shouldRollOnEvent`).
  bool ShouldRollOnEvent(const PartFileInfo& file) const {
    return file.size_bytes > spec_.part_size_bytes;
  }
  bool ShouldRollOnProcessingTime(const PartFileInfo& file, Timestamp now_ms) const {
    return now_ms - file.creation_time_ms >= spec_.rollover_interval_ms ||
           now_ms - file.last_update_time_ms >= spec_.inactivity_interval_ms;
  }
  /// Period of the processing-time check (Flink's `bucketCheckInterval`), ms.
  int64_t check_interval_ms() const { return spec_.check_interval_ms; }

 private:
  SinkSpec::RollingPolicySpec spec_;
};

}  // namespace tidemark

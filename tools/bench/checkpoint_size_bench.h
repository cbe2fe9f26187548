#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "tools/bench/bench_command.h"

namespace tidemark::bench {

/// The recipe of a generated replay recording for the checkpoint-size bench (issue 45): at
/// processing time 0 one record for each of `keys` keys (`key` 0 .. keys - 1, `ts` 1000), at
/// 1.5 × `interval_ms` one record for each of `changed` keys spread over the key range (key
/// i × (keys / changed)), and the input ends at 2.5 × `interval_ms`. Under `clock: virtual` with
/// `checkpointing.interval` = `interval_ms`, checkpoint 1 (at 1 × interval) holds every key and
/// checkpoint 2 (at 2 × interval) differs from it in `changed` keys only; a bounded job then
/// takes a final checkpoint 3 after its windows fired. One split `s`; schema `key` int64, `ts`
/// timestamp. Every byte is a pure function of the recipe.
struct CheckpointRecordingSpec {
  int64_t keys = 100000;
  int64_t changed = 100;
  int64_t interval_ms = 1000;

  bool operator==(const CheckpointRecordingSpec&) const = default;
};

/// `checkpoint-phases-k<keys>-c<changed>-i<interval_ms>.jsonl`.
std::string CheckpointRecordingName(const CheckpointRecordingSpec& spec);
/// The recipe the last path component of `path` spells, or nullopt when it is not one (another
/// name, keys < 1, changed < 1 or > keys, interval < 10 or odd: 1.5 × interval must be whole ms).
std::optional<CheckpointRecordingSpec> ParseCheckpointRecordingName(const std::string& path);
/// `dir`/CheckpointRecordingName(spec), written first (`WriteFileAtomically`, creating `dir`)
/// when it does not exist. Returns the path. Throws std::runtime_error (`dir` cannot be created)
/// or FileWriteError naming the path and the OS reason. About 55 bytes a key, built in memory.
std::string EnsureCheckpointRecording(const std::string& dir, const CheckpointRecordingSpec& spec);

/// One completed checkpoint of a measured run, as found on disk when the job's checkpoint
/// listener ran for it (right after it completed, before the next one was triggered).
struct CheckpointSizeFigures {
  int64_t id = 0;
  /// Bytes of the files new under the checkpoint directory since the previous checkpoint
  /// completed: its `chk-<id>/` files (state files, `_metadata`) and the shared files it
  /// uploaded. Shared files it references but an earlier checkpoint wrote are not counted.
  uint64_t written_bytes = 0;
  int64_t files_written = 0;
  /// Its full size: its `chk-<id>/` files plus every shared file it references (Flink's "full
  /// checkpoint data size"); equal to `written_bytes` for a canonical checkpoint.
  uint64_t state_bytes = 0;
  int64_t shared_files = 0;          ///< shared files it references, new or not
  uint64_t shared_reused_bytes = 0;  ///< bytes of those an earlier checkpoint wrote
  /// Trigger to completion on the steady clock (`CheckpointCoordinator::HistoryEntry`), ms.
  double duration_ms = 0;
};

/// What one run of the job gave.
struct CheckpointSizeRun {
  std::vector<CheckpointSizeFigures> checkpoints;  ///< completed checkpoints, by id
  int64_t sink_records = 0;
  uint64_t checksum = 0;
  double seconds = 0;
  std::string failure;  ///< non-empty: the job did not FINISH, or a checkpoint could not be read
};

/// Runs `spec` (which has `checkpointing:`) once in this process with `checkpointing.incremental`
/// set to `incremental`, its checkpoints written to a fresh temporary directory (removed after),
/// measuring every completed checkpoint on disk. `sink_id` names its `checksum` sink. Throws
/// JobCompileError for a job that does not compile.
CheckpointSizeRun RunCheckpointSizeJob(JobSpec spec, const std::string& sink_id, bool incremental);

/// `tidemark bench JOB --checkpoint-size` (issue 45): JOB reads a generated recording
/// (`CheckpointRecordingName`) under `clock: virtual` with `state-backend: rocksdb`; each measured
/// run runs it with full (canonical) and with incremental checkpoints, and the report gives per
/// checkpoint the bytes written, the full size and the duration (median over runs), and how much
/// of its full size the second incremental checkpoint wrote. Exit codes as `RunBench`.
int RunCheckpointSizeBench(const BenchOptions& o, JobSpec spec);

}  // namespace tidemark::bench

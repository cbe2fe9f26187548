#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/core/mutex.h"
#include "runtime/state/state_serializer.h"

namespace tidemark {

struct JobSpec;

/// One operator subtask's state in a checkpoint, as written to its file.
struct StateFileHandle {
  std::string operator_id;  ///< the operator's `id` in the job
  int subtask = 0;
  std::string file;                ///< name inside the checkpoint's directory
  uint64_t size = 0;               ///< body bytes
  uint64_t checksum = 0;           ///< XXH3-64 of the body
  std::vector<StateBlock> blocks;  ///< redistributable parts of the body (rescaling)
  /// Shared files (`shared/...`) the state references: an incremental RocksDB checkpoint's SST
  /// files (`IncrementalSnapshotTarget::referenced`). Empty for canonical state.
  std::vector<SharedStateFile> shared;
};

/// How an operator ran when a checkpoint was taken (`_metadata`'s "parallelism"): a restore at
/// another parallelism redistributes its state, and a changed max-parallelism is refused.
struct OperatorParallelism {
  int parallelism = 0;
  int max_parallelism = 0;
  friend bool operator==(const OperatorParallelism&, const OperatorParallelism&) = default;
};

/// A completed checkpoint read back for a restore: every operator subtask's state bytes.
struct CompletedCheckpoint {
  int64_t id = 0;
  int64_t timestamp_ms = 0;
  std::string job;
  std::filesystem::path directory;
  std::map<std::pair<std::string, int>, std::string> states;  ///< (operator id, subtask) -> bytes
  /// (operator id, subtask) -> the redistributable blocks of its state (`StateBlock`); absent in
  /// checkpoints written before rescaling existed, and for state without such blocks.
  std::map<std::pair<std::string, int>, std::vector<StateBlock>> blocks;
  /// Per operator id, its parallelism and max-parallelism at the checkpoint. Empty in
  /// checkpoints written before rescaling existed.
  std::map<std::string, OperatorParallelism> parallelism;
  /// The savepoint of a stop with drain (Flink's `stop --drain`): taken after the sources
  /// ended their input early, so every operator's watermark in it is the end of time while the
  /// splits keep their read positions (a resumed job reads on).
  bool drained = false;
  /// `_metadata`'s "operators": per operator id, what its state means by aspect ("key",
  /// "window", "aggregate"; runtime/graph/state_layout.h). Empty in checkpoints written before.
  std::map<std::string, std::map<std::string, std::string>> layouts;
  /// (operator id, subtask) -> the shared files its state references (incremental checkpoints),
  /// each verified (size and XXH3-64) when the checkpoint was read.
  std::map<std::pair<std::string, int>, std::vector<SharedStateFile>> shared;
  /// The state of `operator_id`'s subtask `subtask`, or null (stateless or not in the checkpoint).
  const std::string* Find(const std::string& operator_id, int subtask) const {
    auto it = states.find({operator_id, subtask});
    return it == states.end() ? nullptr : &it->second;
  }
};

/// Checkpoints of one job on the local file system. Mirrors Flink's `FsCheckpointStorage` layout:
/// `DIR/chk-<id>/` holds one file per stateful operator subtask and, written last, `_metadata`.
///
/// File format: a state file is the 8-byte magic `TMSTATE1`, the XXH3-64 of the body and the body
/// length (both u64 little-endian), then the body. `_metadata` is JSON (job, id, timestamp,
/// `drained` when set, and per state file its operator id, subtask, name, size,
/// checksum and its `StateBlock`s as "blocks", and per operator its "parallelism" and
/// "max-parallelism"); it is written to
/// `_metadata.inprogress`, fsync'ed and renamed, so a checkpoint either has a whole `_metadata`
/// or none. A checkpoint is *complete* iff its `_metadata` exists; `LoadLatest` verifies every
/// file against it and skips, with a log line, a checkpoint that is half-written or corrupt for
/// the previous one.
///
/// Incremental checkpoints (`checkpointing.incremental`, Flink's `SharedStateRegistry`): state
/// may reference shared files in `DIR/shared/` (listed in `_metadata` as "shared" beside the
/// state file, and verified like state files). They are written before the `_metadata` that
/// references them. When retention deletes a checkpoint, each shared file it referenced that no
/// retained checkpoint references is deleted too; a file that only a checkpoint that never
/// completed (aborted, or cut short by a crash) referenced is left behind.
///
/// Errors: `Error` for I/O failures while writing. Threading: `WriteState` may run on several
/// task threads at once (distinct files); `Finalize`/`Discard`/`LoadLatest` on one thread
/// (the coordinator's) at a time.
class CheckpointStorage {
 public:
  CheckpointStorage(std::filesystem::path dir, std::string job_name, int num_retained);

  /// Writes one operator subtask's state of checkpoint `id` (fsync'ed) and returns its handle.
  /// `blocks` (`StateWriter::blocks`) go to `_metadata` with the file.
  StateFileHandle WriteState(int64_t id, const std::string& operator_id, int subtask,
                             std::string_view bytes, std::vector<StateBlock> blocks = {},
                             std::vector<SharedStateFile> shared = {}) const;
  /// Writes `_metadata` of checkpoint `id` last, by rename, then deletes completed checkpoints
  /// beyond `num_retained` (oldest first) and leftovers of older unfinished ones.
  /// `drained`: see `CompletedCheckpoint::drained`.
  void Finalize(int64_t id, int64_t timestamp_ms, const std::vector<StateFileHandle>& states,
                bool drained = false);
  /// Removes what an aborted checkpoint `id` wrote.
  void Discard(int64_t id) const;
  /// The newest complete checkpoint that verifies; `skipped` (optional) gets one line per
  /// newer checkpoint skipped and why. nullopt: none. Verification streams every state file in
  /// 1 MiB chunks; `load_states` false keeps none of their bytes (`states` maps each key to an
  /// empty string), so memory stays bounded whatever the checkpoint's size (the daemon's
  /// recovery only picks the checkpoint; the worker loads it). Files are read as regular files
  /// only (a FIFO as `_metadata` is a skipped checkpoint, never a hang). Checkpoints with an id
  /// below `min_id` are not looked at: a run's restart passes the first id it assigned, so it
  /// never picks up what an earlier run left in the same directory (Flink keeps each job's
  /// checkpoints under its own job id).
  std::optional<CompletedCheckpoint> LoadLatest(std::vector<std::string>* skipped = nullptr,
                                                bool load_states = true, int64_t min_id = 0) const;
  /// Reads the checkpoint to restore job `job_name` from `dir`: a completed checkpoint or
  /// savepoint directory (one with `_metadata`), or a checkpoint root (its newest complete
  /// checkpoint that verifies). Throws `Error` naming `dir` and why: missing, not completed, or
  /// corrupt (a state file missing, truncated or failing its checksum). A checkpoint or savepoint
  /// directory of a job of another name restores, as in Flink (state is matched by operator id,
  /// which the job's restore checks); a checkpoint root holds only `job_name`'s checkpoints.
  /// `skipped`, when set, gets a root's log lines for the newer checkpoints passed over (as
  /// `LoadLatest`'s), so a caller can refuse to fall back past them.
  static CompletedCheckpoint Load(const std::filesystem::path& dir, const std::string& job_name,
                                  std::vector<std::string>* skipped = nullptr);
  /// Never write committed output twice (docs/checkpoints.md, "Recovery never writes committed
  /// output twice"): why restoring job `spec` from checkpoint `restored_id` of checkpoint root
  /// `root` (0: none there verifies, so the job would start without its checkpoints) after
  /// passing over the checkpoints in `skipped` (`Load`'s or `LoadLatest`'s lines) is unsafe, or
  /// nullopt when it is safe. Unsafe when a checkpoint newer than `restored_id` completed (its
  /// `_metadata` was written) and was passed over, and either none verifies or a sink commits at
  /// checkpoints (an exactly-once file or Kafka sink), whose output of the newer checkpoint may
  /// already be committed; restoring the older one would commit it again. A checkpoint named by
  /// its own directory passes nothing over: the user's choice, as in Flink. The reason names the
  /// checkpoints and why each was skipped, without the caller's context ("cannot restore from
  /// ROOT: ", "could not resume ...: ") or advice. Used by `tidemark run --from-checkpoint` and
  /// the daemon's recovery. Reads `root`'s listing; any thread.
  static std::optional<std::string> UnsafeFallBack(const JobSpec& spec,
                                                   const std::filesystem::path& root,
                                                   int64_t restored_id,
                                                   const std::vector<std::string>& skipped);
  /// Checkpoint `id` is a savepoint written to `dir` (Flink: `savepoint-<id>` under the target
  /// directory) instead of `chk-<id>`: `WriteState`, `Finalize` and `Discard` of `id` use it, and
  /// it takes no part in retention. Call before the trigger reaches any task. Any thread.
  void SetSavepointDirectory(int64_t id, std::filesystem::path dir);
  /// Whether a savepoint can be written under `dir` (it exists as a writable directory, or its
  /// nearest existing ancestor is one, so it can be created): nullopt if so, else the reason,
  /// "savepoint target directory '<dir>' cannot be used: <why>" (naming the offending path).
  /// Flink checks the target when it triggers; tidemark before the savepoint starts, so a bad
  /// target is the request's error and never a failed checkpoint. Any thread.
  static std::optional<std::string> CheckSavepointTarget(const std::filesystem::path& dir);
  /// The state layouts `Finalize` records in each `_metadata` (CompletedCheckpoint::layouts).
  /// Call before the first checkpoint.
  void SetOperatorLayouts(std::map<std::string, std::map<std::string, std::string>> layouts) {
    layouts_ = std::move(layouts);
  }
  /// Every operator's parallelism and max-parallelism, recorded in each `_metadata`
  /// (CompletedCheckpoint::parallelism). Call before the first checkpoint.
  void SetOperatorParallelism(std::map<std::string, OperatorParallelism> parallelism) {
    parallelism_ = std::move(parallelism);
  }
  /// `checkpointing.incremental`: whether checkpoints (not savepoints) may be incremental.
  /// Call before the first checkpoint.
  void SetIncremental(bool incremental) { incremental_ = incremental; }
  bool incremental() const { return incremental_; }
  /// Whether checkpoint `id` is a savepoint (`SetSavepointDirectory`). Any thread.
  bool IsSavepoint(int64_t id) const;
  /// Ids of checkpoints with a `_metadata`, ascending.
  std::vector<int64_t> CompletedIds() const;

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path CheckpointDir(int64_t id) const;

 private:
  std::filesystem::path dir_;
  std::string job_name_;
  int num_retained_;
  bool incremental_ = false;
  std::map<std::string, std::map<std::string, std::string>> layouts_;
  std::map<std::string, OperatorParallelism> parallelism_;
  mutable Mutex savepoints_mu_;
  mutable std::map<int64_t, std::filesystem::path> savepoint_dirs_ ABSL_GUARDED_BY(savepoints_mu_);
};

}  // namespace tidemark

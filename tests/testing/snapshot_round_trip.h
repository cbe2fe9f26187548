#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/core/stream_record.h"
#include "runtime/core/watermark.h"
#include "runtime/task/stream_operator.h"

namespace tidemark::testing {

/// One step of a scripted operator input: an element or a watermark on `input`, processing time
/// advancing to `time`, or the end of `input` (EndInput; after the last input's end, Finish).
struct ScriptStep {
  enum class Kind { kElement, kWatermark, kProcessingTime, kEndInput };
  Kind kind = Kind::kElement;
  StreamRecord record;
  Timestamp time = 0;
  int input = 0;
};

ScriptStep ElementStep(Row row, Timestamp timestamp, int input = 0);
ScriptStep WatermarkStep(Timestamp timestamp, int input = 0);
ScriptStep ProcessingTimeStep(Timestamp time);
ScriptStep EndInputStep(int input = 0);

/// What a scripted run produced: every main-output element (`CollectingOutput::Describe`), the
/// side outputs per tag, and the counters the test asks for, read at the end.
struct ScriptRun {
  std::vector<std::string> main;
  std::vector<std::string> side;  ///< "tag: record(...)" in tag order, then arrival order
  std::vector<int64_t> counters;
  /// What `SnapshotState` wrote at the cut (empty for the uninterrupted run).
  std::string snapshot;
};

using OperatorFactory = std::function<std::unique_ptr<StreamOperator>()>;
/// Reads the operator's own counters that matter for output (late records dropped, ...).
using OperatorCounters = std::function<std::vector<int64_t>(const StreamOperator&)>;

/// Runs `script` through one operator from `factory` (opened as subtask 0 of 1 named "op" on a
/// manual clock starting at 0). With `cut` >= 0 the run is interrupted before step `cut`: the
/// operator is snapshotted (checkpoint 1), closed and destroyed, a fresh one is opened on a fresh
/// clock at the same processing time, restored from the snapshot (`InitializeState`) and the
/// rest of the script continues on it; the output is the concatenation of both. The restored
/// operator's own snapshot, taken right after the restore, must equal the one it was restored
/// from (a restore that loses anything shows here before it shows in the output).
ScriptRun RunScript(const OperatorFactory& factory, const std::vector<ScriptStep>& script,
                    int cut = -1, const OperatorCounters& counters = nullptr);

/// The round-trip test of `StreamOperator` snapshots (Flink's operator snapshot/restore tests):
/// for every cut 0..script.size(), `RunScript` with the cut gives exactly the output, side
/// outputs and counters of the uninterrupted run. Reports failures through gtest, naming the
/// cut. Returns the uninterrupted run (so a test can also assert its real values).
ScriptRun ExpectSnapshotRoundTrips(const OperatorFactory& factory,
                                   const std::vector<ScriptStep>& script,
                                   const OperatorCounters& counters = nullptr);

/// What `op.SnapshotState` writes as checkpoint 1 of subtask 0.
std::string SnapshotOf(StreamOperator& op);
/// Restores `op` (opened, not yet initialized) from `bytes` as checkpoint 1, its watermarks
/// too (restore-watermarks: an exact continuation).
void RestoreFrom(StreamOperator& op, const std::string& bytes);

/// Writes `op`'s incremental checkpoint `id` (checkpointing.incremental: native RocksDB state with
/// its SST files under `storage.dir()/shared`) into `storage` as subtask 0 of `operator_id`, as a
/// task does, and completes it.
void WriteIncrementalCheckpoint(StreamOperator& op, CheckpointStorage& storage,
                                const std::string& operator_id, int64_t id);
/// Restores `op` (opened, not yet initialized) from subtask 0 of `operator_id` in `cp`, its
/// watermarks too.
void RestoreFromCheckpoint(StreamOperator& op, const CompletedCheckpoint& cp,
                           const std::string& operator_id);

}  // namespace tidemark::testing

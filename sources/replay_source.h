#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "runtime/core/errors.h"
#include "runtime/core/row.h"
#include "sources/source_reader.h"

namespace tidemark {

/// Largest replay file: it is read whole, into memory, when the job is compiled.
inline constexpr int64_t kMaxReplayFileBytes = int64_t{64} << 20;

/// `until` is earlier than the recording's last arrival (a compile error at the `until` key).
class ReplayUntilError : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

/// Replays a recording (`source.type: replay`): a JSON Lines file in which every line is one
/// arrival, in non-decreasing `at` order:
///
/// ```
/// {"split": "a", "at": 1200, "record": {"ts": 5000, "v": 1}}   // record arrives at 1.2 s
/// {"split": "a", "at": 3000, "idle": true}                     // the reader marks split a idle
/// {"split": "a", "at": 3500, "active": true}                   // ... and active again
/// {"split": "b", "at": 4000, "end": true}                      // split b finishes
/// {"at": 9000}                                                 // nothing; input lasts until 9 s
/// ```
///
/// `at` is processing time in ms since the reader started; the reader waits for it with
/// `WakeUpAt`, so under `pipeline.clock: virtual` a replay job is a pure function of the file,
/// periodic watermarks and idleness timeouts included. The splits are the distinct `split`
/// values, in order of first appearance; a reader registers all of its splits on its first poll
/// and releases a split at its `end` line (else when the whole input ends). Lines without a split
/// go to every reader. `record` is read against the declared schema like a `file` source's JSON
/// line (the first timestamp field is the source timestamp); a record that does not fit goes to
/// side output `errors` at its arrival. A malformed envelope (invalid JSON, `at` missing, negative
/// or going back, no `record`/`idle`/`active`/`end` with a split) is a mistake in the recording
/// and fails compilation with the file and line. A split paused for watermark alignment keeps its
/// lines (their `at` passes meanwhile); once resumed they come at once, before later lines of
/// other splits. The whole file is read when the job is compiled, so it must be a regular file of
/// at most `kMaxReplayFileBytes`. `until` (ReplaySourceSpec::until_ms) appends a tick at that
/// time, so the input stays open until then (ReplayUntilError when it is before the last line).
/// Immutable; shared by the subtasks' readers.
class ReplaySource : public Source {
 public:
  /// A line of the recording, parsed.
  struct Event {
    enum class Kind { kRecord, kIdle, kActive, kEnd, kTick };
    Kind kind = Kind::kTick;
    int64_t line = 0;
    int64_t at_ms = 0;
    int split = -1;          ///< index into split_ids(); -1 for a tick
    std::optional<Row> row;  ///< kRecord: the row, or nullopt when it did not fit the schema
    std::string error;       ///< kRecord without row: why
    std::string text;        ///< kRecord: the record's JSON
  };

  /// `spec.replay.path` must already be resolved. Reads and checks the whole file; throws
  /// InvalidArgument (with path:line) for a malformed envelope or schema, IoError when the file
  /// cannot be read.
  explicit ReplaySource(const SourceSpec& spec);

  const Schema& schema() const override { return schema_; }
  std::vector<std::unique_ptr<SourceSplit>> CreateSplits() const override;
  std::unique_ptr<SourceReader> CreateReader(int subtask_index) const override;
  /// A split with its position (its first line not replayed) and the processing time the `at`s
  /// count from, so a restored reader replays the rest at the same times. A split that ended is
  /// not in a snapshot: lines after its `end` are then skipped rather than reported.
  std::unique_ptr<SourceSplit> RestoreSplit(StateReader& reader) const override;

  const std::vector<std::string>& split_ids() const { return split_ids_; }
  const std::vector<Event>& events() const { return events_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  Schema schema_;
  std::vector<std::string> split_ids_;
  std::vector<Event> events_;
};

}  // namespace tidemark

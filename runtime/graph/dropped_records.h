#pragma once

#include <string>
#include <vector>

#include "runtime/graph/job_execution.h"

namespace tidemark {

/// What happened to records a job did not turn into results, one line per kind and operator, for
/// the end of `tidemark run` (stderr), `tidemark status` and `tidemark logs` (the daemon's
/// `dropped-records`). Counts are summed over the operator's subtasks; the first place is the note
/// of the lowest subtask that has one. Kinds, in this order per operator:
/// - `numInputErrors` + note `firstInputError`:
///   `source: 4 input records rejected; first: jobs/data/bad_input.csv:3: expected 3 fields, got 2`
/// - `numRecordsWithoutTimestamp` + note `firstRecordWithoutTimestamp`:
///   `source: 1 record without timestamp; first: data.csv:7: no timestamp: ...`
/// - `numLateRecordsDropped` + note `firstLateRecordDropped`:
///   `windows: 3 late records dropped; first: event time 1.5s behind watermark 2.999s`
/// - `numRecordsSendErrors` (a sink's records not delivered): `out: 2 records not delivered`
/// Zero counts give no line; a job that dropped nothing gives none at all. Pure function.
std::vector<std::string> DroppedRecordLines(const std::vector<SubtaskMetrics>& metrics);

/// Operators whose keyed state stayed on the heap although the job asked for the RocksDB state
/// backend (their note `stateBackendFallback`), one line per operator, for the end of `tidemark
/// run` (stderr):
/// `w: keyed state on the heap, not in RocksDB: aggregate 'sum_v' has no RocksDB form (...)`.
/// None when every operator's state is where the job asked. Pure function.
std::vector<std::string> StateBackendFallbackLines(const std::vector<SubtaskMetrics>& metrics);

}  // namespace tidemark

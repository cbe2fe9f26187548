#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "tools/bench/baselines.h"

namespace tidemark::bench {

/// Most aggregates of a window the file baseline reproduces.
inline constexpr size_t kMaxBaselineAggregates = 4;

/// The parts of a file benchmark job (a JSON Lines `file` source -> [keyed tumbling event-time
/// window] -> `checksum` sink, e.g. jobs/bench/events_*.yaml) that the hand-written file
/// baseline reproduces.
struct FileBenchPlan {
  std::vector<SchemaFieldSpec> schema;  ///< the source's fields, in order (the scan's checksum)
  std::string timestamp_field;          ///< the watermark strategy's event-time field
  int64_t max_out_of_orderness_ms = 0;  ///< bounded-out-of-orderness bound
  std::optional<WindowSpec> window;     ///< tumbling, keyed by `key_field`; count / int64 sum
  std::string key_field;                ///< a string field of the schema
  int parallelism = 1;                  ///< of the source (the baseline itself is one thread)
  std::string unsupported;              ///< non-empty: why no baseline reproduces this job
};

/// Extracts the plan of `job` (its file path is not read); never throws (sets `unsupported`).
FileBenchPlan MakeFileBenchPlan(const JobSpec& job);

/// The hand-written limit for a file job, on one thread: the whole file loaded into a padded
/// buffer, simdjson On-Demand `iterate_many` over its lines (compiled for AVX2 like the source's
/// fast path; the portable kernel otherwise), each object's fields matched to the schema, and
/// then either every record checksummed (scan) or an `absl::flat_hash_map<std::string, {count,
/// sum}>` per open window, fired when the bounded-out-of-orderness watermark (max ts - bound - 1)
/// passes its end, each result row (key, window_start, window_end, aggregates) checksummed as
/// the `checksum` sink does. Lines it cannot read are counted in `errors` and skipped; a record
/// of a window already fired is dropped as late. `seconds` includes reading the file.
/// Throws std::runtime_error when the file cannot be read.
struct FileBaselineResult : BaselineResult {
  int64_t records = 0;  ///< lines read as records
  int64_t errors = 0;   ///< lines skipped
  int64_t late = 0;     ///< records dropped as late
};
FileBaselineResult RunFileBaseline(const FileBenchPlan& plan, const std::string& path);

}  // namespace tidemark::bench

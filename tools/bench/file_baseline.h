#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

/// The scan baseline's per-record work on one JSON value at a time (the Kafka baseline's record
/// values, tools/bench/kafka_baseline.h): the value copied into a padded buffer, simdjson
/// On-Demand `iterate` (AVX2 kernel, as RunFileBaseline), its fields matched to `schema`, and
/// the record hashed into the checksum exactly as RunFileBaseline's scan does, so both give the
/// same checksum for the same records in any order. A value that is not such an object is
/// counted in `errors()`. One thread. The constructor throws std::runtime_error on a CPU without
/// AVX2.
class JsonValueScan {
 public:
  explicit JsonValueScan(const std::vector<SchemaFieldSpec>& schema);
  ~JsonValueScan();
  JsonValueScan(const JsonValueScan&) = delete;
  JsonValueScan& operator=(const JsonValueScan&) = delete;

  void Add(std::string_view value);
  int64_t records() const;
  int64_t errors() const;
  uint64_t checksum() const;

  struct Impl;

 private:
  Impl* impl_ = nullptr;  // owned; made and destroyed in the AVX2-compiled part
};

}  // namespace tidemark::bench

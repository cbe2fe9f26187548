#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/job_spec.h"

namespace tidemark::bench {

/// What a hand-written baseline computed: how many records reached its sink and their checksum
/// (runtime/core/checksum.h: the same function the `checksum` sink uses), plus its wall time.
struct BaselineResult {
  int64_t sink_records = 0;
  uint64_t checksum = 0;
  double seconds = 0;
  /// Hash aggregation only: the most bytes its open windows' tables held allocated (slot array
  /// and control bytes of each table's capacity) and the most keys they held.
  int64_t state_memory_bytes = 0;
  int64_t state_keys = 0;
};

/// The bytes an `absl::flat_hash_map` holds allocated: one slot and one control byte per unit of
/// capacity plus a group's width of cloned control bytes (absl's layout); nothing when empty.
/// The same model measures the baseline's tables and the window operator's keyed state.
template <typename Map>
int64_t FlatTableBytes(const Map& m) {
  const size_t cap = m.capacity();
  return cap == 0 ? 0 : static_cast<int64_t>(cap * (sizeof(typename Map::value_type) + 1) + 16);
}

/// The parts of a benchmark job the baselines reproduce, read from its JobSpec: the generator,
/// the map/filter chain in order, and an optional keyed window.
struct BenchPlan {
  SourceSpec generator;
  std::vector<OperatorSpec> chain;     ///< map / filter operators, source to sink order
  std::optional<OperatorSpec> window;  ///< keyed window (tumbling | sliding | session), if any
  int parallelism = 1;                 ///< of the source
  std::string unsupported;             ///< non-empty: why no baseline reproduces this job
};

/// Extracts the plan; never throws (sets `unsupported` instead).
BenchPlan MakeBenchPlan(const JobSpec& job);

/// (a) The fused loop: generate -> one virtual call per map/filter operator -> checksum, on
/// `plan.parallelism` threads (each its subtask's records).
BaselineResult RunFusedLoop(const BenchPlan& plan);
/// (b) The raw channel: records made on one thread cross one boost::lockfree::spsc_queue in
/// batches of 256 to a second thread that applies the chain and checksums (per subtask pair).
BaselineResult RunRawChannel(const BenchPlan& plan);
/// (c) Hash-map aggregation of the keyed window over the same records, single-threaded: the
/// practical limit of a hand-written loop, `absl::flat_hash_map<int64_t, accumulators>` per open
/// window (sessions: one map of open sessions), accumulators inline; requires `plan.window`. Emits
/// the window operator's output rows (key, window_start, window_end, aggregates) into the checksum.
BaselineResult RunHashAggregation(const BenchPlan& plan);

}  // namespace tidemark::bench
